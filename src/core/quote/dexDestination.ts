/**
 * A cross-chain swap whose output is bought on the destination through DEX pools: the user's input, less the fees,
 * becomes a currency the solver holds on the destination (the same asset 1:1 when it can, else at the oracle into
 * WETH or USDC), and the fill spends that currency through one router call that delivers the pool's output to the
 * recipient with the order's minimum as the swap's minimum.
 *
 * The gateway's swap fee (spec "Fee rules" §2) covers DEX fees, DEX impact and the solver's rebalancing. On this
 * route the pools' fees and impact are paid inside the swap (and shown as swap impact), so the gateway charges its
 * swap fee only for the conversion into the pools' entry currency: nothing for a 1:1 same-asset leg (ETH → ETH),
 * the swap fee of the conversion's class for an oracle conversion (USDT → USDC, ETH → USDC). Platform and app fees
 * follow the user's pair as on any swap.
 */
import { zeroAddress, type Address } from 'viem';
import { chainCurrencies } from '../chains/requireChain.js';
import type { ChainConfig, CurrencyConfig } from '../chains/types.js';
import type { CoreContext } from '../context.js';
import { dexLegRecord } from '../dex/legRecord.js';
import type { DexRoute, DexQuote } from '../dex/route.js';
import { GatewayError, isGatewayError } from '../errors.js';
import { classifyRoute } from '../fees/classifyRoute.js';
import { convert, toUsdMicros, type UsdPrice } from '../market.js';
import { pow10 } from '../powersOfTen.js';
import type { Caller } from '../vocabulary/caller.js';
import type { ResolvedRoute } from '../vocabulary/route.js';
import { paymentFillGas, paymentFillL1Fee } from './fillGas.js';
import { priceRoute, type MarketSnapshot, type Pricing } from './pricing.js';
import type { QuoteParameters } from './types.js';

/** Oldest pool state (seconds) a DEX quote is priced from, unless the config sets `maxDexStateAgeSeconds`. */
export const DEFAULT_MAX_DEX_STATE_AGE_SECONDS = 30;

/**
 * Gas the fill spends besides the payment and the swap itself: the public multicaller's call and, for a token, the
 * router's allowance (a fresh non-zero slot, spent back to zero by the swap).
 */
export const DEX_FILL_OVERHEAD_GAS = { native: 35_000n, token: 75_000n } as const;

/** What the inventory quote and the DEX quote share: the prices and reads made once per quote. */
export interface DexQuoteInputs {
  route: ResolvedRoute;
  params: QuoteParameters;
  caller: Caller;
  trailingVolumeUsdMicros: bigint;
  priceIn: UsdPrice;
  /** The oracle price of the output, when it has a feed (a long-tail token has none). */
  priceOut: UsdPrice | undefined;
  destinationNativePrice: UsdPrice;
  destinationGasPrice: bigint;
  /** Fills in flight by `chainId:currency`: what they will take from the solver. */
  committed: ReadonlyMap<string, bigint>;
  originGas?: MarketSnapshot['originGas'];
}

/** A DEX-priced quote: the pricing (its `dex` set), the output's price, and the leg's entry checked for liquidity. */
export interface DexQuoteResult {
  pricing: Pricing & { dex: NonNullable<Pricing['dex']> };
  priceOut: UsdPrice;
  /** The route as the solver pays it (its output the entry currency), with the pricing of that payment. */
  entry: { route: ResolvedRoute; pricing: Pricing; price: UsdPrice; available: bigint };
}

/**
 * The best DEX quote for the route over its entry currencies, or the error that stopped every one of them.
 * Throws `ROUTE_TEMPORARILY_RESTRICTED` when the pool state held is older than the limit.
 */
