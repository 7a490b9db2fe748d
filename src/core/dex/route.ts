/**
 * The best route over the pools in memory, exact input or exact output: direct, or through one hub token (WETH,
 * USDC), each hop through whichever allowed pool pays the most for it (or, for exact output, takes the least). Every figure is exact pool math on the state of one block;
 * nothing here reads the chain.
 */
import type { Address } from 'viem';
import { PoolShortfallError, type DexSource, type PoolShortfall, type PoolState } from './poolState.js';
import { marginalPrice, swapExactIn, swapExactOut, type PoolSwap } from './poolSwap.js';

/** The pools of one chain at one block, by pair. */
export interface DexChainState {
  chainId: number;
  blockNumber: bigint;
  pools: readonly PoolState[];
  /** `pairKey(a, b)` → the pools trading that pair. */
  byPair: ReadonlyMap<string, readonly PoolState[]>;
}

/** The key of an unordered token pair (lower-case addresses). */
export const pairKey = (a: Address, b: Address): string => (a < b ? `${a}:${b}` : `${b}:${a}`);

/** The chain's pools indexed by pair. */
export function indexPools(chainId: number, blockNumber: bigint, pools: readonly PoolState[]): DexChainState {
  const byPair = new Map<string, PoolState[]>();
  for (const pool of pools) {
    const key = pairKey(pool.token0, pool.token1);
    const list = byPair.get(key);
    if (list === undefined) byPair.set(key, [pool]);
    else list.push(pool);
  }
  return { chainId, blockNumber, pools, byPair };
}

export interface DexRouteHop {
  source: DexSource;
  pool: Address;
  /** The router that executes this hop. */
  router: Address;
  tokenIn: Address;
  tokenOut: Address;
  /** The pool's fee in hundredths of a bip (a v2 pair's is 3000). */
  fee: number;
  amountIn: bigint;
  amountOut: bigint;
  ticksCrossed: number;
}

export interface DexRoute {
  chainId: number;
  /** The block whose pool state priced the route. */
  blockNumber: bigint;
  tokenIn: Address;
  tokenOut: Address;
  amountIn: bigint;
  amountOut: bigint;
  /** Estimated gas of the swaps (round figures per hop and per tick crossed). */
  gasEstimate: bigint;
  /** `amountOut` less the gas's cost in tokenOut (equal to `amountOut` when no cost of gas was given). */
  netAmountOut: bigint;
  /** `amountIn` at the route's marginal (mid) price, before fees: what an infinitely deep route would pay. */
  midAmountOut: bigint;
  /** (midAmountOut − amountOut) / midAmountOut in bps, floored: the pools' fees and the price moved by the size. */
  priceImpactBps: bigint;
  hops: DexRouteHop[];
}

export type RouteShortfall = 'no-pool' | PoolShortfall;

export interface SkippedPool {
  pool: Address;
  shortfall: PoolShortfall;
}

export type DexQuote =
  | { ok: true; route: DexRoute; skipped: SkippedPool[] }
  | { ok: false; shortfall: RouteShortfall; skipped: SkippedPool[] };

export interface QuoteParameters {
  tokenIn: Address;
  tokenOut: Address;
  /** The sources a route may use; default every source with a router. */
  sources?: readonly DexSource[];
  /** Tokens a two-hop route may pass through (the chain's WETH and USDC). */
  hubs: readonly Address[];
  /** The router of each source on this chain; a source without one is not routed through. */
  routers: Partial<Record<DexSource, Address>>;
  /** The cost of `gas` units in tokenOut's smallest unit, to compare routes net of gas. */
  costOfGas?: (gas: bigint) => bigint;
  /**
   * Whether one route may pass through pools of different sources (a v3 hop then a v2 hop). Default false: every
   * route is executable by one router call (`routerSwapCall`).
   */
  mixSources?: boolean;
}

export interface QuoteExactInParameters extends QuoteParameters {
  amountIn: bigint;
}

export interface QuoteExactOutParameters extends QuoteParameters {
  amountOut: bigint;
}

interface HopChoice {
  pool: PoolState;
  swap: PoolSwap;
}

/**
 * The best route for `amountIn` of tokenIn to tokenOut by output net of gas, with the pools skipped because they
 * could not answer exactly; `ok: false` with the reason when no path can carry the amount ('insufficient-state'
 * when a pool that could have answered needs ticks outside the loaded window).
 */
export function quoteExactIn(state: DexChainState, params: QuoteExactInParameters): DexQuote {
  return searchBySource(state, params, 'in', params.amountIn);
}

/**
 * The route that buys exactly `amountOut` of tokenOut for the least tokenIn (gas counted as more input when
 * `costOfGas` is given, in tokenOut, converted at the route's own price), hops priced from the last to the first,
 * as `SwapRouter.exactOutput` and `swapTokensForExactTokens` compute them.
 */
export function quoteExactOut(state: DexChainState, params: QuoteExactOutParameters): DexQuote {
  return searchBySource(state, params, 'out', params.amountOut);
}

