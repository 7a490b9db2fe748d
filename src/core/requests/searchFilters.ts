import { isAddress, isHash } from 'viem';
import type { RequestTypeFilter, SearchRequestFilters, StoredCurrency } from '../../store/requestFilters.js';
import { chainCurrencies } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';

/*
 * The reference's `/requests/v3` search parameters, checked and turned into the store's filters. A parameter
 * the gateway cannot apply is refused with 400 naming it, never ignored: an unfiltered page that looks
 * filtered is worse than an error.
 */

/** Reference parameters the store cannot apply (what each would need is in docs/api-notes.md). */
export const unsupportedRequestFilters = [
  'startBlock',
  'endBlock',
  'fillTimeMin',
  'fillTimeMax',
  'appFeesAmountUsdMin',
  'appFeesAmountUsdMax',
  'refundFailReason',
  'features',
  'filters',
  'privateChainsToInclude',
] as const;
export type UnsupportedRequestFilter = (typeof unsupportedRequestFilters)[number];

export interface RequestSearchParameters {
  /** A request id, order id, wallet or transaction hash (exact, any letter case). */
  term?: string | undefined;
  depositTxHash?: string | undefined;
  fillTxHash?: string | undefined;
  refundTxHash?: string | undefined;
  /** Any recorded transaction hash (v2 `hash`, GraphQL `txHash`). */
  txHash?: string | undefined;
  /** `Bridge`, `Crosschain Swap`, `Same-chain Swap`, `Send`, `Wrap`, `Unwrap`, `Call` (any letter case). */
  requestType?: string | undefined;
  currencyInChainId?: number | undefined;
  currencyOutChainId?: number | undefined;
  currencyInAddress?: string | undefined;
  currencyOutAddress?: string | undefined;
  /** A symbol on any chain, any letter case. */
  currencyInSymbol?: string | undefined;
  currencyOutSymbol?: string | undefined;
  /** Bounds of the input's USD value at quote time, inclusive (decimal USD). */
  amountUsdMin?: number | undefined;
  amountUsdMax?: number | undefined;
  unsupported?: Partial<Record<UnsupportedRequestFilter, unknown>> | undefined;
}

const requestTypes: Record<string, RequestTypeFilter> = {
  bridge: { operation: 'bridge' },
  'crosschain swap': { operation: 'swap', chains: 'cross' },
  'same-chain swap': { operation: 'swap', chains: 'same' },
  send: { operation: 'send' },
  wrap: { operation: 'wrap' },
  unwrap: { operation: 'unwrap' },
  call: { operation: 'call' },
};

/**
 * The store filters for the search parameters.
 *
 * @throws `INVALID_INPUT` (400) for a parameter the gateway cannot apply, a malformed hash, an unknown
 *   `requestType` or an inverted `amountUsd` range; `INVALID_ADDRESS` (400) for a currency address that is not
 *   an EVM address. Each names the parameter in `errorData`.
 */
