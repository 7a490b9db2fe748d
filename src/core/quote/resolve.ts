import { getAddress, isAddress, isHex, zeroAddress, type Address } from 'viem';
import { parseAddress, parseChainId, parseInteger, parseUint } from '../inputs.js';
import { refuseGatewayAddress } from '../chains/gatewayAddresses.js';
import { chainCurrencies, requireChain } from '../chains/requireChain.js';
import type { ChainConfig, CurrencyConfig } from '../chains/types.js';
import type { CoreContext } from '../context.js';
import { GatewayError, type ErrorCode } from '../errors.js';
import { classifyRoute } from '../fees/classifyRoute.js';
import type { ResolvedRoute, SwapSources } from '../vocabulary/route.js';
import type { DexSource } from '../dex/poolState.js';
import { swapSourcesOf } from '../chains/dexSources.js';
import type { DestinationCall } from '../fill/fillTransaction.js';
import { refuseBurnAddress } from '../burnAddresses.js';
import { SWAP_SOURCE } from '../chains/dexSources.js';
import { executorOf } from './originSwap.js';
import {
  unsupportedQuoteOptions,
  type QuoteDetails,
  type QuoteParameters,
  type UnsupportedQuoteOption,
} from './types.js';

const BPS_PATTERN = /^(0|[1-9][0-9]{0,4})$/;

/**
 * Validates a quote request against the catalogue, in the order a client can act on: malformed options and
 * addresses first, then chains, currencies and the route. Throws the reference's error codes.
 */
