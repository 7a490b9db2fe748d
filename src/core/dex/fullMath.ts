/**
 * The uint256 arithmetic of Uniswap's pool libraries (FullMath, UnsafeMath, SafeCast) on bigints. A bigint never
 * overflows, so each check the contract makes by overflowing or reverting is made here explicitly: a value that the
 * contract could not hold is a `DexMathError` with the contract's revert reason, never a silently larger number.
 */

export const MAX_UINT256 = (1n << 256n) - 1n;
export const MAX_UINT160 = (1n << 160n) - 1n;
export const MAX_UINT128 = (1n << 128n) - 1n;
export const Q96 = 1n << 96n;

/** A computation the contract would revert (the reason is the contract's, where it gives one). */
export class DexMathError extends Error {
  override readonly name = 'DexMathError';
  constructor(readonly reason: string) {
    super(`pool math reverts: ${reason}`);
  }
}

/** floor(a × b / denominator), reverting as FullMath.mulDiv does on a zero denominator or a result ≥ 2^256. */
export function mulDiv(a: bigint, b: bigint, denominator: bigint): bigint {
  if (denominator === 0n) throw new DexMathError('mulDiv by zero');
  const result = (a * b) / denominator;
  if (result > MAX_UINT256) throw new DexMathError('mulDiv overflow');
  return result;
}

/** ceil(a × b / denominator), as FullMath.mulDivRoundingUp. */
export function mulDivRoundingUp(a: bigint, b: bigint, denominator: bigint): bigint {
  if (denominator === 0n) throw new DexMathError('mulDiv by zero');
  const product = a * b;
  let result = product / denominator;
  if (product % denominator !== 0n) result++;
  if (result > MAX_UINT256) throw new DexMathError('mulDiv overflow');
  return result;
}

/** ceil(x / y) for y > 0, as UnsafeMath.divRoundingUp (the callers guarantee y > 0). */
export function divRoundingUp(x: bigint, y: bigint): bigint {
  const quotient = x / y;
  return x % y === 0n ? quotient : quotient + 1n;
}

/** SafeCast.toUint160. */
export function toUint160(x: bigint): bigint {
  if (x > MAX_UINT160) throw new DexMathError('toUint160');
  return x;
}
