import jsSha3 from 'js-sha3';
import type { Hex } from 'viem';

/**
 * keccak256 of hex data. The same function as viem's `keccak256`, computed with js-sha3, which is about four
 * times faster on the few kilobytes of an encoded order (68 µs against 298 µs for 2.5 KB on the reference
 * machine); every quote hashes one. `test/core/keccak.test.ts` checks both agree.
 */
export function keccak256Hex(data: Hex): Hex {
  return `0x${jsSha3.keccak_256(Buffer.from(data.slice(2), 'hex'))}`;
}