export function resolveRoute(ctx: CoreContext, params: QuoteParameters): ResolvedRoute {
  checkNumbers(params);
  rejectUnsupportedOptions(params);
  const depositAddress = checkDepositAddressOptions(params);

  const user = parseAddress(params.user, 'user');
  refuseGatewayAddress(ctx, user, 'user');
  const recipient = params.recipient === undefined ? user : parseAddress(params.recipient, 'recipient');
  // A deposit address without `refundTo` (open) refunds the detected depositor, as the zero address asks.
  const refundTo =
    params.refundTo === undefined
      ? depositAddress === null
        ? user
        : zeroAddress
      : parseAddress(params.refundTo, 'refundTo');
  if (params.referrerAddress !== undefined) parseAddress(params.referrerAddress, 'referrerAddress');
  for (const [index, fee] of (params.appFees ?? []).entries()) {
    if (fee.recipient === undefined || fee.fee === undefined) {
      throw new GatewayError('INVALID_INPUT', `appFees[${index}] needs both recipient and fee`, {
        data: `appFees/${index}`,
      });
    }
    const feeRecipient = parseAddress(fee.recipient, `appFees[${index}].recipient`);
    refuseBurnAddress(feeRecipient, `appFees[${index}].recipient`);
    refuseGatewayAddress(ctx, feeRecipient, `appFees[${index}].recipient`);
  }
  refuseBurnAddress(recipient, 'recipient', params.recipient === undefined ? 'defaults to user' : undefined);
  refuseGatewayAddress(ctx, recipient, 'recipient', params.recipient === undefined ? 'defaults to user' : undefined);
  // The zero address as `refundTo` of a deposit address means "the detected depositor" (the reference's opt-in).
  if (depositAddress === null || refundTo !== zeroAddress) {
    refuseBurnAddress(refundTo, 'refundTo', params.refundTo === undefined ? 'defaults to user' : undefined);
    refuseGatewayAddress(ctx, refundTo, 'refundTo', params.refundTo === undefined ? 'defaults to user' : undefined);
  }
  const slippage = parseSlippage(params.slippageTolerance, 'slippageTolerance');
  parseSlippage(params.latePaymentSlippageTolerance, 'latePaymentSlippageTolerance');

  const origin = findChain(ctx, params.originChainId, 'origin');
  const destination = findChain(ctx, params.destinationChainId, 'destination');
  if (!destination.depositEnabled) {
    throw new GatewayError(
      'CHAIN_DISABLED',
      `Chain ${destination.id} (${destination.displayName}) does not accept fills as a destination`,
    );
  }

  if (depositAddress !== null && origin.contracts.depositAddressFactory === undefined) {
    throw new GatewayError(
      'UNSUPPORTED_ROUTE',
      `Deposit addresses are not available on chain ${origin.id} (${origin.displayName}): no deposit-address factory is configured`,
    );
  }
  const currencyIn = findCurrency(origin, params.originCurrency, 'INVALID_INPUT_CURRENCY', 'input');
  const currencyOut = findCurrency(destination, params.destinationCurrency, 'INVALID_OUTPUT_CURRENCY', 'output');
  // A swap between two currencies of one chain may go through the chain's DEX (the user's own router transaction,
  // `sameChainDex.ts`), which decides for currencies the solver does not hold and for the swap sources.
  const dexEligible =
    origin.id === destination.id && currencyIn.id !== currencyOut.id && (params.txs ?? []).length === 0;
  if (!currencyIn.solver && !dexEligible) {
    throw new GatewayError(
      'INVALID_INPUT_CURRENCY',
      `${currencyIn.symbol} on chain ${origin.id} is listed but not accepted as an input`,
    );
  }

  if (isTokenOrGatewayContract(destination, recipient)) {
    throw new GatewayError(
      'INVALID_RECIPIENT',
      `Recipient ${recipient} is a token or gateway contract on chain ${destination.id}; funds sent there would be lost`,
    );
  }

  const calls = parseCalls(params, destination);
  const sameChain = origin.id === destination.id;
  const route = { origin: routeCurrency(origin, currencyIn), destination: routeCurrency(destination, currencyOut) };
  const sameCurrency = currencyIn.id === currencyOut.id;
  const routeClass = classifyRoute({ ...route, operation: 'swap' });
  const sameAsset = routeClass === 'bridge';
  const operation = operationOf({ calls, sameChain, sameCurrency, sameAsset, currencyIn });

  if (operation === 'send' && recipient === user) {
    throw new GatewayError(
      'UNSUPPORTED_ROUTE',
      'Origin and destination are the same currency on the same chain, to the same address: there is nothing to do',
    );
  }
  // The reference converts native and wrapped through the wrapped token's own contract, which credits the caller:
  // a wrap or unwrap pays the user itself (an app that wants it elsewhere quotes a call, or a send afterwards).
  if ((operation === 'wrap' || operation === 'unwrap') && recipient !== user && depositAddress === null) {
    throw new GatewayError(
      'USER_RECIPIENT_MISMATCH',
      `A ${operation} on chain ${origin.id} pays the user itself: recipient ${recipient} must be the user ${user}`,
      { data: 'recipient' },
    );
  }
  if (sameAsset && !sameChain && (!currencyIn.supportsBridging || !currencyOut.supportsBridging)) {
    throw new GatewayError(
      'UNSUPPORTED_ROUTE',
      `${currencyIn.symbol} cannot be bridged between chain ${origin.id} and chain ${destination.id}`,
    );
  }
  // A same-chain swap the pools may serve was planned before (`sameChainDex.ts`): what reaches here is the inventory's.
  const swapSources =
    sameAsset || dexEligible
      ? undefined
      : destinationSwapSources(ctx, params, { destination, currencyIn, currencyOut, sameChain, calls });

  const gasTopupUsdMicros = gasTopupOf(params, destination, currencyOut);
  const slippageBps =
    slippage ?? (sameAsset ? ctx.config.quote.defaultSlippageBps.bridge : ctx.config.quote.defaultSlippageBps.swap);
  return {
    origin,
    destination,
    currencyIn,
    currencyOut,
    user,
    recipient,
    refundTo,
    operation,
    routeClass,
    sameAsset,
    sameChain,
    calls,
    slippageBps,
    depositAddress,
    gasTopupUsdMicros,
    ...(swapSources === undefined ? {} : { swapSources }),
  };
}

/** The default top-up: USD 2, as the reference's. */
export const DEFAULT_GAS_TOPUP_USD_MICROS = 2_000_000n;
/** The largest top-up a quote may ask for (USD 100): the solver's native inventory pays it. */
export const MAX_GAS_TOPUP_USD_MICROS = 100_000_000n;

/**
 * The micro-USD value of the native gas a quote delivers with its fill: `topupGasAmount` (default USD 2) when
 * `topupGas` is set and the destination is eligible by the reference's rule (an EVM chain, which every chain of
 * this gateway is; a currency other than the chain's native one; the chain's `tokenSupport` `All` or the currency
 * bridgeable). An ineligible top-up is ignored rather than refused: the reference documents no error for it.
 */
