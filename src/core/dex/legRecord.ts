/**
 * A DEX leg of a request as stored in its quote (`requests.quote.dex.{origin,destination,sameChain}`), so the
 * quote, the fill, the status and the explorer agree on what was routed where. Amounts are decimal strings.
 */
import type { Address } from 'viem';
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

/** The stored `quote.dex` of a request. */
export interface DexLegs {
  origin?: DexLegRecord;
  destination?: DexLegRecord;
  sameChain?: DexLegRecord;
}

/** The record of `route` executed with `minAmountOut` as its minimum. */
export function dexLegRecord(
  route: DexRoute,
  options: { minAmountOut: bigint; nativeIn: boolean; nativeOut: boolean; routerKind?: SwapRouterKind },
): DexLegRecord {
  const first = route.hops[0]!;
  return {
    chainId: route.chainId,
    source: first.source,
    router: first.router,
    ...(first.source === 'uniswap-v3' ? { routerKind: options.routerKind ?? 'SwapRouter' } : {}),
    tokenIn: route.tokenIn,
    tokenOut: route.tokenOut,
    nativeIn: options.nativeIn,
    nativeOut: options.nativeOut,
    amountIn: route.amountIn.toString(),
    amountOut: route.amountOut.toString(),
    minAmountOut: options.minAmountOut.toString(),
    priceImpactBps: route.priceImpactBps.toString(),
    blockNumber: route.blockNumber.toString(),
    hops: route.hops.map((hop) => ({ pool: hop.pool, fee: hop.fee, tokenIn: hop.tokenIn, tokenOut: hop.tokenOut })),
  };
}

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
const UINT = /^[0-9]+$/;

/** The DEX legs of a stored quote JSON (`requests.quote`), leaving out any that is malformed. */
export function dexLegsOf(quote: unknown): DexLegs {
  const dex = (quote as { dex?: unknown } | null | undefined)?.dex;
  if (typeof dex !== 'object' || dex === null) return {};
  const legs: DexLegs = {};
  for (const key of ['origin', 'destination', 'sameChain'] as const) {
    const leg = parseLeg((dex as Record<string, unknown>)[key]);
    if (leg !== undefined) legs[key] = leg;
  }
  return legs;
}

function parseLeg(value: unknown): DexLegRecord | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const leg = value as Partial<Record<keyof DexLegRecord, unknown>>;
  const addresses = [leg.router, leg.tokenIn, leg.tokenOut];
  const amounts = [leg.amountIn, leg.amountOut, leg.minAmountOut, leg.priceImpactBps, leg.blockNumber];
  if (
    typeof leg.chainId !== 'number' ||
    (leg.source !== 'uniswap-v3' && leg.source !== 'uniswap-v2') ||
    !addresses.every((a) => typeof a === 'string' && ADDRESS.test(a)) ||
    !amounts.every((a) => typeof a === 'string' && UINT.test(a)) ||
    typeof leg.nativeIn !== 'boolean' ||
    typeof leg.nativeOut !== 'boolean' ||
    !Array.isArray(leg.hops)
  )
    return undefined;
  return value as DexLegRecord;
}

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
