/**
 * Uniswap v3's SqrtPriceMath on bigints. The contract's overflow fallbacks are kept: where it computes a price
 * another way because a 256-bit product overflowed, so does this, since the two ways round differently.
 */
import { DexMathError, divRoundingUp, MAX_UINT256, mulDiv, mulDivRoundingUp, Q96, toUint160 } from './fullMath.js';

/** The price after adding (or removing) `amount` of token0, rounded up (getNextSqrtPriceFromAmount0RoundingUp). */
export function getNextSqrtPriceFromAmount0RoundingUp(
  sqrtPX96: bigint,
  liquidity: bigint,
  amount: bigint,
  add: boolean,
): bigint {
  if (amount === 0n) return sqrtPX96;
  const numerator1 = liquidity << 96n;
  const product = amount * sqrtPX96;
  // The contract's `product / amount == sqrtPX96` holds exactly when the product fits in 256 bits.
  const fits = product <= MAX_UINT256;
  if (add) {
    if (fits) {
      const denominator = numerator1 + product;
      if (denominator <= MAX_UINT256) return mulDivRoundingUp(numerator1, sqrtPX96, denominator);
    }
    return divRoundingUp(numerator1, numerator1 / sqrtPX96 + amount);
  }
  if (!fits || numerator1 <= product) throw new DexMathError('amount0 exceeds the price range');
  return toUint160(mulDivRoundingUp(numerator1, sqrtPX96, numerator1 - product));
}

/** The price after adding (or removing) `amount` of token1, rounded down (getNextSqrtPriceFromAmount1RoundingDown). */
export function getNextSqrtPriceFromAmount1RoundingDown(
  sqrtPX96: bigint,
  liquidity: bigint,
  amount: bigint,
  add: boolean,
): bigint {
  // Both of the contract's branches (shift, or mulDiv past 160 bits) compute floor(amount × 2^96 / liquidity).
  if (add) return toUint160(sqrtPX96 + mulDiv(amount, Q96, liquidity));
  const quotient = mulDivRoundingUp(amount, Q96, liquidity);
  if (sqrtPX96 <= quotient) throw new DexMathError('amount1 exceeds the price range');
  return sqrtPX96 - quotient;
}

/** The price after `amountIn` enters the pool (getNextSqrtPriceFromInput). */
export function getNextSqrtPriceFromInput(
  sqrtPX96: bigint,
  liquidity: bigint,
  amountIn: bigint,
  zeroForOne: boolean,
): bigint {
  if (sqrtPX96 <= 0n || liquidity <= 0n) throw new DexMathError('no price or no liquidity');
  return zeroForOne
    ? getNextSqrtPriceFromAmount0RoundingUp(sqrtPX96, liquidity, amountIn, true)
    : getNextSqrtPriceFromAmount1RoundingDown(sqrtPX96, liquidity, amountIn, true);
}

/** The price after `amountOut` leaves the pool (getNextSqrtPriceFromOutput). */
export function getNextSqrtPriceFromOutput(
  sqrtPX96: bigint,
  liquidity: bigint,
  amountOut: bigint,
  zeroForOne: boolean,
): bigint {
  if (sqrtPX96 <= 0n || liquidity <= 0n) throw new DexMathError('no price or no liquidity');
  return zeroForOne
    ? getNextSqrtPriceFromAmount1RoundingDown(sqrtPX96, liquidity, amountOut, false)
    : getNextSqrtPriceFromAmount0RoundingUp(sqrtPX96, liquidity, amountOut, false);
}

/** Token0 between two prices for `liquidity` (getAmount0Delta, the unsigned form). */
export function getAmount0Delta(sqrtA: bigint, sqrtB: bigint, liquidity: bigint, roundUp: boolean): bigint {
  if (sqrtA > sqrtB) [sqrtA, sqrtB] = [sqrtB, sqrtA];
  if (sqrtA <= 0n) throw new DexMathError('zero price');
  const numerator1 = liquidity << 96n;
  const numerator2 = sqrtB - sqrtA;
  return roundUp
    ? divRoundingUp(mulDivRoundingUp(numerator1, numerator2, sqrtB), sqrtA)
    : mulDiv(numerator1, numerator2, sqrtB) / sqrtA;
}

/** Token1 between two prices for `liquidity` (getAmount1Delta, the unsigned form). */
export function getAmount1Delta(sqrtA: bigint, sqrtB: bigint, liquidity: bigint, roundUp: boolean): bigint {
  if (sqrtA > sqrtB) [sqrtA, sqrtB] = [sqrtB, sqrtA];
  return roundUp ? mulDivRoundingUp(liquidity, sqrtB - sqrtA, Q96) : mulDiv(liquidity, sqrtB - sqrtA, Q96);
}