function gasTopupOf(params: QuoteParameters, destination: ChainConfig, currencyOut: CurrencyConfig): bigint {
  const amount = params.topupGasAmount;
  if (amount !== undefined && params.topupGas !== true)
    throw new GatewayError('INVALID_INPUT', 'topupGasAmount requires topupGas: true', { data: 'topupGasAmount' });
  if (params.topupGas !== true) return 0n;
  const usdMicros =
    amount === undefined
      ? DEFAULT_GAS_TOPUP_USD_MICROS
      : parseUint(amount, 'topupGasAmount', { min: 1n, max: MAX_GAS_TOPUP_USD_MICROS });
  const eligible =
    currencyOut.address !== zeroAddress && (destination.tokenSupport === 'All' || currencyOut.supportsBridging);
  return eligible ? usdMicros : 0n;
}

/**
 * The reference's rules for deposit addresses (`useDepositAddress`, `strict`, `recoveryAddress`, `refundTo`):
 * open addresses take EXACT_INPUT and EXPECTED_OUTPUT only; strict ones need `refundTo`; no destination calls and
 * no fee-component sponsorship; `strict` and `recoveryAddress` only with `useDepositAddress`.
 */
function checkDepositAddressOptions(
  params: QuoteParameters,
): { type: 'strict' | 'open'; recoveryAddress: Address | null } | null {
  if (params.useDepositAddress !== true) {
    if (params.strict === true)
      throw new GatewayError('INVALID_INPUT', 'strict applies to deposit addresses: set useDepositAddress too', {
        data: 'strict',
      });
    if (params.recoveryAddress !== undefined)
      throw new GatewayError('INVALID_INPUT', 'recoveryAddress requires useDepositAddress', {
        data: 'recoveryAddress',
      });
    return null;
  }
  const strict = params.strict === true;
  if ((params.txs ?? []).length > 0)
    throw new GatewayError(
      'EXTRA_TXS_NOT_SUPPORTED',
      'Destination calls (txs) cannot be paid through a deposit address; leave out txs or useDepositAddress',
    );
  if (!strict && params.tradeType === 'EXACT_OUTPUT')
    throw new GatewayError(
      'INVALID_INPUT',
      'An open deposit address takes EXACT_INPUT or EXPECTED_OUTPUT; EXACT_OUTPUT needs strict: true',
      { data: 'tradeType' },
    );
  if (strict && params.refundTo === undefined)
    throw new GatewayError(
      'INVALID_INPUT',
      'A strict deposit address needs refundTo (the zero address refunds the detected depositor)',
      { data: 'refundTo' },
    );
  if (params.sponsoredFeeComponents !== undefined && params.sponsoredFeeComponents.length > 0)
    throw new GatewayError('INVALID_INPUT', 'sponsoredFeeComponents is not supported with deposit addresses', {
      data: 'sponsoredFeeComponents',
    });
  let recoveryAddress: Address | null = null;
  if (params.recoveryAddress !== undefined) {
    recoveryAddress = parseAddress(params.recoveryAddress, 'recoveryAddress');
    if (recoveryAddress === zeroAddress)
      throw new GatewayError('INVALID_ADDRESS', 'recoveryAddress cannot be the zero address', {
        data: 'recoveryAddress',
      });
  }
  return { type: strict ? 'strict' : 'open', recoveryAddress };
}

/**
 * Why each option the gateway cannot honour is refused, with the reference's code for that case where it has one
 * (`docs/api-notes.md`); `INVALID_INPUT` only where the reference has none.
 */
const unsupportedOptionRefusals: Record<UnsupportedQuoteOption, { code: ErrorCode; message: string }> = {
  fixedRate: {
    code: 'NO_QUOTES',
    message: 'This gateway gives no fixed-rate quotes; leave fixedRate out to get a quote at the current price',
  },
  authorizationList: {
    code: 'UNSUPPORTED_EXECUTION_TYPE',
    message:
      'EIP-7702 authorizations executed on the destination chain are not supported; for a gasless origin ' +
      'deposit use POST /execute',
  },
  gasLimitForDepositSpecifiedTxs: {
    code: 'INVALID_GAS_LIMIT_FOR_DEPOSIT_SPECIFIED_TXS',
    message:
      'Transactions executed during the deposit are not supported by this gateway, so a gas limit for them ' +
      'cannot be used; leave gasLimitForDepositSpecifiedTxs out',
  },
};

