/**
 * A DEX leg as stored with its request (`requests.quote.dex`), so the quote, the fill, the status and the explorer
 * agree on what the swap is: the source and router, the tokens, the amounts quoted and the minimum the router
 * enforces, and the pools it passes through. Amounts are decimal strings (the quote column is JSON).
 */
import { getAddress, type Address } from 'viem';
import type { DexSource } from './poolState.js';
import type { DexRoute } from './route.js';
import type { SwapRouterKind } from './routerCalls.js';

export interface DexLegRecord {
  chainId: number;
  source: DexSource;
  router: Address;
  routerKind?: SwapRouterKind;
  tokenIn: Address;
  tokenOut: Address;
  nativeIn: boolean;
  nativeOut: boolean;
  amountIn: string;
  amountOut: string;
  minAmountOut: string;
  priceImpactBps: string;
  blockNumber: string;
  hops: Array<{ pool: Address; fee: number; tokenIn: Address; tokenOut: Address }>;
}

/** Where a request's DEX legs are: on the origin, on the destination, or a same-chain swap. */
export interface DexLegs {
  origin?: DexLegRecord;
  destination?: DexLegRecord;
  sameChain?: DexLegRecord;
}

/** The record of `route` executed with `minAmountOut` as the router's minimum. */
export function legRecordOf(
  route: DexRoute,
  options: { minAmountOut: bigint; nativeIn: boolean; nativeOut: boolean; routerKind?: SwapRouterKind },
): DexLegRecord {
  const first = route.hops[0]!;
  return {
    chainId: route.chainId,
    source: first.source,
    router: getAddress(first.router),
    ...(first.source === 'uniswap-v3' && options.routerKind !== undefined ? { routerKind: options.routerKind } : {}),
    tokenIn: getAddress(route.tokenIn),
    tokenOut: getAddress(route.tokenOut),
    nativeIn: options.nativeIn,
    nativeOut: options.nativeOut,
    amountIn: route.amountIn.toString(),
    amountOut: route.amountOut.toString(),
    minAmountOut: options.minAmountOut.toString(),
    priceImpactBps: route.priceImpactBps.toString(),
    blockNumber: route.blockNumber.toString(),
    hops: route.hops.map((hop) => ({
      pool: getAddress(hop.pool),
      fee: hop.fee,
      tokenIn: getAddress(hop.tokenIn),
      tokenOut: getAddress(hop.tokenOut),
    })),
  };
}

/** The legs stored in a request's quote JSON, or undefined when it has none (or not in this shape). */
export function dexLegsOf(quote: unknown): DexLegs | undefined {
  if (typeof quote !== 'object' || quote === null) return undefined;
  const dex = (quote as { dex?: unknown }).dex;
  if (typeof dex !== 'object' || dex === null) return undefined;
  return dex;
}

/** The destination leg stored with a request, if any. */
export const destinationLegOf = (quote: unknown): DexLegRecord | undefined => dexLegsOf(quote)?.destination;

/**
 * The route a stored leg executes, for `routerSwapCall`: its hops with the router, the amount in and the quoted
 * amount out (the minimum is the caller's). Per-hop amounts are not stored; the router needs only the path.
 */
export function routeOfLeg(leg: DexLegRecord): DexRoute {
  const amountIn = BigInt(leg.amountIn);
  const amountOut = BigInt(leg.amountOut);
  return {
    chainId: leg.chainId,
    blockNumber: BigInt(leg.blockNumber),
    tokenIn: leg.tokenIn,
    tokenOut: leg.tokenOut,
    amountIn,
    amountOut,
    gasEstimate: 0n,
    netAmountOut: amountOut,
    midAmountOut: amountOut,
    priceImpactBps: BigInt(leg.priceImpactBps),
    hops: leg.hops.map((hop, index) => ({
      source: leg.source,
      pool: hop.pool,
      router: leg.router,
      tokenIn: hop.tokenIn,
      tokenOut: hop.tokenOut,
      fee: hop.fee,
      amountIn: index === 0 ? amountIn : 0n,
      amountOut: index === leg.hops.length - 1 ? amountOut : 0n,
      ticksCrossed: 0,
    })),
  };
}
