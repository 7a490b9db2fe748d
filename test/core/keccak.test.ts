/** The fast keccak used for order ids agrees with viem's on every length, block boundaries included. */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { keccak256, toHex } from 'viem';
import { keccak256Hex } from '../../src/core/keccak.js';

describe('keccak256Hex', () => {
  it('matches viem keccak256 for empty, short, block-sized and long inputs', () => {
    for (const length of [0, 1, 31, 32, 135, 136, 137, 272, 1000, 4096]) {
      const data = toHex(randomBytes(length));
      expect(keccak256Hex(data), `length ${length}`).toBe(keccak256(data));
    }
  });
});