export async function quoteDestinationDex(ctx: CoreContext, inputs: DexQuoteInputs): Promise<DexQuoteResult> {
  const { route } = inputs;
  checkStateAge(ctx, route.destination);
  const entries = entryCurrencies(route);
  if (entries.length === 0) throw noRoute(route, 'the solver holds no currency there that the pools trade');
  const settled = await Promise.allSettled(entries.map((entry) => quoteThrough(ctx, inputs, entry)));
  let best: DexQuoteResult | undefined;
  for (const outcome of settled) {
    if (outcome.status !== 'fulfilled') continue;
    if (best === undefined || better(outcome.value.pricing, best.pricing, inputs.params.tradeType))
      best = outcome.value;
  }
  if (best !== undefined) return best;
  const failures = settled.map((outcome) => (outcome as PromiseRejectedResult).reason as unknown);
  throw failures.find((error) => isGatewayError(error) && error.code !== 'NO_SWAP_ROUTES_FOUND') ?? failures[0];
}

/** Whether pricing `a` serves the user better than `b`: more output for the input, or less input for the output. */
export function better(a: Pricing, b: Pricing, tradeType: QuoteParameters['tradeType']): boolean {
  return tradeType === 'EXACT_INPUT' ? a.amountOut > b.amountOut : a.amountIn < b.amountIn;
}

function checkStateAge(ctx: CoreContext, destination: ChainConfig): void {
  const readAt = ctx.dex?.readAt(destination.id);
  const maxAgeMs = (ctx.config.quote.maxDexStateAgeSeconds ?? DEFAULT_MAX_DEX_STATE_AGE_SECONDS) * 1_000;
  const age = readAt === undefined ? undefined : ctx.now() - readAt;
  if (age === undefined || age > maxAgeMs) {
    throw new GatewayError(
      'ROUTE_TEMPORARILY_RESTRICTED',
      `The pool state of chain ${destination.id} (${destination.displayName}) is ${age === undefined ? 'not read yet' : `${Math.round(age / 1000)} s old`}, more than the ${maxAgeMs / 1000} s a DEX quote is priced from; try again shortly`,
    );
  }
}

/**
 * The currencies the solver may enter the pools with on the destination: the input's own asset when it holds it
 * (ETH → native ETH, USDC → USDC), otherwise WETH and USDC at the oracle. Never the output itself.
 */
export function entryCurrencies(route: ResolvedRoute): CurrencyConfig[] {
  const { destination, currencyIn, currencyOut } = route;
  // Entry currencies the solver holds and can price, other than the output's own asset (WETH for ETH out).
  const notOutput = chainCurrencies(destination).filter(
    (currency) =>
      currency.solver &&
      currency.price !== undefined &&
      classifyRoute({ origin: rc(currency), destination: rc(currencyOut), operation: 'swap' }) !== 'bridge',
  );
  const sameId = notOutput.find((currency) => currency.id === currencyIn.id && currencyIn.supportsBridging);
  if (sameId !== undefined) return [sameId];
  const sameAsset = notOutput.find(
    (currency) => classifyRoute(pair(route, currency)) === 'bridge' && currencyIn.supportsBridging,
  );
  if (sameAsset !== undefined) return [sameAsset];
  return notOutput.filter((currency) => ['WETH', 'USDC'].includes(currency.symbol.toUpperCase()));
}

const rc = (currency: CurrencyConfig) => ({ chainId: 0, currencyId: currency.id, symbol: currency.symbol });
const pair = (route: ResolvedRoute, entry: CurrencyConfig) => ({
  origin: rc(route.currencyIn),
  destination: rc(entry),
  operation: 'swap' as const,
});

/** The chain's WETH: what a native entry is wrapped into by the router. */
function wrappedNative(destination: ChainConfig): Address | undefined {
  return destination.currencies.find((currency) => currency.symbol.toUpperCase() === 'WETH')?.address;
}

