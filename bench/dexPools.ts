/**
 * Pools built in memory, shaped like the devnet's (a deep WETH/USDC v3 0.05%, a shallow WETH/MNR v3 0.3%, WETH/LONG
 * in a v3 1% pool and a v2 pair): for the DEX math micro-benchmark and the route tests, which need no chain.
 */
import type { Address } from 'viem';
import type { V2PairState, V3PoolState } from '../src/core/dex/poolState.js';
import { compress, wordOf } from '../src/core/dex/v3Swap.js';
import { getTickAtSqrtRatio } from '../src/core/dex/tickMath.js';

export const TOKENS = {
  usdc: '0x0000000000000000000000000000000000000001',
  weth: '0x0000000000000000000000000000000000000002',
  mnr: '0x0000000000000000000000000000000000000003',
  long: '0x0000000000000000000000000000000000000004',
} as const satisfies Record<string, Address>;

/** floor(sqrt(value)). */
export function sqrt(value: bigint): bigint {
  if (value < 2n) return value;
  let x = BigInt(Math.floor(Math.sqrt(Number(value))));
  for (;;) {
    const y = (x + value / x) >> 1n;
    if (y >= x && x * x <= value && (x + 1n) * (x + 1n) > value) return x;
    x = y;
  }
}

export interface SyntheticPosition {
  /** Half-width of the range in ticks around the price (rounded to the spacing). */
  halfWidth: number;
  liquidity: bigint;
}

/**
 * A v3 pool whose price is `amount1 / amount0` (raw units of token1 per token0), holding `positions` centred on it;
 * `windowWords` bitmap words are loaded each side.
 */
export function syntheticV3Pool(params: {
  address: Address;
  token0: Address;
  token1: Address;
  fee: number;
  tickSpacing: number;
  amount0: bigint;
  amount1: bigint;
  positions: readonly SyntheticPosition[];
  windowWords?: number;
}): V3PoolState {
  const { tickSpacing } = params;
  const sqrtPriceX96 = sqrt((params.amount1 << 192n) / params.amount0);
  const tick = getTickAtSqrtRatio(sqrtPriceX96);
  const center = compress(tick, tickSpacing) * tickSpacing;
  const bitmap = new Map<number, bigint>();
  const liquidityNet = new Map<number, bigint>();
  let liquidity = 0n;
  const add = (at: number, delta: bigint) => {
    const compressed = at / tickSpacing;
    const word = wordOf(compressed);
    bitmap.set(word, (bitmap.get(word) ?? 0n) | (1n << BigInt(compressed & 255)));
    liquidityNet.set(at, (liquidityNet.get(at) ?? 0n) + delta);
  };
  for (const { halfWidth, liquidity: amount } of params.positions) {
    const width = Math.max(1, Math.round(halfWidth / tickSpacing)) * tickSpacing;
    const lower = center - width;
    const upper = center + width;
    add(lower, amount);
    add(upper, -amount);
    if (lower <= tick && tick < upper) liquidity += amount;
  }
  const centerWord = wordOf(compress(tick, tickSpacing));
  const windowWords = params.windowWords ?? 2;
  return {
    source: 'uniswap-v3',
    address: params.address,
    token0: params.token0,
    token1: params.token1,
    fee: params.fee,
    tickSpacing,
    sqrtPriceX96,
    tick,
    liquidity,
    minWord: centerWord - windowWords,
    maxWord: centerWord + windowWords,
    bitmap,
    liquidityNet,
  };
}

const E18 = 10n ** 18n;

/** The devnet-shaped pools (prices: WETH 3,000 USDC; MNR 2 USDC; LONG 0.001 WETH in v3, 1/1005 in v2). */
export function devnetShapedPools(): (V3PoolState | V2PairState)[] {
  const { usdc, weth, mnr, long } = TOKENS;
  return [
    syntheticV3Pool({
      address: '0x00000000000000000000000000000000000000a1',
      token0: usdc,
      token1: weth,
      fee: 500,
      tickSpacing: 10,
      amount0: 3000n * 10n ** 6n,
      amount1: E18,
      positions: [
        { halfWidth: 200, liquidity: 4n * 10n ** 16n },
        { halfWidth: 1000, liquidity: 2n * 10n ** 16n },
        { halfWidth: 4000, liquidity: 10n ** 16n },
        { halfWidth: 20000, liquidity: 5n * 10n ** 15n },
      ],
    }),
    syntheticV3Pool({
      address: '0x00000000000000000000000000000000000000a2',
      token0: weth,
      token1: mnr,
      fee: 3000,
      tickSpacing: 60,
      amount0: 1n,
      amount1: 1500n,
      positions: [
        { halfWidth: 600, liquidity: 5n * 10n ** 21n },
        { halfWidth: 3000, liquidity: 2n * 10n ** 21n },
        { halfWidth: 12000, liquidity: 10n ** 21n },
      ],
    }),
    syntheticV3Pool({
      address: '0x00000000000000000000000000000000000000a3',
      token0: weth,
      token1: long,
      fee: 10000,
      tickSpacing: 200,
      amount0: 1n,
      amount1: 1000n,
      positions: [
        { halfWidth: 2000, liquidity: 10n ** 21n },
        { halfWidth: 10000, liquidity: 5n * 10n ** 20n },
      ],
    }),
    {
      source: 'uniswap-v2',
      address: '0x00000000000000000000000000000000000000b1',
      token0: weth,
      token1: long,
      reserve0: 100n * E18,
      reserve1: 100_500n * E18,
    },
  ];
}