function rejectUnsupportedOptions(params: QuoteParameters): void {
  for (const option of unsupportedQuoteOptions) {
    const value = params.unsupported?.[option];
    const set =
      value !== undefined && value !== null && value !== false && !(Array.isArray(value) && value.length === 0);
    if (set) {
      const { code, message } = unsupportedOptionRefusals[option];
      throw new GatewayError(code, message, { data: option });
    }
  }
}

/**
 * The numbers of a quote request, whatever the transport sent (GraphQL's `BigInt` and `Int` are signed): amounts
 * are uint256, the option numbers within the contract's bounds. An amount of 0 passes here and is `AMOUNT_TOO_LOW`
 * once the route is known, as the reference answers.
 */
function checkNumbers(params: QuoteParameters): void {
  parseUint(params.amount, 'amount');
  for (const [index, tx] of (params.txs ?? []).entries()) {
    if (tx.value !== undefined) parseUint(tx.value, `txs[${index}].value`);
  }
  if (params.maxSubsidizationAmount !== undefined) parseUint(params.maxSubsidizationAmount, 'maxSubsidizationAmount');
  if (params.permitExpiry !== undefined) parseInteger(params.permitExpiry, 'permitExpiry', 1, 604_800);
  if (params.txsGasLimit !== undefined) parseInteger(params.txsGasLimit, 'txsGasLimit', 0, Number.MAX_SAFE_INTEGER);
  parseChainId(params.originChainId, 'originChainId');
  parseChainId(params.destinationChainId, 'destinationChainId');
}

function parseSlippage(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (!BPS_PATTERN.test(value) || Number(value) > 10_000) {
    throw new GatewayError(
      'INVALID_SLIPPAGE_TOLERANCE',
      `${field} must be an integer number of basis points from "0" to "10000", got '${value}'`,
    );
  }
  return Number(value);
}

function findChain(ctx: CoreContext, chainId: number, side: 'origin' | 'destination'): ChainConfig {
  const chain = requireChain(ctx, chainId, side);
  if (chain.disabled)
    throw new GatewayError('CHAIN_DISABLED', `The ${side} chain ${chainId} (${chain.displayName}) is disabled`);
  return chain;
}

/** A currency of `chain` by address (any casing; zero = native) or by symbol / currency id (any casing). */
function findCurrency(
  chain: ChainConfig,
  value: string,
  code: 'INVALID_INPUT_CURRENCY' | 'INVALID_OUTPUT_CURRENCY',
  side: 'input' | 'output',
): CurrencyConfig {
  const all = chainCurrencies(chain);
  const lower = value.toLowerCase();
  const found = isAddress(value, { strict: false })
    ? all.find((currency) => currency.address.toLowerCase() === lower)
    : all.find((currency) => currency.symbol.toLowerCase() === lower || currency.id === lower);
  if (found === undefined) {
    throw new GatewayError(
      code,
      `Invalid ${side} currency: '${value}' is not a currency of chain ${chain.id} (${chain.displayName})`,
    );
  }
  return found;
}

const routeCurrency = (chain: ChainConfig, currency: CurrencyConfig) => ({
  chainId: chain.id,
  currencyId: currency.id,
  symbol: currency.symbol,
});

function operationOf(route: {
  calls: DestinationCall[];
  sameChain: boolean;
  sameCurrency: boolean;
  sameAsset: boolean;
  currencyIn: CurrencyConfig;
}): QuoteDetails['operation'] {
  if (route.calls.length > 0) return 'call';
  if (route.sameChain && route.sameCurrency) return 'send';
  if (route.sameChain && route.sameAsset) return route.currencyIn.address === zeroAddress ? 'wrap' : 'unwrap';
  if (route.sameAsset) return 'bridge';
  return 'swap';
}

