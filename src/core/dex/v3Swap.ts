/**
 * UniswapV3Pool.swap's loop on a pool's state in memory: the same steps from initialized tick to initialized tick
 * (TickBitmap.nextInitializedTickWithinOneWord over the loaded words), crossing each with its liquidityNet, so the
 * amounts are the pool's own to the wei. The loop reads only what the pool itself would read; when that is a bitmap
 * word outside the loaded window, it stops with "insufficient state" rather than guess.
 */
import { DexMathError } from './fullMath.js';
import { PoolShortfallError, type V3PoolState } from './poolState.js';
import { computeSwapStep } from './swapMath.js';
import {
  getSqrtRatioAtTick,
  getTickAtSqrtRatio,
  leastSignificantBit,
  MAX_SQRT_RATIO,
  MAX_TICK,
  MIN_SQRT_RATIO,
  MIN_TICK,
  mostSignificantBit,
} from './tickMath.js';

export interface V3SwapParameters {
  zeroForOne: boolean;
  /** > 0: exact input of this much; < 0: exact output of its absolute value. */
  amountSpecified: bigint;
  /** The price the swap may not pass; default the extreme QuoterV2 and SwapRouter use (MIN + 1 or MAX − 1). */
  sqrtPriceLimitX96?: bigint;
}

export interface V3SwapResult {
  /** What the pool takes, fee included. */
  amountIn: bigint;
  amountOut: bigint;
  sqrtPriceX96After: bigint;
  tickAfter: number;
  liquidityAfter: bigint;
  /** Initialized ticks crossed (each costs the swap gas). */
  ticksCrossed: number;
  /** Whether the whole specified amount was swapped (false: the price limit was reached first). */
  complete: boolean;
}

/** The word position of a compressed tick (TickBitmap.position): its bit is `compressed & 255`. */
export const wordOf = (compressed: number): number => compressed >> 8;

/** A tick divided by the spacing, rounded toward negative infinity. */
export const compress = (tick: number, tickSpacing: number): number => Math.floor(tick / tickSpacing);

/** TickBitmap.nextInitializedTickWithinOneWord on the loaded words. */
function nextInitializedTick(pool: V3PoolState, tick: number, lte: boolean): { next: number; initialized: boolean } {
  const spacing = pool.tickSpacing;
  const compressed = compress(tick, spacing);
  const target = lte ? compressed : compressed + 1;
  const word = wordOf(target);
  if (word < pool.minWord || word > pool.maxWord) throw new PoolShortfallError('insufficient-state', pool.address);
  const bitPos = target & 255;
  const bits = pool.bitmap.get(word) ?? 0n;
  if (lte) {
    const masked = bits & ((1n << BigInt(bitPos + 1)) - 1n);
    return masked !== 0n
      ? { next: (compressed - (bitPos - mostSignificantBit(masked))) * spacing, initialized: true }
      : { next: (compressed - bitPos) * spacing, initialized: false };
  }
  const masked = bits & ~((1n << BigInt(bitPos)) - 1n);
  return masked !== 0n
    ? { next: (target + (leastSignificantBit(masked) - bitPos)) * spacing, initialized: true }
    : { next: (target + (255 - bitPos)) * spacing, initialized: false };
}

const MAX_UINT128 = (1n << 128n) - 1n;

/** The pool's swap, simulated: throws `PoolShortfallError` past the loaded window, `DexMathError` where it reverts. */
export function simulateV3Swap(pool: V3PoolState, params: V3SwapParameters): V3SwapResult {
  const { zeroForOne, amountSpecified } = params;
  if (amountSpecified === 0n) throw new DexMathError('AS');
  const limit = params.sqrtPriceLimitX96 ?? (zeroForOne ? MIN_SQRT_RATIO + 1n : MAX_SQRT_RATIO - 1n);
  const limitValid = zeroForOne
    ? limit < pool.sqrtPriceX96 && limit > MIN_SQRT_RATIO
    : limit > pool.sqrtPriceX96 && limit < MAX_SQRT_RATIO;
  if (!limitValid) throw new DexMathError('SPL');
  const exactInput = amountSpecified > 0n;
  const fee = BigInt(pool.fee);

  let remaining = amountSpecified;
  let calculated = 0n;
  let sqrtPriceX96 = pool.sqrtPriceX96;
  let tick = pool.tick;
  let liquidity = pool.liquidity;
  let ticksCrossed = 0;

  while (remaining !== 0n && sqrtPriceX96 !== limit) {
    const start = sqrtPriceX96;
    const found = nextInitializedTick(pool, tick, zeroForOne);
    const initialized = found.initialized;
    const next = Math.min(Math.max(found.next, MIN_TICK), MAX_TICK);
    const sqrtPriceNext = getSqrtRatioAtTick(next);
    const target = (zeroForOne ? sqrtPriceNext < limit : sqrtPriceNext > limit) ? limit : sqrtPriceNext;
    const step = computeSwapStep(sqrtPriceX96, target, liquidity, remaining, fee);
    sqrtPriceX96 = step.sqrtRatioNextX96;
    if (exactInput) {
      remaining -= step.amountIn + step.feeAmount;
      calculated -= step.amountOut;
    } else {
      remaining += step.amountOut;
      calculated += step.amountIn + step.feeAmount;
    }
    if (sqrtPriceX96 === sqrtPriceNext) {
      if (initialized) {
        const net = pool.liquidityNet.get(next);
        if (net === undefined) throw new PoolShortfallError('insufficient-state', pool.address);
        liquidity += zeroForOne ? -net : net;
        if (liquidity < 0n || liquidity > MAX_UINT128) throw new DexMathError(liquidity < 0n ? 'LS' : 'LA');
        ticksCrossed++;
      }
      tick = zeroForOne ? next - 1 : next;
    } else if (sqrtPriceX96 !== start) {
      tick = getTickAtSqrtRatio(sqrtPriceX96);
    }
  }

  const swapped = amountSpecified - remaining;
  return {
    amountIn: exactInput ? swapped : calculated,
    amountOut: exactInput ? -calculated : -swapped,
    sqrtPriceX96After: sqrtPriceX96,
    tickAfter: tick,
    liquidityAfter: liquidity,
    ticksCrossed,
    complete: remaining === 0n,
  };
}
