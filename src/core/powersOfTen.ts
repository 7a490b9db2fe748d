/** 10^0 to 10^96: every sum of two currencies' and two prices' decimals a quote scales by. */
const POWERS = Array.from({ length: 97 }, (_, exponent) => 10n ** BigInt(exponent));

/**
 * 10^exponent as a bigint, exactly as `10n ** BigInt(exponent)`, which it replaces on the quote path: a quote scales
 * amounts and prices by their decimals about twenty times, and the operator computes each power again (BigInt
 * exponentiation was 2% of the main thread's samples at 64 clients). Read from a table up to 10^96; past it, and for
 * an exponent that is negative or not an integer, the operator's own result or `RangeError`.
 */
export function pow10(exponent: number): bigint {
  return POWERS[exponent] ?? 10n ** BigInt(exponent);
}