export function searchFilters(ctx: CoreContext, params: RequestSearchParameters): SearchRequestFilters {
  for (const name of unsupportedRequestFilters) {
    if (params.unsupported?.[name] !== undefined) {
      throw new GatewayError('INVALID_INPUT', `Filtering requests by ${name} is not supported by this gateway`, {
        data: name,
      });
    }
  }
  const filters: SearchRequestFilters = {};
  if (params.term !== undefined && params.term.trim() !== '') filters.term = params.term;
  for (const name of ['depositTxHash', 'fillTxHash', 'refundTxHash', 'txHash'] as const) {
    const value = params[name];
    if (value === undefined) continue;
    if (!isHash(value))
      throw new GatewayError('INVALID_INPUT', `${name} must be a transaction hash (0x and 64 hex digits)`, {
        data: name,
      });
    filters[name] = value;
  }
  if (params.requestType !== undefined) {
    const type = requestTypes[params.requestType.trim().toLowerCase()];
    if (type === undefined) {
      throw new GatewayError(
        'INVALID_INPUT',
        `requestType must be one of Bridge, Crosschain Swap, Same-chain Swap, Send, Wrap, Unwrap, Call`,
        {
          data: 'requestType',
        },
      );
    }
    filters.requestTypes = [type];
  }
  if (params.currencyInChainId !== undefined) filters.currencyInChainId = params.currencyInChainId;
  if (params.currencyOutChainId !== undefined) filters.currencyOutChainId = params.currencyOutChainId;
  const currencyIn = currencies(ctx, 'currencyIn', params.currencyInAddress, params.currencyInSymbol);
  if (currencyIn !== undefined) filters.currencyIn = currencyIn;
  const currencyOut = currencies(ctx, 'currencyOut', params.currencyOutAddress, params.currencyOutSymbol);
  if (currencyOut !== undefined) filters.currencyOut = currencyOut;
  if (params.amountUsdMin !== undefined) filters.amountUsdMinMicros = usdMicros(params.amountUsdMin, 'amountUsdMin');
  if (params.amountUsdMax !== undefined) filters.amountUsdMaxMicros = usdMicros(params.amountUsdMax, 'amountUsdMax');
  if (
    filters.amountUsdMinMicros !== undefined &&
    filters.amountUsdMaxMicros !== undefined &&
    filters.amountUsdMinMicros > filters.amountUsdMaxMicros
  ) {
    throw new GatewayError('INVALID_INPUT', 'amountUsdMin is larger than amountUsdMax', { data: 'amountUsdMin' });
  }
  return filters;
}

/**
 * An address filter of the history (`user`, `recipient`, `depositAddress`): every chain here is EVM, so
 * anything else is a mistake to report, not a wallet without requests.
 *
 * @throws `INVALID_ADDRESS` (400) naming the parameter.
 */
export function checkAddressFilter(value: string | undefined, name: string): void {
  if (value !== undefined && !isAddress(value, { strict: false })) {
    throw new GatewayError('INVALID_ADDRESS', `${name} must be an EVM address (0x and 40 hex digits), got '${value}'`, {
      data: name,
    });
  }
}

/**
 * The currencies one side of a request may be in: an address (on every chain, the zero address being each
 * chain's native currency), a symbol (every configured currency with it), or both (both must hold).
 */
function currencies(
  ctx: CoreContext,
  side: string,
  address: string | undefined,
  symbol: string | undefined,
): StoredCurrency[] | undefined {
  if (address === undefined && symbol === undefined) return undefined;
  if (address !== undefined) checkAddressFilter(address, `${side}Address`);
  const wantedAddress = address?.toLowerCase();
  const wantedSymbol = symbol?.trim().toLowerCase();
  const matches: StoredCurrency[] = [];
  for (const chain of ctx.config.chains) {
    for (const currency of chainCurrencies(chain)) {
      if (wantedSymbol !== undefined && currency.symbol.toLowerCase() !== wantedSymbol) continue;
      if (wantedAddress !== undefined && currency.address.toLowerCase() !== wantedAddress) continue;
      matches.push({ chainId: chain.id, address: currency.address.toLowerCase() });
    }
  }
  // An address the catalogue does not list may still be a request's currency (a delisted token): match it as is.
  if (matches.length === 0 && wantedAddress !== undefined && wantedSymbol === undefined) {
    return ctx.config.chains.map((chain) => ({ chainId: chain.id, address: wantedAddress }));
  }
  return matches;
}

/** Decimal USD as micro-USD, rounded toward zero. */
function usdMicros(value: number, name: string): bigint {
  if (!Number.isFinite(value) || value < 0)
    throw new GatewayError('INVALID_INPUT', `${name} must be a non-negative number`, { data: name });
  const [whole, fraction = ''] = value.toFixed(6).split('.');
  return BigInt(whole!) * 1_000_000n + BigInt(fraction.padEnd(6, '0'));
}
