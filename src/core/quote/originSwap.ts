/**
 * Paying with a token the solver does not hold (a long-tail token such as LONG): the user's own transaction swaps
 * it on the origin chain's DEX into a currency the solver holds and bridges (the chain's native currency, through
 * WETH, or USDC) and deposits the whole output for the request (`contracts/SwapDepositRouter.sol`).
 *
 * The request is an ordinary order for the deposit currency: its `originCurrency` is that currency and its
 * `amountIn` the least the swap may deposit (the DEX output less `slippageTolerance`). The order is priced on that
 * minimum, so a deposit of only the minimum pays for it, and the deposit check, the refund (the deposit currency,
 * to the user), the fill, the re-pricing at fill and the ledger are those of any order in that currency: the solver
 * never pays out more than the deposit covers. A swap that pays more than the minimum deposits all of it; the fill
 * still delivers the quoted output (as for every order, a move in the user's favour stays with the solver). What
 * the user paid in the long-tail token is recorded in the stored quote (`quote.dex.origin`). Fees are charged in
 * the deposit currency: the long-tail token has no price of its own.
 */
import { encodeFunctionData, formatUnits, getContractAddress, zeroAddress, type Address, type Hex } from 'viem';
import { chainCurrencies } from '../chains/requireChain.js';
import { UNISWAP_V2_SOURCE, UNISWAP_V3_SOURCE } from '../chains/dexSources.js';
import { DEX_HUB_SYMBOLS, type ChainConfig, type CurrencyConfig } from '../chains/types.js';
import type { CoreContext } from '../context.js';
import { dexLegRecord, type DexLegRecord } from '../dex/legRecord.js';
import type { DexSource } from '../dex/poolState.js';
import type { DexRoute } from '../dex/route.js';
import { routerSwapCall } from '../dex/routerCalls.js';
import { GatewayError } from '../errors.js';
import { classifyRoute } from '../fees/classifyRoute.js';
import { amountOf } from '../fees/presentFees.js';
import { formatUsdMicros } from '../usd.js';
import { parseUint } from '../inputs.js';
import { toUsdMicros, type UsdPrice } from '../market.js';
import type { ResolvedRoute } from '../vocabulary/route.js';
import { rateOf } from './present.js';
import { approveStep } from './steps.js';
import type { Impact, QuoteDetails, QuoteParameters, QuoteStep } from './types.js';
import { swapDepositRouterAbi } from '../../../generated/contracts/SwapDepositRouter.js';
import { quoteCurrency } from '../vocabulary/amount.js';

/** Gas of the user's `swapAndDeposit` besides the swap's own (pull, approvals, checks, the deposit). */
const SWAP_DEPOSIT_OVERHEAD_GAS = 150_000n;
const APPROVE_GAS = 50_000n;
const BPS_PATTERN = /^(0|[1-9][0-9]{0,4})$/;

export interface OriginSwap {
  /** The token the user pays with. */
  currencyIn: CurrencyConfig;
  /** What the depository receives: a currency the solver holds (native when the swap ends in WETH). */
  deposit: CurrencyConfig;
  route: DexRoute;
  /** The least the swap may deposit: the order's `amountIn`. */
  minDeposit: bigint;
  /** The tolerance `minDeposit` was taken with (bps). */
  slippageBps: number;
  leg: DexLegRecord;
  /** `SwapDepositRouter` and the executor it created (the swap's recipient). */
  router: Address;
  executor: Address;
  /** The request as the rest of the quote prices it: an exact-input order of `minDeposit` of `deposit`. */
  params: QuoteParameters;
}

/**
 * The origin swap a quote needs, or null when it needs none (the input is a solver currency, the route is on one
 * chain, or the origin has no DEX or no swap-deposit router: the route's own checks then answer).
 *
 * @throws NO_SWAP_ROUTES_FOUND when no allowed source sells the input for a deposit currency; INVALID_INPUT for
 *         options a swapped deposit cannot take.
 */
