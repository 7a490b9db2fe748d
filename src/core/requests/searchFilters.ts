import { isAddress, isHash } from 'viem';
import type { RequestFeatureFilter, SearchRequestFilters, StoredCurrency } from '../../store/requestFilters.js';
import { chainCurrencies } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { parseFilterGroups, requestTypes } from './filterGroups.js';
import { NO_REASON } from './statusRules.js';
import type { RequestFeature } from './types.js';

/*
 * The reference's `/requests/v3` search parameters, checked and turned into the store's filters. A parameter
 * the gateway cannot apply is refused with 400 naming it, never ignored: an unfiltered page that looks
 * filtered is worse than an error.
 */

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
  /** Bounds of the claimed deposit's origin-chain block, inclusive. */
  startBlock?: number | undefined;
  endBlock?: number | undefined;
  /** Bounds of the fill time (deposit seen to fill succeeded), seconds, inclusive; only filled requests match. */
  fillTimeMin?: number | undefined;
  fillTimeMax?: number | undefined;
  /** Bounds of the app fees' USD value at quote time, inclusive (decimal USD); only requests with app fees match. */
  appFeesAmountUsdMin?: number | undefined;
  appFeesAmountUsdMax?: number | undefined;
  /** A refund fail reason; `N/A` selects requests whose refund did not fail. */
  refundFailReason?: string | undefined;
  /** Any of these features (the reference's comma list, or items). */
  features?: string | readonly string[] | undefined;
  /** Private chains to include: this gateway has none, so any list changes nothing (each item is still checked). */
  privateChainsToInclude?: string | undefined;
  /** The reference's JSON filter groups (see `filterGroups.ts`), AND-ed with the other parameters. */
  filters?: string | undefined;
}

/**
 * The store filters for the search parameters.
 *
 * @throws `INVALID_INPUT` (400) for a malformed `filters` (see `parseFilterGroups`), a malformed hash, an unknown
 *   `requestType` or an inverted `amountUsd` range; `INVALID_ADDRESS` (400) for a currency address that is not
 *   an EVM address. Each names the parameter in `errorData`.
 */
export function searchFilters(ctx: CoreContext, params: RequestSearchParameters): SearchRequestFilters {
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
  checkRange(filters.amountUsdMinMicros, filters.amountUsdMaxMicros, 'amountUsdMin', 'amountUsdMax');
  if (params.startBlock !== undefined) filters.startBlock = wholeNumber(params.startBlock, 'startBlock');
  if (params.endBlock !== undefined) filters.endBlock = wholeNumber(params.endBlock, 'endBlock');
  checkRange(filters.startBlock, filters.endBlock, 'startBlock', 'endBlock');
  // Seconds to the stored milliseconds, rounded inward so that the bounds stay inclusive of what they name.
  if (params.fillTimeMin !== undefined)
    filters.fillTimeMinMs = Math.ceil(nonNegative(params.fillTimeMin, 'fillTimeMin') * 1000);
  if (params.fillTimeMax !== undefined)
    filters.fillTimeMaxMs = Math.floor(nonNegative(params.fillTimeMax, 'fillTimeMax') * 1000);
  checkRange(params.fillTimeMin, params.fillTimeMax, 'fillTimeMin', 'fillTimeMax');
  if (params.appFeesAmountUsdMin !== undefined)
    filters.appFeesUsdMinMicros = usdMicros(params.appFeesAmountUsdMin, 'appFeesAmountUsdMin');
  if (params.appFeesAmountUsdMax !== undefined)
    filters.appFeesUsdMaxMicros = usdMicros(params.appFeesAmountUsdMax, 'appFeesAmountUsdMax');
  checkRange(filters.appFeesUsdMinMicros, filters.appFeesUsdMaxMicros, 'appFeesAmountUsdMin', 'appFeesAmountUsdMax');
  if (params.refundFailReason !== undefined) {
    if (!refundFailReasons.includes(params.refundFailReason)) {
      throw new GatewayError('INVALID_INPUT', `refundFailReason must be one of ${refundFailReasons.join(', ')}`, {
        data: 'refundFailReason',
      });
    }
    filters.refundFailReason = params.refundFailReason === NO_REASON ? null : params.refundFailReason;
  }
  if (params.features !== undefined) filters.features = featureFilters(params.features);
  if (params.privateChainsToInclude !== undefined) privateChains(params.privateChainsToInclude);
  if (params.filters !== undefined) filters.matching = parseFilterGroups(ctx, params.filters);
  return filters;
}

/** The refund fail reasons of the contract's enum (`N/A`: none). */
const refundFailReasons: readonly string[] = [
  NO_REASON,
  'AMOUNT_TOO_LOW_TO_REFUND',
  'NEGATIVE_NEW_AMOUNT_AFTER_FEES',
  'SWAP_CURRENCY_NOT_ON_ORIGIN',
  'REFUND_RECIPIENT_IS_VASP',
  'MANUAL_REFUND_REQUIRED',
  'INSUFFICIENT_BALANCE_FOR_REFUND',
];

/** Every feature the reference names, and what the store can match of it (null: no request here has it). */
const featureFilterOf: Record<RequestFeature, RequestFeatureFilter | null> = {
  gasless_execution: null,
  gasless_swap: null,
  fast_fill: null,
  gas_top_up: 'gas_top_up',
  fixed_rate: null,
  app_fees: 'app_fees',
  deposit_address: 'deposit_address',
};

/**
 * `features` as the store's filter: any of the named features. A feature the gateway never records (no request
 * here has it) matches nothing, as it would on the reference for requests without it.
 *
 * @throws `INVALID_INPUT` (400) for an empty list or a name the reference does not define.
 */
function featureFilters(value: string | readonly string[]): RequestFeatureFilter[] {
  const names = (typeof value === 'string' ? value.split(',') : value).map((name) => name.trim()).filter(Boolean);
  if (names.length === 0) throw new GatewayError('INVALID_INPUT', 'features must name a feature', { data: 'features' });
  const matched = new Set<RequestFeatureFilter>();
  for (const name of names) {
    if (!Object.hasOwn(featureFilterOf, name)) {
      throw new GatewayError(
        'INVALID_INPUT',
        `features must be a comma-separated list of ${Object.keys(featureFilterOf).join(', ')}; got '${name}'`,
        { data: 'features' },
      );
    }
    const filter = featureFilterOf[name as RequestFeature];
    if (filter !== null) matched.add(filter);
  }
  return [...matched];
}

/** Checks the reference's comma list of private chain ids (UUIDs); the gateway has none to include. */
function privateChains(value: string): void {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  for (const item of value.split(',').map((part) => part.trim())) {
    if (!uuid.test(item)) {
      throw new GatewayError('INVALID_INPUT', `privateChainsToInclude must be a comma-separated list of chain UUIDs`, {
        data: 'privateChainsToInclude',
      });
    }
  }
}

/** @throws `INVALID_INPUT` (400) naming `minName` when both bounds are given and the lower one is larger. */
function checkRange<T extends number | bigint>(
  min: T | undefined,
  max: T | undefined,
  minName: string,
  maxName: string,
) {
  if (min !== undefined && max !== undefined && min > max) {
    throw new GatewayError('INVALID_INPUT', `${minName} is larger than ${maxName}`, { data: minName });
  }
}

function nonNegative(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0)
    throw new GatewayError('INVALID_INPUT', `${name} must be a non-negative number`, { data: name });
  return value;
}

function wholeNumber(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 0)
    throw new GatewayError('INVALID_INPUT', `${name} must be a non-negative integer`, { data: name });
  return value;
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
