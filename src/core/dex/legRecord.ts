/**
 * The DEX leg of a request as its stored quote records it (`requests.quote.dex`), so quote, fill, status and
 * explorer read the same swap: which pools, which router, what went in and what had to come out.
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
  amountIn: bigint;
  amountOut: bigint;
  minAmountOut: bigint;
  priceImpactBps: bigint;
  blockNumber: bigint;
  hops: Array<{ pool: Address; fee: number; tokenIn: Address; tokenOut: Address }>;
}

/** The legs of a request, by where they run; each absent when the request has none there. */
export interface DexLegs {
  origin?: DexLegRecord;
  destination?: DexLegRecord;
  sameChain?: DexLegRecord;
}

/** The JSON of a leg: amounts as decimal strings. */
export type DexLegJson = Omit<
  DexLegRecord,
  'amountIn' | 'amountOut' | 'minAmountOut' | 'priceImpactBps' | 'blockNumber'
> & {
  amountIn: string;
  amountOut: string;
  minAmountOut: string;
  priceImpactBps: string;
  blockNumber: string;
};

/** The record of `route` executed with at least `minAmountOut` out. */
export function legOfRoute(
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
    amountIn: route.amountIn,
    amountOut: route.amountOut,
    minAmountOut: options.minAmountOut,
    priceImpactBps: route.priceImpactBps,
    blockNumber: route.blockNumber,
    hops: route.hops.map((hop) => ({ pool: hop.pool, fee: hop.fee, tokenIn: hop.tokenIn, tokenOut: hop.tokenOut })),
  };
}

export function legToJson(leg: DexLegRecord): DexLegJson {
  return {
    ...leg,
    amountIn: leg.amountIn.toString(),
    amountOut: leg.amountOut.toString(),
    minAmountOut: leg.minAmountOut.toString(),
    priceImpactBps: leg.priceImpactBps.toString(),
    blockNumber: leg.blockNumber.toString(),
  };
}

/** A stored leg read back; undefined when `value` is not one (a request without that leg). */
export function legFromJson(value: unknown): DexLegRecord | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const json = value as DexLegJson;
  if (typeof json.amountIn !== 'string' || !Array.isArray(json.hops)) return undefined;
  return {
    chainId: json.chainId,
    source: json.source,
    router: getAddress(json.router),
    ...(json.routerKind === undefined ? {} : { routerKind: json.routerKind }),
    tokenIn: getAddress(json.tokenIn),
    tokenOut: getAddress(json.tokenOut),
    nativeIn: json.nativeIn,
    nativeOut: json.nativeOut,
    amountIn: BigInt(json.amountIn),
    amountOut: BigInt(json.amountOut),
    minAmountOut: BigInt(json.minAmountOut),
    priceImpactBps: BigInt(json.priceImpactBps),
    blockNumber: BigInt(json.blockNumber),
    hops: json.hops.map((hop) => ({
      pool: getAddress(hop.pool),
      fee: hop.fee,
      tokenIn: getAddress(hop.tokenIn),
      tokenOut: getAddress(hop.tokenOut),
    })),
  };
}

/** The legs recorded in a stored quote (`requests.quote`). */
export function dexLegsOf(quote: Record<string, unknown> | null | undefined): DexLegs {
  const dex = quote?.dex as Record<string, unknown> | undefined;
  if (dex === undefined || dex === null) return {};
  const legs: DexLegs = {};
  for (const where of ['origin', 'destination', 'sameChain'] as const) {
    const leg = legFromJson(dex[where]);
    if (leg !== undefined) legs[where] = leg;
  }
  return legs;
}