/** The quote through one entry currency. */
async function quoteThrough(ctx: CoreContext, inputs: DexQuoteInputs, entry: CurrencyConfig): Promise<DexQuoteResult> {
  const { route, params } = inputs;
  const { destination } = route;
  const native = entry.address === zeroAddress;
  const tokenIn = native ? wrappedNative(destination) : entry.address;
  if (tokenIn === undefined) throw noRoute(route, `no wrapped ${entry.symbol} to enter the pools with`);
  const [priceEntry, paymentGas, l1FeeWei, balance] = await Promise.all([
    ctx.market.usdPrice(destination.id, entry),
    paymentFillGas(ctx, destination, entry.address),
    paymentFillL1Fee(ctx, destination, entry.address),
    ctx.market.solverBalance(destination.id, entry.address),
  ]);
  const available = balance - (inputs.committed.get(`${destination.id}:${entry.address.toLowerCase()}`) ?? 0n);
  const oneToOne = classifyRoute(pair(route, entry)) === 'bridge';
  const entryRoute: ResolvedRoute = { ...route, currencyOut: entry, sameAsset: oneToOne };
  const overhead = native ? DEX_FILL_OVERHEAD_GAS.native : DEX_FILL_OVERHEAD_GAS.token;
  const priceEntryLeg = (swapGas: bigint, tradeType: QuoteParameters['tradeType'], amount: bigint): Pricing =>
    priceRoute({
      route: entryRoute,
      params: { ...params, tradeType, amount },
      market: {
        priceIn: inputs.priceIn,
        priceOut: priceEntry,
        destinationNativePrice: inputs.destinationNativePrice,
        destinationGasPrice: inputs.destinationGasPrice,
        fillGasUnits: paymentGas + overhead + swapGas,
        fillL1FeeWei: l1FeeWei,
        ...(inputs.originGas === undefined ? {} : { originGas: inputs.originGas }),
      },
      settings: ctx.config.quote,
      caller: inputs.caller,
      trailingVolumeUsdMicros: inputs.trailingVolumeUsdMicros,
      swapFeeClass: oneToOne ? 'bridge' : classifyRoute(pair(route, entry)),
    });
  const dexParams = {
    chainId: destination.id,
    tokenIn,
    tokenOut: route.currencyOut.address === zeroAddress ? wrappedNative(destination)! : route.currencyOut.address,
    sources: route.swapSources?.dex ?? [],
  };
  const dex = ctx.dex!;
  const gasCost = (rate: DexRoute) => (gas: bigint) => {
    // The fill's gas in the output, at the route's own rate: routes compare by what reaches the user.
    const inEntry = convert(
      gas * inputs.destinationGasPrice,
      { decimals: destination.nativeCurrency.decimals, price: inputs.destinationNativePrice },
      { decimals: entry.decimals, price: priceEntry },
    );
    return rate.amountIn === 0n ? 0n : (inEntry * rate.amountOut) / rate.amountIn;
  };
  let entryPricing: Pricing;
  let swap: DexRoute;
  let amountOut: bigint;
  if (params.tradeType === 'EXACT_INPUT') {
    entryPricing = priceEntryLeg(0n, 'EXACT_INPUT', params.amount);
    const first = routeOf(route, dex.quoteExactIn({ ...dexParams, amountIn: entryPricing.amountOut }));
    entryPricing = priceEntryLeg(first.gasEstimate, 'EXACT_INPUT', params.amount);
    swap = routeOf(
      route,
      dex.quoteExactIn({ ...dexParams, amountIn: entryPricing.amountOut, costOfGas: gasCost(first) }),
    );
    amountOut = swap.amountOut;
  } else {
    const bought = routeOf(route, dex.quoteExactOut({ ...dexParams, amountOut: params.amount }));
    entryPricing = priceEntryLeg(bought.gasEstimate, 'EXACT_OUTPUT', bought.amountIn);
    // The fill swaps exactly what was paid in: on the state quoted that buys at least the amount asked for.
    swap = routeOf(
      route,
      dex.quoteExactIn({ ...dexParams, sources: [bought.hops[0]!.source], amountIn: entryPricing.amountOut }),
    );
    amountOut = params.amount;
  }
  if (swap.amountIn !== entryPricing.amountOut) throw noRoute(route, 'the pools could not take the amount');
  return finish(ctx, inputs, {
    entry,
    entryRoute,
    entryPricing,
    priceEntry,
    available,
    swap,
    amountOut,
    native,
  });
}

