import { createUnsettledBlocks } from '../unsettledBlocks.js';

/** A record a follower wrote `seen` at a block, waiting for its confirmation depth. */
export interface SeenRecord {
  blockNumber: bigint;
  /** Lower-case hex, as recorded. */
  blockHash: string;
}

/** What a watcher does with its `seen` records once the follower has checked them against the chain. */
export interface SettlingHooks<R extends SeenRecord> {
  /** The `seen` records at or below `maxBlockNumber` (every one when undefined: after a rewind). */
  listSeen(maxBlockNumber: bigint | undefined): Promise<R[]>;
  /** `record`'s block is no longer canonical: mark it removed (conditionally); the removed record, or null. */
  remove(record: R): Promise<R | null>;
  /** These records are deep enough and still in their blocks, in the order listed: confirm and hand them on. */
  confirm(records: R[]): Promise<R[]>;
}

export interface Settling<R extends SeenRecord> {
  /** A `seen` record was committed at this block (see `unsettledBlocks.ts`). */
  note(blockNumber: bigint): void;
  /** A pass's settling: the `seen` records deep enough at `head` (every one after a rewind), when any may be. */
  settle(head: bigint, rewound: boolean, canonicalHash: (blockNumber: bigint) => Promise<string | null>): Promise<void>;
  /** Settles these records now (those not deep enough are only checked for removal); the ones that changed. */
  settleRecords(
    head: bigint,
    records: readonly R[],
    canonicalHash: (blockNumber: bigint) => Promise<string | null>,
  ): Promise<R[]>;
}

/**
 * The confirmation rule, one for every follower: a record in block b is confirmed once
 * `head - b + 1 >= max(1, confirmations)` and b's hash is still the recorded one (re-read from the chain); a record
 * whose block changed is removed, whatever its depth (after a rewind every `seen` record is a candidate, so the
 * reorged ones leave at once). The settling read is skipped while no `seen` record can be deep enough
 * (`unsettledBlocks.ts`).
 */
export function createSettling<R extends SeenRecord>(params: {
  confirmations: number;
  now: () => number;
  hooks: SettlingHooks<R>;
}): Settling<R> {
  const { hooks } = params;
  const depth = BigInt(Math.max(1, params.confirmations));
  const unsettled = createUnsettledBlocks(params.now);

  async function settleRecords(
    head: bigint,
    records: readonly R[],
    canonicalHash: (blockNumber: bigint) => Promise<string | null>,
  ): Promise<R[]> {
    const tip = head - depth + 1n;
    const changed: R[] = [];
    const confirmable: R[] = [];
    for (const record of records) {
      if ((await canonicalHash(record.blockNumber)) !== record.blockHash) {
        const removed = await hooks.remove(record);
        if (removed !== null) changed.push(removed);
      } else if (record.blockNumber <= tip) confirmable.push(record);
    }
    if (confirmable.length > 0) changed.push(...(await hooks.confirm(confirmable)));
    return changed;
  }

  return {
    note: (blockNumber) => unsettled.add(blockNumber),
    async settle(head, rewound, canonicalHash) {
      const tip = head - depth + 1n;
      if (!rewound && !unsettled.due(tip)) return;
      const settled = unsettled.reading();
      const candidates = await hooks.listSeen(rewound ? undefined : tip);
      if (candidates.length > 0) await settleRecords(head, candidates, canonicalHash);
      settled(tip);
    },
    settleRecords,
  };
}