function isTokenOrGatewayContract(chain: ChainConfig, address: Address): boolean {
  const lower = address.toLowerCase();
  const contracts = Object.values(chain.contracts).filter((value): value is Address => typeof value === 'string');
  // The swap-deposit router's executor deposits whatever it holds with the next swap: never a recipient.
  if (chain.contracts.swapDepositRouter !== undefined) contracts.push(executorOf(chain.contracts.swapDepositRouter));
  return [...chain.currencies.map((currency) => currency.address), ...contracts].some(
    (candidate) => candidate.toLowerCase() === lower,
  );
}

function parseCalls(params: QuoteParameters, destination: ChainConfig): DestinationCall[] {
  const txs = params.txs ?? [];
  if (txs.length === 0) return [];
  if (params.tradeType === 'EXPECTED_OUTPUT') {
    throw new GatewayError(
      'EXTRA_TXS_NOT_SUPPORTED',
      'Calls (txs) are supported with EXACT_INPUT and EXACT_OUTPUT, not EXPECTED_OUTPUT',
    );
  }
  return txs.map((tx, index) => {
    if (tx.to === undefined || !isAddress(tx.to, { strict: false })) {
      throw new GatewayError('INVALID_EXTRA_TXS', `txs[${index}].to must be a contract address`, {
        data: `txs/${index}/to`,
      });
    }
    const data = tx.data ?? '0x';
    if (!isHex(data) || data.length % 2 !== 0) {
      throw new GatewayError('INVALID_EXTRA_TXS', `txs[${index}].data must be hex calldata with whole bytes`, {
        data: `txs/${index}/data`,
      });
    }
    const to = getAddress(tx.to);
    if (
      to.toLowerCase() === destination.contracts.onlyOwnerMulticaller.toLowerCase() ||
      to.toLowerCase() === destination.contracts.depository.toLowerCase()
    ) {
      throw new GatewayError('INVALID_EXTRA_TXS', `txs[${index}] calls a gateway contract only the solver may use`, {
        data: `txs/${index}/to`,
      });
    }
    return { to, data: data, value: tx.value ?? 0n };
  });
}

/**
 * The sources a swap may take its output from on the destination: the solver's inventory (when it holds the
 * currency) and the chain's DEXes (cross-chain swaps without calls, on a chain whose pools the gateway holds),
 * narrowed by `includedSwapSources` / `includedDestinationSwapSources` (each list given must name a source) and
 * `excludedSwapSources`. None left: `NO_SWAP_ROUTES_FOUND`, naming the pair, the chain and the sources.
 */
function destinationSwapSources(
  ctx: CoreContext,
  params: QuoteParameters,
  route: {
    destination: ChainConfig;
    currencyIn: CurrencyConfig;
    currencyOut: CurrencyConfig;
    sameChain: boolean;
    calls: DestinationCall[];
  },
): SwapSources {
  const { destination, currencyIn, currencyOut } = route;
  const offered = swapSourcesOf(destination);
  const lists = [params.includedSwapSources, params.includedDestinationSwapSources].filter(
    (list): list is ReadonlyArray<string> => list !== undefined && list.length > 0,
  );
  const allowed = offered.filter(
    (source) => lists.every((list) => list.includes(source)) && !(params.excludedSwapSources ?? []).includes(source),
  );
  const dexUsable =
    !route.sameChain && route.calls.length === 0 && ctx.dex?.chainIds().includes(destination.id) === true;
  const sources: SwapSources = {
    inventory: currencyOut.solver && allowed.includes(SWAP_SOURCE),
    dex: dexUsable ? allowed.filter((source): source is DexSource => source !== SWAP_SOURCE) : [],
  };
  if (!sources.inventory && sources.dex.length === 0) {
    const why = !currencyOut.solver
      ? `the solver holds no ${currencyOut.symbol} there and no DEX source may deliver it`
      : `no allowed source: this chain's sources are ${offered.map((s) => `'${s}'`).join(', ')}`;
    throw new GatewayError(
      'NO_SWAP_ROUTES_FOUND',
      `No swap route from ${currencyIn.symbol} to ${currencyOut.symbol} on chain ${destination.id} (${destination.displayName}): ${why}${allowed.length === offered.length ? '' : ` (sources allowed by the request: ${allowed.length === 0 ? 'none' : allowed.join(', ')})`}`,
    );
  }
  return sources;
}