/** The quote's pricing from the entry leg's and the swap's figures. */
function finish(
  ctx: CoreContext,
  inputs: DexQuoteInputs,
  leg: {
    entry: CurrencyConfig;
    entryRoute: ResolvedRoute;
    entryPricing: Pricing;
    priceEntry: UsdPrice;
    available: bigint;
    swap: DexRoute;
    amountOut: bigint;
    native: boolean;
  },
): DexQuoteResult {
  const { route, params } = inputs;
  const { entryPricing, swap, amountOut } = leg;
  const minimumAmountOut =
    params.tradeType === 'EXACT_OUTPUT' ? amountOut : (amountOut * BigInt(10_000 - route.slippageBps)) / 10_000n;
  const entryUsd = toUsdMicros(swap.amountIn, leg.entry.decimals, leg.priceEntry);
  // The output's value: its oracle price when it has one, else the pools' marginal price (before fees and impact).
  const priceOut = inputs.priceOut ?? poolPrice(entryUsd, swap.midAmountOut, route.currencyOut.decimals);
  const outUsd = toUsdMicros(amountOut, route.currencyOut.decimals, priceOut);
  const v3 = route.destination.dex?.uniswapV3;
  const record = dexLegRecord(swap, {
    minAmountOut: minimumAmountOut,
    nativeIn: leg.native,
    nativeOut: route.currencyOut.address === zeroAddress,
    ...(v3 === undefined ? {} : { routerKind: v3.swapRouterKind ?? 'SwapRouter' }),
  });
  const pricing = {
    ...entryPricing,
    amountOut,
    minimumAmountOut,
    usd: { ...entryPricing.usd, out: outUsd },
    dex: {
      start: leg.entry,
      startPrice: leg.priceEntry,
      route: swap,
      record,
      swapImpactUsdMicros: outUsd - entryUsd - entryPricing.usd.swap,
    },
  };
  const limit = BigInt(ctx.config.quote.maxPriceImpactBps);
  if (params.overridePriceImpact !== true && (pricing.usd.in - outUsd) * 10_000n > pricing.usd.in * limit) {
    throw new GatewayError(
      'SWAP_IMPACT_TOO_HIGH',
      `Through the ${record.source} pools on chain ${route.destination.id} the swap would lose ${formatBps(pricing.usd.in - outUsd, pricing.usd.in)} of the input's value, above the ${Number(limit) / 100}% limit; send a smaller amount or set overridePriceImpact`,
    );
  }
  return {
    pricing,
    priceOut,
    entry: { route: leg.entryRoute, pricing: entryPricing, price: leg.priceEntry, available: leg.available },
  };
}

/** A USD price (18 decimals) for a currency the pools value `usdMicros` for `amount` of. */
function poolPrice(usdMicros: bigint, amount: bigint, decimals: number): UsdPrice {
  return {
    answer: amount === 0n ? 0n : (usdMicros * pow10(decimals + 12)) / amount,
    decimals: 18,
    updatedAt: Math.floor(Date.now() / 1000),
  };
}

const formatBps = (part: bigint, whole: bigint): string =>
  whole === 0n ? '0%' : `${(Number((part * 10_000n) / whole) / 100).toFixed(2)}%`;

function routeOf(route: ResolvedRoute, quote: DexQuote): DexRoute {
  if (quote.ok) return quote.route;
  if (quote.shortfall === 'insufficient-liquidity')
    throw new GatewayError(
      'INSUFFICIENT_LIQUIDITY',
      `The pools on chain ${route.destination.id} cannot take this amount of ${route.currencyOut.symbol}; try a smaller amount`,
    );
  throw noRoute(
    route,
    quote.shortfall === 'insufficient-state'
      ? 'the amount moves the price past the pool state held'
      : `no pool of the allowed sources (${(route.swapSources?.dex ?? []).join(', ')}) trades it`,
  );
}

function noRoute(route: ResolvedRoute, why: string): GatewayError {
  return new GatewayError(
    'NO_SWAP_ROUTES_FOUND',
    `No swap route from ${route.currencyIn.symbol} to ${route.currencyOut.symbol} on chain ${route.destination.id} (${route.destination.displayName}): ${why}`,
  );
}
