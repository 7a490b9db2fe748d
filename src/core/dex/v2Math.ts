/**
 * UniswapV2Library.getAmountOut / getAmountIn: the 0.3% fee as 997/1000 and the contract's floor (out) and floor
 * plus one (in), with its reverts.
 */
import { DexMathError, MAX_UINT256 } from './fullMath.js';

/** The 256-bit product the contract's SafeMath computes, reverting ('ds-math-mul-overflow') past 2^256. */
function mul(a: bigint, b: bigint): bigint {
  const product = a * b;
  if (product > MAX_UINT256) throw new DexMathError('ds-math-mul-overflow');
  return product;
}

/** The output of `amountIn` sold into a pair holding `reserveIn` and `reserveOut`. */
export function getAmountOut(amountIn: bigint, reserveIn: bigint, reserveOut: bigint): bigint {
  if (amountIn <= 0n) throw new DexMathError('UniswapV2Library: INSUFFICIENT_INPUT_AMOUNT');
  if (reserveIn <= 0n || reserveOut <= 0n) throw new DexMathError('UniswapV2Library: INSUFFICIENT_LIQUIDITY');
  const amountInWithFee = mul(amountIn, 997n);
  const numerator = mul(amountInWithFee, reserveOut);
  const denominator = mul(reserveIn, 1000n) + amountInWithFee;
  if (denominator > MAX_UINT256) throw new DexMathError('ds-math-add-overflow');
  return numerator / denominator;
}

/** The input that buys `amountOut` from a pair holding `reserveIn` and `reserveOut`. */
export function getAmountIn(amountOut: bigint, reserveIn: bigint, reserveOut: bigint): bigint {
  if (amountOut <= 0n) throw new DexMathError('UniswapV2Library: INSUFFICIENT_OUTPUT_AMOUNT');
  if (reserveIn <= 0n || reserveOut <= 0n) throw new DexMathError('UniswapV2Library: INSUFFICIENT_LIQUIDITY');
  if (amountOut >= reserveOut) throw new DexMathError('ds-math-sub-underflow');
  const numerator = mul(mul(reserveIn, amountOut), 1000n);
  const denominator = mul(reserveOut - amountOut, 997n);
  return numerator / denominator + 1n;
}
