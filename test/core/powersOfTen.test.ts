import { describe, expect, it } from 'vitest';
import { pow10 } from '../../src/core/powersOfTen.js';

describe('pow10', () => {
  it('is 10n ** BigInt(exponent), from the table and past it', () => {
    for (let exponent = 0; exponent <= 130; exponent++) expect(pow10(exponent)).toBe(10n ** BigInt(exponent));
  });

  it('throws as the operator does for a negative exponent or one that is not an integer', () => {
    expect(() => pow10(-1)).toThrow(RangeError);
    expect(() => pow10(1.5)).toThrow(RangeError);
    expect(() => pow10(Number.NaN)).toThrow(RangeError);
  });
});
