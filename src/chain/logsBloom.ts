import { hexToBytes, type Hex } from 'viem';
import { keccak256Bytes } from '../core/keccak.js';

/** The root of an empty trie: a block's `transactionsRoot` when it holds no transaction at all. */
export const EMPTY_TRIE_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';

/** What a block header tells about the logs in its block; both are absent when the node did not send them. */
export interface HeaderLogHints {
  transactionsRoot?: string | undefined;
  logsBloom?: string | undefined;
}

/**
 * The three bits (byte index, mask) a log's address, or one of its topics, sets in the logs bloom of its block.
 */
export type BloomBits = ReadonlyArray<readonly [number, number]>;

/**
 * The bits of `value` (an address or a topic) in a 2,048-bit logs bloom (the yellow paper's M3:2048): the low 11
 * bits of each of the first three byte pairs of keccak256(value), bit 0 being the last byte's lowest.
 */
export function bloomBitsOf(value: Hex): BloomBits {
  const hash = hexToBytes(keccak256Bytes(hexToBytes(value)));
  return [0, 2, 4].map((i) => {
    const bit = ((hash[i]! << 8) | hash[i + 1]!) & 2047;
    return [255 - (bit >> 3), 1 << (bit & 7)] as const;
  });
}

/** Whether the header proves its block holds no transaction (so no transfer and no log of any kind). */
export const holdsNoTransaction = (header: HeaderLogHints): boolean =>
  header.transactionsRoot?.toLowerCase() === EMPTY_TRIE_ROOT;

const BLOOM_HEX_LENGTH = 2 + 512;
const ZERO_BLOOM = `0x${'0'.repeat(512)}`;

/**
 * False only when the header proves that none of these addresses emitted a log in its block: the block holds no
 * transaction, or its logs bloom lacks one of each address's three bits (a bloom has false positives, never false
 * negatives). True whenever it cannot tell: no header fields, a malformed bloom, or an all-zero bloom in a block that
 * has transactions (a block of plain transfers, or a node that does not fill the bloom), so nothing is ever skipped
 * on a chain whose headers do not say.
 */
export function mayHoldLogsOf(header: HeaderLogHints, addresses: readonly BloomBits[]): boolean {
  if (holdsNoTransaction(header)) return false;
  const bloom = header.logsBloom?.toLowerCase();
  if (bloom === undefined || bloom.length !== BLOOM_HEX_LENGTH || !/^0x[0-9a-f]*$/.test(bloom) || bloom === ZERO_BLOOM)
    return true;
  return addresses.some((bits) =>
    bits.every(([index, mask]) => (Number.parseInt(bloom.slice(2 + index * 2, 4 + index * 2), 16) & mask) !== 0),
  );
}
