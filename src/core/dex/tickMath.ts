/**
 * Uniswap v3's TickMath on bigints, step for step as the contract computes it (same constants, same truncations),
 * so the square-root prices and ticks are the pool's own to the last bit, not an approximation of 1.0001^tick.
 */
import { DexMathError, MAX_UINT256 } from './fullMath.js';

export const MIN_TICK = -887272;
export const MAX_TICK = 887272;
export const MIN_SQRT_RATIO = 4295128739n;
export const MAX_SQRT_RATIO = 1461446703485210103287273052203988822378723970342n;

/** 2^128 / sqrt(1.0001)^(2^i) in Q128.128, for i = 1 … 19 (bit 0 starts the product). */
const FACTORS: readonly bigint[] = [
  0xfff97272373d413259a46990580e213an,
  0xfff2e50f5f656932ef12357cf3c7fdccn,
  0xffe5caca7e10e4e61c3624eaa0941cd0n,
  0xffcb9843d60f6159c9db58835c926644n,
  0xff973b41fa98c081472e6896dfb254c0n,
  0xff2ea16466c96a3843ec78b326b52861n,
  0xfe5dee046a99a2a811c461f1969c3053n,
  0xfcbe86c7900a88aedcffc83b479aa3a4n,
  0xf987a7253ac413176f2b074cf7815e54n,
  0xf3392b0822b70005940c7a398e4b70f3n,
  0xe7159475a2c29b7443b29c7fa6e889d9n,
  0xd097f3bdfd2022b8845ad8f792aa5825n,
  0xa9f746462d870fdf8a65dc1f90e061e5n,
  0x70d869a156d2a1b890bb3df62baf32f7n,
  0x31be135f97d08fd981231505542fcfa6n,
  0x9aa508b5b7a84e1c677de54f3e99bc9n,
  0x5d6af8dedb81196699c329225ee604n,
  0x2216e584f5fa1ea926041bedfe98n,
  0x48a170391f7dc42444e8fa2n,
];

/** Q64.96 sqrt(1.0001^tick), as TickMath.getSqrtRatioAtTick; reverts ('T') beyond ±MAX_TICK. */
export function getSqrtRatioAtTick(tick: number): bigint {
  const absTick = tick < 0 ? -tick : tick;
  if (!Number.isInteger(tick) || absTick > MAX_TICK) throw new DexMathError('T');
  let ratio = (absTick & 1) !== 0 ? 0xfffcb933bd6fad37aa2d162d1a594001n : 0x100000000000000000000000000000000n;
  for (let bit = 1; bit < 20; bit++) {
    if ((absTick & (1 << bit)) !== 0) ratio = (ratio * FACTORS[bit - 1]!) >> 128n;
  }
  if (tick > 0) ratio = MAX_UINT256 / ratio;
  // Q128.128 to Q64.96 rounding up, so getTickAtSqrtRatio of the result is the tick itself.
  return (ratio >> 32n) + ((ratio & 0xffffffffn) === 0n ? 0n : 1n);
}

/** The index of the most significant set bit of x > 0 (BitMath.mostSignificantBit). */
export function mostSignificantBit(x: bigint): number {
  let msb = 0;
  for (const shift of [128, 64, 32, 16, 8, 4, 2, 1]) {
    const s = BigInt(shift);
    if (x >= 1n << s) {
      x >>= s;
      msb += shift;
    }
  }
  return msb;
}

/** The index of the least significant set bit of x > 0 (BitMath.leastSignificantBit). */
export function leastSignificantBit(x: bigint): number {
  return mostSignificantBit(x & -x);
}

const LOG_SQRT10001 = 255738958999603826347141n;
const TICK_LOW_OFFSET = 3402992956809132418596140100660247210n;
const TICK_HIGH_OFFSET = 291339464771989622907027621153398088495n;

/**
 * The greatest tick whose sqrt ratio is ≤ sqrtPriceX96, as TickMath.getTickAtSqrtRatio (the same 14-bit log2 and
 * the same final check); reverts ('R') outside [MIN_SQRT_RATIO, MAX_SQRT_RATIO).
 */
export function getTickAtSqrtRatio(sqrtPriceX96: bigint): number {
  if (sqrtPriceX96 < MIN_SQRT_RATIO || sqrtPriceX96 >= MAX_SQRT_RATIO) throw new DexMathError('R');
  const ratio = sqrtPriceX96 << 32n;
  const msb = mostSignificantBit(ratio);
  let r = msb >= 128 ? ratio >> BigInt(msb - 127) : ratio << BigInt(127 - msb);
  let log2 = BigInt(msb - 128) << 64n;
  for (let bit = 63n; bit >= 50n; bit--) {
    r = (r * r) >> 127n;
    const f = r >> 128n;
    log2 |= f << bit;
    r >>= f;
  }
  const logSqrt10001 = log2 * LOG_SQRT10001;
  // Arithmetic shifts of signed values: BigInt's >> floors, as the EVM's sar does.
  const tickLow = Number((logSqrt10001 - TICK_LOW_OFFSET) >> 128n);
  const tickHigh = Number((logSqrt10001 + TICK_HIGH_OFFSET) >> 128n);
  if (tickLow === tickHigh) return tickLow;
  return getSqrtRatioAtTick(tickHigh) <= sqrtPriceX96 ? tickHigh : tickLow;
}
