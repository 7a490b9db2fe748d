/**
 * One pool's exact-input swap and marginal price, whichever the source: the pool math of `v3Swap.ts` or
 * `v2Math.ts`, and the gas a hop through it is estimated to cost.
 */
import type { Address } from 'viem';
import { DexMathError } from './fullMath.js';
import { PoolShortfallError, type PoolState } from './poolState.js';
import { getAmountIn, getAmountOut } from './v2Math.js';
import { simulateV3Swap } from './v3Swap.js';

/** Gas a v2 hop costs (transfer in, swap, transfer out), a round estimate. */
export const V2_HOP_GAS = 100_000n;
/** Gas a v3 hop costs within one range, a round estimate; each initialized tick crossed adds `V3_TICK_GAS`. */
export const V3_HOP_GAS = 120_000n;
export const V3_TICK_GAS = 30_000n;

export interface PoolSwap {
  amountIn: bigint;
  amountOut: bigint;
  ticksCrossed: number;
  gasEstimate: bigint;
}

/** A marginal price as the fraction `numerator / denominator` of tokenOut per tokenIn, before fees. */
export interface Ratio {
  numerator: bigint;
  denominator: bigint;
}

const Q192 = 1n << 192n;

/** The pool's mid price of `tokenIn` in the other token, exactly (v3: sqrtPrice², v2: the reserves' ratio). */
export function marginalPrice(pool: PoolState, tokenIn: Address): Ratio {
  const zeroForOne = tokenIn === pool.token0;
  if (pool.source === 'uniswap-v3') {
    const squared = pool.sqrtPriceX96 * pool.sqrtPriceX96;
    return zeroForOne ? { numerator: squared, denominator: Q192 } : { numerator: Q192, denominator: squared };
  }
  return zeroForOne
    ? { numerator: pool.reserve1, denominator: pool.reserve0 }
    : { numerator: pool.reserve0, denominator: pool.reserve1 };
}

/**
 * `amountIn` of `tokenIn` sold into the pool. Throws `PoolShortfallError`: 'insufficient-state' when the answer
 * needs ticks not in memory, 'insufficient-liquidity' when the pool cannot take the whole amount (the price limit
 * is reached first, or the contract would revert).
 */
export function swapExactIn(pool: PoolState, tokenIn: Address, amountIn: bigint): PoolSwap {
  const zeroForOne = tokenIn === pool.token0;
  try {
    if (pool.source === 'uniswap-v3') {
      const result = simulateV3Swap(pool, { zeroForOne, amountSpecified: amountIn });
      if (!result.complete || result.amountOut === 0n)
        throw new PoolShortfallError('insufficient-liquidity', pool.address);
      return {
        amountIn,
        amountOut: result.amountOut,
        ticksCrossed: result.ticksCrossed,
        gasEstimate: V3_HOP_GAS + V3_TICK_GAS * BigInt(result.ticksCrossed),
      };
    }
    const [reserveIn, reserveOut] = zeroForOne ? [pool.reserve0, pool.reserve1] : [pool.reserve1, pool.reserve0];
    const amountOut = getAmountOut(amountIn, reserveIn, reserveOut);
    if (amountOut === 0n) throw new PoolShortfallError('insufficient-liquidity', pool.address);
    return { amountIn, amountOut, ticksCrossed: 0, gasEstimate: V2_HOP_GAS };
  } catch (error) {
    if (error instanceof DexMathError) throw new PoolShortfallError('insufficient-liquidity', pool.address);
    throw error;
  }
}

/** The input of `tokenIn` that buys exactly `amountOut` of the other token from the pool; throws as `swapExactIn`. */
export function swapExactOut(pool: PoolState, tokenIn: Address, amountOut: bigint): PoolSwap {
  const zeroForOne = tokenIn === pool.token0;
  try {
    if (pool.source === 'uniswap-v3') {
      const result = simulateV3Swap(pool, { zeroForOne, amountSpecified: -amountOut });
      if (!result.complete) throw new PoolShortfallError('insufficient-liquidity', pool.address);
      return {
        amountIn: result.amountIn,
        amountOut,
        ticksCrossed: result.ticksCrossed,
        gasEstimate: V3_HOP_GAS + V3_TICK_GAS * BigInt(result.ticksCrossed),
      };
    }
    const [reserveIn, reserveOut] = zeroForOne ? [pool.reserve0, pool.reserve1] : [pool.reserve1, pool.reserve0];
    return {
      amountIn: getAmountIn(amountOut, reserveIn, reserveOut),
      amountOut,
      ticksCrossed: 0,
      gasEstimate: V2_HOP_GAS,
    };
  } catch (error) {
    if (error instanceof DexMathError) throw new PoolShortfallError('insufficient-liquidity', pool.address);
    throw error;
  }
}
