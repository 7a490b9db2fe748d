import type { Kysely } from 'kysely';
import type { PublicClient } from 'viem';
import type { Logger } from '../../core/logger.js';
import type { Tables } from '../../store/tables.js';
import { CURSOR_WRITE_INTERVAL_MS } from '../cursorWrites.js';
import { announcedBlock, blockHashReader, createHeadLoop, type Head, type HeadFeed } from '../heads.js';
import type { HeaderLogHints } from '../logsBloom.js';
import { createFollowerCursor } from './cursor.js';
import { createOutageLog } from './outage.js';
import { createSettling, type SeenRecord, type SettlingHooks } from './settling.js';

/** One range of new blocks for a watcher to read. */
export interface FollowedRange {
  fromBlock: bigint;
  toBlock: bigint;
  /**
   * The header of the range's one block when a pushed head announced it: what it proves (no transaction, a logs
   * bloom without an address) may spare the read.
   */
  header: HeaderLogHints | undefined;
}

/** What a watcher adds to the follower: what it reads, what it records, and what it does with what settles. */
export interface ChainFollowerHooks<F, R extends SeenRecord> extends SettlingHooks<R> {
  /** What the range's blocks hold for the watcher (logs, transfers), not yet recorded. */
  read(range: FollowedRange): Promise<F[]>;
  /** Records what `read` found, in the transaction that moves the cursor; the blocks of the `seen` records written. */
  record(trx: Kysely<Tables>, found: F[]): Promise<bigint[]>;
  /** At start, before the first pass: hands on again what a crash left confirmed and not yet consumed. */
  resume?(): Promise<void>;
  /** The cursor's block was reorged away and the cursor moved back to `toBlock` (once per rewind). */
  onRewind?(toBlock: bigint): void;
  /** After each pass's reads and settling (not while stopping): `rewound` when the pass rewound the cursor. */
  afterPass?(head: bigint, rewound: boolean): Promise<void>;
}

export interface CreateChainFollowerParameters<F, R extends SeenRecord> {
  chainId: number;
  blockTime: number;
  confirmations: number;
  client: PublicClient;
  db: Kysely<Tables>;
  log: Logger;
  now: () => number;
  /** The `chain_cursors` name. */
  cursorName: string;
  /** Names the watcher in its logs (`deposit watcher`), with `context` added to each entry. */
  label: string;
  context: object;
  hooks: ChainFollowerHooks<F, R>;
  /** Most blocks per range. */
  maxBlockRange: bigint;
  /** Blocks the cursor moves back, to read again, when its own block was reorged away. Default 64. */
  reorgWindow?: bigint | undefined;
  /** See `CreateHeadLoopParameters.pollIntervalMs`. */
  pollIntervalMs?: number | undefined;
  /** The chain's pushed heads: each one starts a pass at once; polling backs them up. */
  heads?: HeadFeed | undefined;
  /** How long blocks without records may be read before the stored cursor moves (`cursorWrites.ts`). */
  cursorWriteIntervalMs?: number | undefined;
  /** First run only (no stored cursor): the first block to read. Default: the head at that moment. */
  startBlock?: (() => bigint | undefined) | undefined;
}

export interface ChainFollower<R extends SeenRecord> {
  /** Listens for heads, runs the first pass and resolves, then keeps following; throws when started twice. */
  start(): Promise<void>;
  /** Ends the loop, awaits the pass in flight and stores the cursor. */
  stop(): Promise<void>;
  /** Whether `stop` was called. */
  stopping(): boolean;
  /** One pass now, after the one in flight; `force` reads even when the head did not move. Never throws. */
  pass(force?: boolean): Promise<void>;
  /** The last block read, or undefined before the first pass. */
  followedBlock(): bigint | undefined;
  /** A `seen` record was committed outside a pass (an indexed transaction, a rescan) at this block. */
  noteSeen(blockNumber: bigint): void;
  /** Settles these records at `head` now, outside a pass; the ones that changed. */
  settleRecords(head: bigint, records: readonly R[]): Promise<R[]>;
}

/**
 * Follows one chain's blocks for one watcher: the loop (a pass at each pushed head, polling as the fallback), the
 * cursor, the reorg rewind, the ranges and the confirmation depth. A pass:
 *
 * 1. takes the head from the newest pushed head not yet processed (its hash and its parent's come with it, no
 *    reads) or from `eth_blockNumber`; a head equal to the last completed pass's does nothing (unless forced), and
 *    a head below the cursor (a lagging node, a chain rewound and not yet longer) waits;
 * 2. when the cursor's block is no longer canonical, moves the cursor back `reorgWindow` blocks, stores it at once
 *    and tells the watcher (`onRewind`), so that window is read again;
 * 3. reads each range of at most `maxBlockRange` blocks up to the head: the range end's hash first (a reorg after it
 *    changes the cursor's block, so the next pass notices), then the watcher's `read`, then its `record` with the
 *    cursor in one transaction (ranges that held nothing move the stored cursor only now and then: `cursor.ts`),
 *    then settles (`settling.ts`), so a long backfill hands records on as it goes; a pass that read nothing
 *    settles once;
 * 4. runs the watcher's `afterPass`.
 *
 * A failed pass is logged (`outage.ts`) and retried by the next one; nothing is thrown from the loop.
 */