export async function planOriginSwap(ctx: CoreContext, params: QuoteParameters): Promise<OriginSwap | null> {
  const origin = ctx.config.chains.find((chain) => chain.id === params.originChainId);
  if (origin === undefined || origin.disabled || params.originChainId === params.destinationChainId) return null;
  const currencyIn = lookup(origin, params.originCurrency);
  const router = origin.contracts.swapDepositRouter;
  if (currencyIn === undefined || currencyIn.solver || ctx.dex === undefined || router === undefined) return null;
  if (!ctx.dex.chainIds().includes(origin.id)) return null;
  refuseOptions(params, currencyIn, origin);
  const amountIn = parseUint(params.amount, 'amount');
  if (amountIn === 0n) throw new GatewayError('AMOUNT_TOO_LOW', 'Amount must be greater than zero');

  const sources = allowedSources(origin, params);
  const candidates = depositCandidates(origin);
  const quoteTo = (candidate: Candidate) => {
    const quote = ctx.dex!.quoteExactIn({
      chainId: origin.id,
      tokenIn: currencyIn.address,
      tokenOut: candidate.token,
      amountIn,
      sources,
    });
    return quote.ok && quote.route.amountOut > 0n ? [{ ...candidate, route: quote.route }] : [];
  };
  // The output's own asset, when the swap reaches it, is the deposit (the order is then a bridge): the other
  // candidates are priced only when it does not.
  const same = sameAssetCandidate(ctx, params, candidates);
  const preferred = same === undefined ? [] : quoteTo(same);
  const quoted = preferred.length > 0 ? preferred : candidates.filter((c) => c !== same).flatMap(quoteTo);
  const chosen = await choose(ctx, params, quoted);
  if (chosen === undefined) {
    throw new GatewayError(
      'NO_SWAP_ROUTES_FOUND',
      `No swap route sells ${currencyIn.symbol} for ${candidates.map((c) => c.currency.symbol).join(' or ') || 'a currency the solver holds'} on chain ${origin.id} (${origin.displayName}) through ${sources.join(', ') || 'no allowed source'}`,
    );
  }
  if (params.overridePriceImpact !== true && chosen.route.priceImpactBps > BigInt(ctx.config.quote.maxPriceImpactBps)) {
    throw new GatewayError(
      'SWAP_IMPACT_TOO_HIGH',
      `Swapping ${currencyIn.symbol} for ${chosen.currency.symbol} on chain ${origin.id} moves the pools by ${formatUnits(chosen.route.priceImpactBps, 2)}%, above the ${ctx.config.quote.maxPriceImpactBps / 100}% limit; send a smaller amount or set overridePriceImpact`,
    );
  }
  const slippageBps = slippageOf(ctx, params);
  const minDeposit = (chosen.route.amountOut * BigInt(10_000 - slippageBps)) / 10_000n;
  if (minDeposit === 0n)
    throw new GatewayError('AMOUNT_TOO_LOW', `${currencyIn.symbol} amount too small: the swap would deposit nothing`);
  const nativeOut = chosen.currency.address === zeroAddress;
  const leg = dexLegRecord(chosen.route, {
    minAmountOut: minDeposit,
    nativeIn: false,
    nativeOut,
    routerKind: origin.dex?.uniswapV3?.swapRouterKind ?? 'SwapRouter',
  });
  const { includedOriginSwapSources: _usedHere, ...rest } = params;
  return {
    currencyIn,
    deposit: chosen.currency,
    route: chosen.route,
    minDeposit,
    slippageBps,
    leg,
    router,
    executor: executorOf(router),
    params: { ...rest, originCurrency: chosen.currency.address, amount: minDeposit },
  };
}

/** The executor `SwapDepositRouter` created in its constructor (its first contract: nonce 1). */
export const executorOf = (router: Address): Address => getContractAddress({ from: router, nonce: 1n });

/** The stored quote's `dex` entry of an origin swap. */
export const originSwapRecord = (swap: OriginSwap) => ({ origin: swap.leg });

function lookup(chain: ChainConfig, value: string): CurrencyConfig | undefined {
  const lower = value.toLowerCase();
  return chainCurrencies(chain).find(
    (currency) =>
      currency.address.toLowerCase() === lower || currency.symbol.toLowerCase() === lower || currency.id === lower,
  );
}

function refuseOptions(params: QuoteParameters, currencyIn: CurrencyConfig, origin: ChainConfig): void {
  const refuse = (field: string, why: string) =>
    new GatewayError('INVALID_INPUT', `Paying with ${currencyIn.symbol} on chain ${origin.id} ${why}`, {
      data: field,
    });
  if (params.tradeType !== 'EXACT_INPUT')
    throw refuse('tradeType', 'swaps it on the origin chain first: the tradeType must be EXACT_INPUT');
  if (params.useDepositAddress === true)
    throw refuse('useDepositAddress', 'needs the swap in your own transaction: useDepositAddress is not available');
  if (params.usePermit === true)
    throw refuse('usePermit', 'needs the swap in your own transaction: usePermit is not available');
}