/** `search` over all allowed sources at once (`mixSources`), or over each source alone keeping the better route. */
function searchBySource(state: DexChainState, params: QuoteParameters, side: 'in' | 'out', amount: bigint): DexQuote {
  const allowed = (params.sources ?? (Object.keys(params.routers) as DexSource[])).filter(
    (source) => params.routers[source] !== undefined,
  );
  if (params.mixSources === true || allowed.length <= 1) return search(state, params, side, amount);
  const quotes = allowed.map((source) => search(state, { ...params, sources: [source] }, side, amount));
  const skipped = quotes.flatMap((quote) => quote.skipped);
  let best: DexRoute | undefined;
  for (const quote of quotes)
    if (quote.ok && (best === undefined || better(quote.route, best, side))) best = quote.route;
  if (best !== undefined) return { ok: true, route: best, skipped };
  const shortfalls = quotes.map((quote) => (quote.ok ? 'no-pool' : quote.shortfall));
  const shortfall: RouteShortfall = shortfalls.includes('insufficient-state')
    ? 'insufficient-state'
    : shortfalls.includes('insufficient-liquidity')
      ? 'insufficient-liquidity'
      : 'no-pool';
  return { ok: false, shortfall, skipped };
}

function search(state: DexChainState, params: QuoteParameters, side: 'in' | 'out', amount: bigint): DexQuote {
  const tokenIn = params.tokenIn.toLowerCase() as Address;
  const tokenOut = params.tokenOut.toLowerCase() as Address;
  const allowed = new Set(
    (params.sources ?? (Object.keys(params.routers) as DexSource[])).filter((s) => params.routers[s] !== undefined),
  );
  const skipped: SkippedPool[] = [];

  /** The pool that pays the most for `given` in (exact input), or takes the least for `given` out (exact output). */
  function bestHop(from: Address, to: Address, given: bigint): HopChoice | undefined {
    let best: HopChoice | undefined;
    for (const pool of state.byPair.get(pairKey(from, to)) ?? []) {
      if (!allowed.has(pool.source)) continue;
      try {
        if (side === 'in') {
          const swap = swapExactIn(pool, from, given);
          if (best === undefined || swap.amountOut > best.swap.amountOut) best = { pool, swap };
        } else {
          const swap = swapExactOut(pool, from, given);
          if (best === undefined || swap.amountIn < best.swap.amountIn) best = { pool, swap };
        }
      } catch (error) {
        if (!(error instanceof PoolShortfallError)) throw error;
        skipped.push({ pool: pool.address, shortfall: error.shortfall });
      }
    }
    return best;
  }

  const paths: Address[][] = [[tokenIn, tokenOut]];
  for (const hub of params.hubs) {
    const h = hub.toLowerCase() as Address;
    if (h !== tokenIn && h !== tokenOut) paths.push([tokenIn, h, tokenOut]);
  }

  let best: DexRoute | undefined;
  for (const path of paths) {
    const hopCount = path.length - 1;
    const choices: HopChoice[] = new Array<HopChoice>(hopCount);
    let given = amount;
    let complete = true;
    for (let n = 0; n < hopCount; n++) {
      const i = side === 'in' ? n : hopCount - 1 - n;
      const choice = bestHop(path[i]!, path[i + 1]!, given);
      if (choice === undefined) {
        complete = false;
        break;
      }
      choices[i] = choice;
      given = side === 'in' ? choice.swap.amountOut : choice.swap.amountIn;
    }
    if (!complete) continue;
    const route = buildRoute(state, params, path, choices);
    if (best === undefined || better(route, best, side)) best = route;
  }
  if (best !== undefined) return { ok: true, route: best, skipped };
  const shortfall: RouteShortfall = skipped.some((s) => s.shortfall === 'insufficient-state')
    ? 'insufficient-state'
    : skipped.length > 0
      ? 'insufficient-liquidity'
      : 'no-pool';
  return { ok: false, shortfall, skipped };
}

/**
 * Whether `a` beats `b`: more net output for the same input, or less input per unit of output net of gas for the
 * same output.
 */
function better(a: DexRoute, b: DexRoute, side: 'in' | 'out'): boolean {
  if (side === 'in') return a.netAmountOut > b.netAmountOut;
  // The same output: the lower input per unit of output net of gas (amountIn / netAmountOut), cross-multiplied.
  if (a.netAmountOut <= 0n || b.netAmountOut <= 0n) return b.netAmountOut <= 0n && a.amountIn < b.amountIn;
  return a.amountIn * b.netAmountOut < b.amountIn * a.netAmountOut;
}

function buildRoute(state: DexChainState, params: QuoteParameters, path: Address[], choices: HopChoice[]): DexRoute {
  const amountIn = choices[0]!.swap.amountIn;
  let numerator = amountIn;
  let denominator = 1n;
  let gasEstimate = 0n;
  const hops = choices.map(({ pool, swap }, i): DexRouteHop => {
    const price = marginalPrice(pool, path[i]!);
    numerator *= price.numerator;
    denominator *= price.denominator;
    gasEstimate += swap.gasEstimate;
    return {
      source: pool.source,
      pool: pool.address,
      router: params.routers[pool.source]!,
      tokenIn: path[i]!,
      tokenOut: path[i + 1]!,
      fee: pool.source === 'uniswap-v3' ? pool.fee : 3000,
      amountIn: swap.amountIn,
      amountOut: swap.amountOut,
      ticksCrossed: swap.ticksCrossed,
    };
  });
  const amountOut = choices[choices.length - 1]!.swap.amountOut;
  const midAmountOut = numerator / denominator;
  const netAmountOut = amountOut - (params.costOfGas?.(gasEstimate) ?? 0n);
  return {
    chainId: state.chainId,
    blockNumber: state.blockNumber,
    tokenIn: path[0]!,
    tokenOut: path[path.length - 1]!,
    amountIn,
    amountOut,
    gasEstimate,
    netAmountOut,
    midAmountOut,
    priceImpactBps: midAmountOut === 0n ? 0n : ((midAmountOut - amountOut) * 10_000n) / midAmountOut,
    hops,
  };
}