export function createChainFollower<F, R extends SeenRecord>(
  params: CreateChainFollowerParameters<F, R>,
): ChainFollower<R> {
  const { chainId, client, db, log, hooks, context, label, maxBlockRange } = params;
  const reorgWindow = params.reorgWindow ?? 64n;
  if (maxBlockRange < 1n) throw new RangeError(`maxBlockRange must be at least 1, got ${maxBlockRange}`);
  if (reorgWindow < 1n) throw new RangeError(`reorgWindow must be at least 1, got ${reorgWindow}`);
  const cursor = createFollowerCursor({
    db,
    chainId,
    name: params.cursorName,
    now: params.now,
    log,
    context,
    label,
    writeIntervalMs: params.cursorWriteIntervalMs ?? CURSOR_WRITE_INTERVAL_MS,
    startBlock: params.startBlock,
  });
  const settling = createSettling<R>({ confirmations: params.confirmations, now: params.now, hooks });
  const outage = createOutageLog(log, context, label);

  let started = false;
  let stopping = false;
  let inFlight: Promise<void> = Promise.resolve();
  /** The head the last completed pass processed: a poll that sees it again has nothing to do. */
  let processedHead: bigint | undefined;
  /** The newest head pushed and not yet processed: a pass starting from it needs no head or hash reads. */
  let pushed: Head | undefined;
  const loop = createHeadLoop({
    heads: params.heads,
    blockTime: params.blockTime,
    pollIntervalMs: params.pollIntervalMs,
    pass: () => passSafely(false),
    onHead(head) {
      if (pushed === undefined || head.number >= pushed.number) pushed = head;
    },
  });

  /** Moves the cursor back when its block is no longer canonical; whether it did. */
  async function rewindIfReorged(canonicalHash: (n: bigint) => Promise<string | null>): Promise<boolean> {
    const at = cursor.current()!;
    if ((await canonicalHash(at.blockNumber)) === at.blockHash) return false;
    const target = at.blockNumber > reorgWindow ? at.blockNumber - reorgWindow : 0n;
    const targetHash = await canonicalHash(target);
    if (targetHash === null) throw new Error(`block ${target} of chain ${chainId} not found while rewinding`);
    log.warn({ ...context, from: at.blockNumber, to: target }, `${label}: cursor block reorged away; reading again`);
    cursor.commit(await cursor.write(db, { blockNumber: target, blockHash: targetHash }));
    hooks.onRewind?.(target);
    return true;
  }

  /** Reads the next range up to `head`, records what it holds and moves the cursor. */
  async function readRange(
    head: bigint,
    known: Head | undefined,
    canonicalHash: (n: bigint) => Promise<string | null>,
  ) {
    const fromBlock = cursor.current()!.blockNumber + 1n;
    const toBlock = head < fromBlock + maxBlockRange - 1n ? head : fromBlock + maxBlockRange - 1n;
    // The range end's hash is read before the records: a reorg after this read changes the cursor's block, so the
    // next pass notices it and reads the range again, whichever chain the records came from.
    const toHash = await canonicalHash(toBlock);
    if (toHash === null) throw new Error(`block ${toBlock} of chain ${chainId} not found below head ${head}`);
    const found = await hooks.read({ fromBlock, toBlock, header: announcedBlock(known, fromBlock, toBlock) });
    const at = { blockNumber: toBlock, blockHash: toHash };
    if (!cursor.writeDue(found.length)) return cursor.skip(at);
    // The cursor alone is one statement: no transaction around it (two more round trips to the database).
    if (found.length === 0) return cursor.commit(await cursor.write(db, at));
    const { row, seen } = await db.transaction().execute(async (trx) => {
      const seen = await hooks.record(trx, found);
      return { seen, row: await cursor.write(trx, at) };
    });
    cursor.commit(row);
    for (const blockNumber of seen) settling.note(blockNumber);
  }

  async function pass(force: boolean): Promise<void> {
    // A pushed head newer than the last pass saves reading the head and the hashes of its block and its parent.
    const fromPush = pushed !== undefined && (processedHead === undefined || pushed.number > processedHead);
    const known = fromPush ? pushed : undefined;
    pushed = undefined;
    const head = known?.number ?? (await client.getBlockNumber({ cacheTime: 0 }));
    if (head === processedHead && !force) return;
    const canonicalHash = blockHashReader(client, known);
    if (cursor.current() === undefined) {
      const loaded = await cursor.load(head, canonicalHash);
      // A previous run's `seen` records are at or below its stored cursor, or in the blocks read again after it.
      settling.note(loaded.blockNumber);
    }
    if (head < cursor.current()!.blockNumber) return;
    const rewound = await rewindIfReorged(canonicalHash);
    let scanned = false;
    while (cursor.current()!.blockNumber < head && !stopping) {
      scanned = true;
      await readRange(head, known, canonicalHash);
      // Fresh hashes: the ones read before the records may predate them.
      await settling.settle(head, rewound, blockHashReader(client));
    }
    if (!scanned && !stopping) await settling.settle(head, rewound, blockHashReader(client));
    if (!stopping) await hooks.afterPass?.(head, rewound);
    if (!stopping) processedHead = head;
  }

  function passSafely(force: boolean): Promise<void> {
    inFlight = inFlight.then(() =>
      pass(force).then(
        () => outage.succeeded(),
        (error: unknown) => outage.failed(error),
      ),
    );
    return inFlight;
  }

  return {
    async start() {
      if (started) throw new Error(`The ${label} of chain ${chainId} was already started`);
      started = true;
      await hooks.resume?.();
      if (stopping) return;
      loop.listen();
      await passSafely(true);
      if (!stopping) loop.run();
    },
    async stop() {
      stopping = true;
      await loop.stop();
      await inFlight;
      await cursor.storeAtStop();
    },
    stopping: () => stopping,
    pass: passSafely,
    followedBlock: () => cursor.current()?.blockNumber,
    noteSeen: (blockNumber) => settling.note(blockNumber),
    settleRecords: (head, records) => settling.settleRecords(head, records, blockHashReader(client)),
  };
}