/** The DEX sources of the origin the swap may use: those configured, as the request includes and excludes them. */
function allowedSources(origin: ChainConfig, params: QuoteParameters): DexSource[] {
  const configured: DexSource[] = [
    ...(origin.dex?.uniswapV3 === undefined ? [] : [UNISWAP_V3_SOURCE as DexSource]),
    ...(origin.dex?.uniswapV2 === undefined ? [] : [UNISWAP_V2_SOURCE as DexSource]),
  ];
  const included = [params.includedOriginSwapSources, params.includedSwapSources].find(
    (list) => list !== undefined && list.length > 0,
  );
  return configured.filter(
    (source) =>
      (included === undefined || included.includes(source)) && !(params.excludedSwapSources ?? []).includes(source),
  );
}

interface Candidate {
  currency: CurrencyConfig;
  /** The token the swap ends in (WETH for the native currency). */
  token: Address;
}

/** What the swap may deposit: the hub currencies the solver holds (the native currency through WETH, USDC). */
function depositCandidates(origin: ChainConfig): Candidate[] {
  const currencies = chainCurrencies(origin);
  return DEX_HUB_SYMBOLS.flatMap((symbol): Candidate[] => {
    const token = currencies.find((currency) => currency.symbol === symbol && currency.address !== zeroAddress);
    if (token === undefined) return [];
    // The wrapped native token is deposited as native: the currency the solver bridges.
    const currency = symbol === 'WETH' ? origin.nativeCurrency : token;
    return currency.solver && currency.supportsBridging ? [{ currency, token: token.address }] : [];
  });
}

/** The candidate that is the same asset as the requested output, if any. */
function sameAssetCandidate(
  ctx: CoreContext,
  params: QuoteParameters,
  candidates: readonly Candidate[],
): Candidate | undefined {
  const destination = ctx.config.chains.find((chain) => chain.id === params.destinationChainId);
  const out = destination === undefined ? undefined : lookup(destination, params.destinationCurrency);
  if (destination === undefined || out === undefined) return undefined;
  return candidates.find(
    (candidate) =>
      classifyRoute({
        origin: { chainId: params.originChainId, currencyId: candidate.currency.id, symbol: candidate.currency.symbol },
        destination: { chainId: destination.id, currencyId: out.id, symbol: out.symbol },
        operation: 'swap',
      }) === 'bridge',
  );
}

/** Of the candidates the swap reaches, the one it turns into the most USD. */
async function choose<T extends Candidate & { route: DexRoute }>(
  ctx: CoreContext,
  params: QuoteParameters,
  quoted: T[],
): Promise<T | undefined> {
  if (quoted.length <= 1) return quoted[0];
  const values = await Promise.all(
    quoted.map(async (candidate) => {
      const price = await ctx.market.usdPrice(params.originChainId, candidate.currency);
      return toUsdMicros(candidate.route.amountOut, candidate.currency.decimals, price);
    }),
  );
  let best = 0;
  for (let i = 1; i < quoted.length; i++) if (values[i]! > values[best]!) best = i;
  return quoted[best];
}

function slippageOf(ctx: CoreContext, params: QuoteParameters): number {
  const given = params.slippageTolerance;
  // An invalid tolerance is refused by the route's checks, which run next.
  if (given !== undefined && BPS_PATTERN.test(given) && Number(given) <= 10_000) return Number(given);
  return ctx.config.quote.defaultSlippageBps.swap;
}

/** The origin gas of the user's transactions: the approval when short, and the swap with the deposit. */
export const originSwapGas = (swap: OriginSwap, allowance: bigint): bigint =>
  swap.route.gasEstimate + SWAP_DEPOSIT_OVERHEAD_GAS + (allowance < swap.route.amountIn ? APPROVE_GAS : 0n);

/** The calldata of the user's `swapAndDeposit` for request `requestId`, the swap valid until `deadline`. */
export function swapAndDepositCall(swap: OriginSwap, user: Address, requestId: Hex, deadline: number): Hex {
  const call = routerSwapCall(swap.route, {
    recipient: swap.executor,
    // The router checks the minimum on what it holds after the swap; the DEX router is asked for the same.
    amountOutMinimum: swap.minDeposit,
    deadline: BigInt(deadline),
    v3RouterKind: swap.leg.routerKind,
    nativeOut: swap.leg.nativeOut,
  });
  return encodeFunctionData({
    abi: swapDepositRouterAbi,
    functionName: 'swapAndDeposit',
    args: [
      swap.currencyIn.address,
      swap.route.amountIn,
      call.to,
      call.data,
      swap.deposit.address,
      swap.minDeposit,
      user,
      requestId,
    ],
  });
}

/**
 * The steps of an origin swap: `approve` of the input to the router when the allowance is short, then the one
 * `swapAndDeposit` call, whose item's `check` polls the status.
 */
