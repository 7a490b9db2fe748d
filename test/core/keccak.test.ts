/** The fast keccak used for order ids agrees with viem's on every length across the block boundaries. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keccak256 } from 'viem';
import { keccak256Bytes } from '../../src/core/keccak.js';

describe('keccak256Bytes', () => {
  it('matches viem keccak256 on every length up to four blocks, and on long inputs', () => {
    const lengths = [...Array.from({ length: 4 * 136 + 2 }, (_, i) => i), 2000, 65_536, 200_000];
    for (const length of lengths) {
      const data = randomBytes(length);
      expect(keccak256Bytes(data), `length ${length}`).toBe(keccak256(data));
    }
  });

  it('hashes a view into a larger buffer', () => {
    const data = randomBytes(300);
    expect(keccak256Bytes(data.subarray(7, 250))).toBe(keccak256(data.subarray(7, 250)));
    expect(keccak256Bytes(new Uint8Array())).toBe(keccak256('0x'));
  });
});
