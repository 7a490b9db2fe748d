/**
 * How long a watcher may go without its settling read (the `seen` records deep enough to confirm) even when it
 * knows of nothing to settle: the bound on a record it did not write itself, e.g. by the instance that led the
 * solver just before it (on PostgreSQL two may overlap for a moment).
 */
export const SETTLE_READ_INTERVAL_MS = 10_000;

/**
 * The blocks where a watcher's `seen` records may be waiting for their confirmation depth, so that a pass whose
 * confirmable tip reaches none of them skips its settling read. Every pass on every chain made that read (three
 * queries a block on the devnet, most of an idle gateway's database work), and it finds something only after the
 * watcher itself recorded a transfer or deposit: the solver runs in one instance at a time, and only its watchers
 * write `seen` records. A block is noted after the commit that wrote the record, and a read clears only the blocks
 * noted before it started, up to the tip it settled, so a record committed during a read is read again.
 *
 * Until the first read, and every `SETTLE_READ_INTERVAL_MS` whatever is noted, a pass reads anyway; a restart after
 * a crash starts with nothing noted and so reads, and the watcher notes its stored cursor's block so the reads go
 * on until the records a previous run left below it are deep enough.
 */
export interface UnsettledBlocks {
  /** A `seen` record was committed at this block. */
  add(blockNumber: bigint): void;
  /** Whether a settling read up to `tip` (the newest block deep enough to confirm) may find anything. */
  due(tip: bigint): boolean;
  /** Starts a settling read; call the result once every `seen` record up to `tip` it read is settled. */
  reading(): (tip: bigint) => void;
}

export function createUnsettledBlocks(
  now: () => number,
  intervalMs: number = SETTLE_READ_INTERVAL_MS,
): UnsettledBlocks {
  let noted: Array<{ blockNumber: bigint; order: number }> = [];
  let order = 0;
  let lastRead: number | undefined;
  return {
    add(blockNumber) {
      noted.push({ blockNumber, order: ++order });
    },
    due(tip) {
      return (
        lastRead === undefined || now() - lastRead >= intervalMs || noted.some((entry) => entry.blockNumber <= tip)
      );
    },
    reading() {
      const before = order;
      return (tip) => {
        lastRead = now();
        noted = noted.filter((entry) => entry.order > before || entry.blockNumber > tip);
      };
    },
  };
}