export function buildOriginSwapSteps(p: {
  swap: OriginSwap;
  route: ResolvedRoute;
  requestId: Hex;
  allowance: bigint;
  deadline: number;
}): QuoteStep[] {
  const { swap, route, requestId } = p;
  const chainId = route.origin.id;
  const steps: QuoteStep[] = [];
  if (p.allowance < swap.route.amountIn) {
    steps.push(
      approveStep({
        description: `Approve ${swap.currencyIn.symbol} for the swap and deposit`,
        requestId,
        from: route.user,
        token: swap.currencyIn.address,
        spender: swap.router,
        amount: swap.route.amountIn,
        chainId,
      }),
    );
  }
  steps.push({
    id: 'deposit',
    action: 'Confirm transaction in your wallet',
    description: `Swapping ${swap.currencyIn.symbol} for ${swap.deposit.symbol} through ${swap.leg.source} and depositing it to the solver for ${route.currencyOut.symbol} on ${route.destination.displayName}`,
    kind: 'transaction',
    requestId,
    depositAddress: '',
    items: [
      {
        status: 'incomplete',
        data: {
          from: route.user,
          to: swap.router,
          data: swapAndDepositCall(swap, route.user, requestId, p.deadline),
          value: 0n,
          chainId,
        },
        check: { endpoint: `/intents/status/v3?requestId=${requestId}`, method: 'GET' },
      },
    ],
  });
  return steps;
}

/** The USD value of the input at the pools' mid price (it has no price feed), in the deposit currency's price. */
export const originSwapUsdIn = (swap: OriginSwap, depositPrice: UsdPrice): bigint =>
  toUsdMicros(swap.route.midAmountOut, swap.deposit.decimals, depositPrice);

/**
 * A quote's `details` with its origin swap shown: the input is what the user pays (valued at the pools' mid price),
 * the origin leg swaps it through the DEX into the deposit currency (whose minimum is what the order is priced on),
 * the swap impact adds the pools' price impact and the slippage margin to the solver's swap fee, and refunds return
 * the deposit currency.
 */
export function presentOriginSwap(
  details: QuoteDetails,
  swap: OriginSwap,
  p: { depositPrice: UsdPrice; userBalance: bigint; usd: { in: bigint; out: bigint; swap: bigint } },
): QuoteDetails {
  const usdIn = originSwapUsdIn(swap, p.depositPrice);
  const input = amountOf(
    quoteCurrency(details.currencyIn.currency.chainId, swap.currencyIn),
    swap.route.amountIn,
    usdIn,
  );
  const deposited = amountOf(
    details.currencyIn.currency,
    swap.route.amountOut,
    toUsdMicros(swap.route.amountOut, swap.deposit.decimals, p.depositPrice),
    swap.minDeposit,
  );
  // What the DEX leg costs the user besides the solver's own swap fee: the pools' fees and price impact (mid value
  // less the minimum deposit the order is priced on, so the slippage margin is in it too).
  const dexCost = usdIn - p.usd.in;
  const slippageValue = swap.route.amountOut - swap.minDeposit;
  return {
    ...details,
    operation: details.operation === 'bridge' ? 'swap' : details.operation,
    currencyIn: input,
    refundCurrency: details.currencyIn,
    totalImpact: impactOf(p.usd.out - usdIn, usdIn),
    swapImpact: impactOf(-(p.usd.swap + dexCost), usdIn),
    expandedPriceImpact: {
      ...details.expandedPriceImpact,
      swap: { usd: formatUsdMicros(-(p.usd.swap + dexCost)) },
    },
    rate: rateOf(
      swap.route.amountIn,
      swap.currencyIn.decimals,
      details.currencyOut.amount,
      details.currencyOut.currency.decimals,
    ),
    slippageTolerance: {
      ...details.slippageTolerance,
      total: Math.max(details.slippageTolerance.total, swap.slippageBps),
      origin: {
        usd: formatUsdMicros(toUsdMicros(slippageValue, swap.deposit.decimals, p.depositPrice)),
        value: slippageValue.toString(),
        percent: formatUnits(((swap.route.amountOut - swap.minDeposit) * 10_000n) / swap.route.amountOut, 2),
      },
    },
    userBalance: p.userBalance,
    route: {
      ...details.route,
      origin: {
        inputCurrency: input,
        outputCurrency: deposited,
        router: swap.leg.source,
        includedSwapSources: [swap.leg.source],
      },
    },
  };
}

const impactOf = (usdMicros: bigint, inUsdMicros: bigint): Impact => ({
  usd: formatUsdMicros(usdMicros),
  percent: inUsdMicros === 0n ? '0' : formatUnits((usdMicros * 10_000n) / inUsdMicros, 2),
});
