import type { Kysely } from 'kysely';
import type { Logger } from '../../core/logger.js';
import { getCursor, setCursor, type ChainCursor } from '../../store/cursors.repository.js';
import type { Tables } from '../../store/tables.js';
import { cursorWriteDue } from '../cursorWrites.js';

/** A block and its hash, as the cursor keeps them. */
export interface BlockAt {
  blockNumber: bigint;
  blockHash: string;
}

export interface CreateFollowerCursorParameters {
  db: Kysely<Tables>;
  chainId: number;
  /** The `chain_cursors` name. */
  name: string;
  now: () => number;
  log: Logger;
  context: object;
  label: string;
  /** How long blocks without records may be read before the stored cursor moves (`cursorWrites.ts`). */
  writeIntervalMs: number;
  /** First run only: the first block to read; undefined reads from the head. */
  startBlock?: (() => bigint | undefined) | undefined;
}

/**
 * The follower's cursor: the last block read, with its hash, in memory (`current`) and as last stored. The stored
 * one moves in the transaction that records what its blocks held, or alone every `writeIntervalMs` through blocks
 * that held nothing, and at stop; so a restart resumes from the last block whose records were written, or a little
 * before it, and never after.
 */
export interface FollowerCursor {
  current(): ChainCursor | undefined;
  /** The stored cursor, or on a first run a new one just before the start block (or the head). */
  load(head: bigint, canonicalHash: (blockNumber: bigint) => Promise<string | null>): Promise<ChainCursor>;
  /** Whether a range that recorded `recorded` rows must store the cursor. */
  writeDue(recorded: number): boolean;
  /** Writes the cursor at `at` through `db` (a transaction's, to move with the records); `commit` adopts it. */
  write(db: Kysely<Tables>, at: BlockAt): Promise<ChainCursor>;
  /** Adopts a cursor written by `write`, once its transaction committed. */
  commit(row: ChainCursor): void;
  /** Moves the cursor in memory only, past blocks that held nothing. */
  skip(at: BlockAt): void;
  /** Stores the cursor when blocks without records moved it past the stored one; a failure is logged. */
  storeAtStop(): Promise<void>;
}

export function createFollowerCursor(params: CreateFollowerCursorParameters): FollowerCursor {
  const { db, chainId, name, now, log, context, label } = params;
  let cursor: ChainCursor | undefined;
  let stored: ChainCursor | undefined;
  const write = (into: Kysely<Tables>, at: BlockAt) => setCursor(into, { chainId, name, ...at, now: now() });
  const commit = (row: ChainCursor) => {
    cursor = stored = row;
  };

  return {
    current: () => cursor,
    async load(head, canonicalHash) {
      stored = await getCursor(db, chainId, name);
      if (stored !== undefined) return (cursor = stored);
      const first = params.startBlock?.() ?? head;
      // The cursor is the last block read. Block 0 (genesis) holds no transactions, so starting at 0 reads from 1.
      const blockNumber = first > 0n ? first - 1n : 0n;
      const blockHash = await canonicalHash(blockNumber);
      if (blockHash === null) throw new Error(`start block ${first} of chain ${chainId} is beyond its head ${head}`);
      commit(await write(db, { blockNumber, blockHash }));
      log.info({ ...context, fromBlock: blockNumber + 1n }, `${label}: first run, reading from this block`);
      return cursor!;
    },
    writeDue: (recorded) => cursorWriteDue(stored, recorded, now(), params.writeIntervalMs),
    write,
    commit,
    skip(at) {
      if (cursor !== undefined) cursor = { ...cursor, ...at };
    },
    async storeAtStop() {
      if (cursor === undefined || cursor === stored) return;
      try {
        const { blockNumber, blockHash } = cursor;
        stored = await write(db, { blockNumber, blockHash });
      } catch (error) {
        // The next start reads those blocks again.
        log.warn({ ...context, err: error }, `${label}: the cursor could not be stored at stop`);
      }
    },
  };
}
