import type { Kysely } from 'kysely';
import {
  BaseError,
  getAbiItem,
  isAddressEqual,
  parseEventLogs,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  zeroAddress,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { depositoryAbi, receiverAbi } from '../../generated/contracts/index.js';
import { finalityDepthOf, type ChainConfig } from '../core/chains/types.js';
import type { GatewayMetrics } from '../core/metrics.js';
import type { Logger } from '../core/logger.js';
import { GatewayError } from '../core/errors.js';
import type { DepositWatcher, DepositWatcherOptions } from '../core/solver/ports.js';
import { solverCarrierOf } from '../core/solver/solverCarrier.js';
import { CURSOR_WRITE_INTERVAL_MS, cursorWriteDue } from './cursorWrites.js';
import { announcedBlock, blockHashReader, createHeadLoop, type Head, type HeadFeed } from './heads.js';
import { bloomBitsOf, mayHoldLogsOf } from './logsBloom.js';
import { createUnsettledBlocks } from './unsettledBlocks.js';
import { getCursor, setCursor, type ChainCursor } from '../store/cursors.repository.js';
import {
  confirmDepositsAtBlocks,
  insertDeposits,
  listChainDeposits,
  markDepositReorged,
  moveConsumedDeposit,
  reviveDeposit,
  updateDepositStatusAtBlock,
  type DepositRecord,
} from '../store/deposits.repository.js';
import { normalizeHex } from '../store/mappers.js';
import type { RequestRecord } from '../store/requestRecord.js';
import type { Tables } from '../store/tables.js';
import { rpcGatewayError } from './rpcErrors.js';

/** The `chain_cursors` name of the deposit watcher. */
export const DEPOSITS_CURSOR = 'deposits';

const depositEvents = [
  getAbiItem({ abi: depositoryAbi, name: 'Deposit' }),
  getAbiItem({ abi: receiverAbi, name: 'FundsForwarded' }),
] as const;

export interface CreateDepositWatcherParameters extends DepositWatcherOptions {
  chain: ChainConfig;
  client: PublicClient;
  db: Kysely<Tables>;
  log: Logger;
  /** Unix ms, for the rows' timestamps. */
  now: () => number;
  /**
   * First run only (no stored cursor): the first block to read. Default: the chain's head at that moment, so a
   * new gateway does not scan history it has no requests for; set it when re-creating a lost database.
   * Deposits older than the start are still found by `indexTransaction`. A function is asked at the first run (a
   * rebuild from chain events decides it once the watcher exists: `src/chain/solverHistory.ts`).
   */
  startBlock?: bigint | (() => bigint | undefined);
  /** Most blocks per `eth_getLogs` (backfill reads in ranges this long). Default 2,000. */
  maxBlockRange?: bigint;
  /** Blocks the cursor moves back, to read again, when its own block was reorged away. Default 64. */
  reorgWindow?: bigint;
  /**
   * The chain's pushed heads: each one starts a pass at once. While the feed is live the polling only backs it up
   * (every two block times); while it is down the watcher polls every `pollIntervalMs` as without a feed.
   */
  heads?: HeadFeed | undefined;
  /** How long blocks without deposits may be read before the stored cursor moves (`cursorWrites.ts`). */
  cursorWriteIntervalMs?: number;
  /**
   * Called when the watcher found its cursor's block reorged away (once per rewind): the chain's sender re-checks
   * what it recorded as mined (`TransactionSender.recheckMined`).
   */
  onReorg?: (() => void) | undefined;
  /** Counts the used deposits a reorg took off the chain (`gateway_deposits_reorged_total`). */
  metrics?: Pick<GatewayMetrics, 'depositReorged'> | undefined;
  /**
   * The solver's address: a deposit whose transaction it sent is recorded with what that transaction was
   * (`carrier`, `src/core/solver/solverCarrier.ts`). Without it, no carrier is recorded.
   */
  solverAddress?: Address | undefined;
}

/** A deposit log decoded from `Deposit` (depository) or `FundsForwarded` (receiver, native, no index). */
interface DepositLog {
  txHash: Hex;
  logIndex: number;
  blockNumber: bigint;
  blockHash: Hex;
  requestId: Hex;
  depositor: Hex;
  token: Hex;
  amount: bigint;
  depositIndex: bigint | null;
  /** The transaction's `from`: who sent the deposit, as the chain says (not the caller-chosen `depositor`). */
  sender?: Hex;
  /** When the solver sent the transaction: what it was (`solverCarrierOf`). */
  carrier?: string | null;
}

/**
 * Follows one origin chain's deposits: on every head its node pushes (`heads`), and by polling `eth_blockNumber`
 * every `pollIntervalMs` (default a quarter of the block time, at most 1 s; every two block times while the head
 * feed is live), reads new blocks with one `eth_getLogs` over the depository and the receiver (ranges
 * of at most `maxBlockRange`; none for a pushed head whose header proves neither logged in its block: `mayHoldLogsOf`),
 * stores each log as a `seen` deposit and moves the `deposits` cursor in the same
 * transaction. Ranges without deposits move the stored cursor only every `cursorWriteIntervalMs` (and at `stop`),
 * so a restart resumes from the last block whose deposits were stored, or a little before it.
 *
 * A deposit in block b is confirmed once `head - b + 1 >= max(1, confirmations)` and block b's hash is still
 * the one recorded (re-read from the chain); it is then `confirmed` and handed to `onConfirmed`, exactly once
 * (a conditional update decides). When the cursor's own block is no longer canonical, the cursor moves back
 * `reorgWindow` blocks and that window is read again: deposits whose block changed become `removed` and are
 * never handed on, and a log mined again in another block becomes `seen` there. At `start`, deposits left
 * `confirmed` (handed on but not consumed before a crash) are handed on again.
 *
 * `start` hands on what a crash left `confirmed`, runs the first pass (the backfill) and resolves; when the RPC
 * is down it resolves all the same and the loop keeps retrying. RPC failures are logged (once per outage at warn)
 * and retried on the next poll; nothing is thrown from the loop. A watcher is started once; `stop` ends the
 * loop without waiting for the poll interval and awaits the pass in flight.
 *
 * A poll that sees the same head number as the last completed pass does nothing, so a reorg that keeps the
 * height is noticed with the next block; confirmation always re-reads the block hash, so it cannot be missed.
 *
 * Deposits already `consumed` (a fill or a refund paid for them) are watched until the chain's finality depth
 * (`finalityDepthOf`): on the first pass and after every rewind, each one in the last `finalityDepth` blocks whose
 * block changed is looked at again on every pass until its transaction settles. Mined in another block, the row
 * follows it; still pending in the node, it waits (up to the finality depth); gone from the chain and the node,
 * the deposit is flagged (`removed` with `reorgedAt`), its amount booked as a loss (`loss:reorg`), a warning
 * logged once and `gateway_deposits_reorged_total` counted.
 */
export function createDepositWatcher(params: CreateDepositWatcherParameters): DepositWatcher {
  const { chain, client, db, log, now, onConfirmed, solverAddress } = params;
  const chainId = chain.id;
  const depository = chain.contracts.depository;
  const receiver = chain.contracts.receiver;
  const logEmitters = [bloomBitsOf(depository), bloomBitsOf(receiver)];
  const heads = params.heads;
  const maxBlockRange = params.maxBlockRange ?? 2_000n;
  const reorgWindow = params.reorgWindow ?? 64n;
  const depth = BigInt(Math.max(1, chain.confirmations));
  const finality = BigInt(finalityDepthOf(chain));
  if (maxBlockRange < 1n) throw new RangeError(`maxBlockRange must be at least 1, got ${maxBlockRange}`);
  if (reorgWindow < 1n) throw new RangeError(`reorgWindow must be at least 1, got ${reorgWindow}`);

  const cursorWriteIntervalMs = params.cursorWriteIntervalMs ?? CURSOR_WRITE_INTERVAL_MS;

  /** The last block read, with its hash: the stored cursor or ahead of it by blocks that held no deposit. */
  let cursor: ChainCursor | undefined;
  /** The cursor as last stored. */
  let stored: ChainCursor | undefined;
  /** The head the last successful poll processed: a poll that sees it again has nothing to do. */
  let processedHead: bigint | undefined;
  let started = false;
  let stopping = false;
  let failing = false;
  let inFlight: Promise<void> = Promise.resolve();
  /** The newest head pushed and not yet processed: a pass starting from it needs no head or hash reads. */
  let pushed: Head | undefined;
  const unsettled = createUnsettledBlocks(now);
  /** Consumed deposits whose block changed, by id: looked at on every pass until their transaction settles. */
  const suspects = new Map<number, DepositRecord>();
  /** Whether the consumed deposits within the finality depth were checked since the start. */
  let usedChecked = false;
  const loop = createHeadLoop({
    heads,
    blockTime: chain.blockTime,
    pollIntervalMs: params.pollIntervalMs,
    pass: () => pollSafely(),
    onHead(head) {
      if (pushed === undefined || head.number >= pushed.number) pushed = head;
    },
  });

  const context = { chainId };

  function handOn(deposit: DepositRecord, request?: RequestRecord): void {
    try {
      onConfirmed(deposit, request);
    } catch (error) {
      log.error(
        { ...context, requestId: deposit.requestId, depositId: deposit.id, err: error },
        'onConfirmed threw; the deposit stays confirmed',
      );
    }
  }

  /** After a log's insert: a known log found in another block (or after its removal) becomes `seen` there. */
  async function record(
    trx: Kysely<Tables>,
    entry: DepositLog,
    { deposit, inserted }: { deposit: DepositRecord; inserted: boolean },
  ): Promise<DepositRecord> {
    const logContext = {
      ...context,
      requestId: deposit.requestId,
      depositId: deposit.id,
      txHash: entry.txHash,
      blockNumber: entry.blockNumber,
    };
    if (inserted) {
      log.info({ ...logContext, amount: deposit.amount.toString() }, 'deposit seen');
      return deposit;
    }
    const sameBlock = deposit.blockHash === normalizeHex(entry.blockHash);
    if (sameBlock && deposit.status !== 'removed') return deposit;
    if (deposit.status === 'consumed') {
      // Used already and mined again elsewhere: the row follows its log; the deposit still paid what it paid.
      const moved = await moveConsumedDeposit(trx, deposit.id, {
        fromBlockHash: deposit.blockHash,
        blockNumber: entry.blockNumber,
        blockHash: entry.blockHash,
        now: now(),
      });
      if (moved === null) return deposit;
      suspects.delete(deposit.id);
      log.warn(
        { ...logContext, recordedBlock: deposit.blockNumber },
        'a used deposit was reorged into another block (reorg deeper than the confirmation depth); it follows it',
      );
      return moved;
    }
    if (deposit.status === 'removed' && deposit.reorgedAt !== null) {
      // Flagged as lost and now back on the chain: it was used already, so it is not handed on again.
      log.error(
        { ...logContext, recordedBlock: deposit.blockNumber },
        'a used deposit flagged as removed by a reorg is on the chain again; its loss entry stands until an operator looks',
      );
      return deposit;
    }
    if (deposit.status === 'confirmed') {
      // Deeper than the confirmation depth: nothing safe to do automatically; an operator must look.
      log.error(
        { ...logContext, status: deposit.status, recordedBlock: deposit.blockNumber },
        'a deposit already confirmed was reorged into another block (reorg deeper than the confirmation depth)',
      );
      return deposit;
    }
    const revived = await reviveDeposit(trx, deposit.id, {
      blockNumber: entry.blockNumber,
      blockHash: entry.blockHash,
      now: now(),
    });
    if (revived === null) return deposit;
    log.info({ ...logContext, previousBlock: deposit.blockNumber }, 'deposit seen again after a reorg');
    return revived;
  }

  async function recordAll(
    entries: DepositLog[],
    cursorAt?: { blockNumber: bigint; blockHash: string },
  ): Promise<DepositRecord[]> {
    // The cursor alone is one statement: no transaction around it (two more round trips to the database).
    if (entries.length === 0) {
      if (cursorAt !== undefined)
        cursor = stored = await setCursor(db, { chainId, name: DEPOSITS_CURSOR, ...cursorAt, now: now() });
      return [];
    }
    const recorded = await db.transaction().execute(async (trx) => {
      // One insert for the logs not yet recorded; a known one is read back and looked at on its own.
      const results = await insertDeposits(
        trx,
        entries.map((entry) => ({ chainId, ...entry, now: now() })),
      );
      const recorded: DepositRecord[] = [];
      for (const [index, entry] of entries.entries()) recorded.push(await record(trx, entry, results[index]!));
      if (cursorAt !== undefined)
        cursor = stored = await setCursor(trx, { chainId, name: DEPOSITS_CURSOR, ...cursorAt, now: now() });
      return recorded;
    });
    for (const deposit of recorded) if (deposit.status === 'seen') unsettled.add(deposit.blockNumber);
    return recorded;
  }

  /**
   * Confirms the candidates that are deep enough and still in their block; removes those whose block changed
   * (whatever their depth: after a rewind every `seen` deposit is a candidate, so reorged ones leave at once).
   * The confirmable ones are confirmed together, in one statement (`confirmDepositsAtBlocks`: the same
   * conditional update per deposit, its block hash and `seen`), and handed on together, in block and log order,
   * each with its request as the confirmation read it.
   */
  async function settle(
    head: bigint,
    candidates: DepositRecord[],
    canonicalHash: (n: bigint) => Promise<string | null>,
  ) {
    const confirmableTip = head - depth + 1n;
    const settled: DepositRecord[] = [];
    const confirmable: DepositRecord[] = [];
    for (const deposit of candidates) {
      const hash = await canonicalHash(deposit.blockNumber);
      if (hash !== deposit.blockHash) {
        const removed = await updateDepositStatusAtBlock(db, deposit.id, {
          status: 'removed',
          fromStatus: 'seen',
          blockHash: deposit.blockHash,
          now: now(),
        });
        if (removed !== null) {
          log.warn(
            {
              ...context,
              requestId: deposit.requestId,
              depositId: deposit.id,
              txHash: deposit.txHash,
              blockNumber: deposit.blockNumber,
            },
            'deposit removed by a reorg',
          );
          settled.push(removed);
        }
      } else if (deposit.blockNumber <= confirmableTip) confirmable.push(deposit);
    }
    const confirmed = await confirmDepositsAtBlocks(db, confirmable, now());
    for (const { deposit } of confirmed) {
      log.info(
        { ...context, depositId: deposit.id, requestId: deposit.requestId, blockNumber: deposit.blockNumber },
        'deposit confirmed',
      );
      settled.push(deposit);
    }
    for (const { deposit, request } of confirmed) handOn(deposit, request);
    return settled;
  }

  async function loadCursor(head: bigint, canonicalHash: (n: bigint) => Promise<string | null>): Promise<ChainCursor> {
    stored = await getCursor(db, chainId, DEPOSITS_CURSOR);
    if (stored !== undefined) return stored;
    const start = typeof params.startBlock === 'function' ? params.startBlock() : params.startBlock;
    const first = start ?? head;
    // The cursor is the last block read. Block 0 (genesis) holds no transactions, so starting at 0 reads from 1.
    const blockNumber = first > 0n ? first - 1n : 0n;
    const blockHash = await canonicalHash(blockNumber);
    if (blockHash === null) throw new Error(`start block ${first} of chain ${chainId} is beyond its head ${head}`);
    stored = await setCursor(db, { chainId, name: DEPOSITS_CURSOR, blockNumber, blockHash, now: now() });
    log.info({ ...context, fromBlock: blockNumber + 1n }, 'deposit watcher: first run, reading from this block');
    return stored;
  }

  /** One pass: rewind on a reorg, read every new block up to the head, settle pending deposits. */
  async function poll(): Promise<void> {
    // A pushed head newer than the last pass saves reading the head and the hashes of its block and its parent.
    const fromPush = pushed !== undefined && (processedHead === undefined || pushed.number > processedHead);
    const known = fromPush ? pushed : undefined;
    pushed = undefined;
    const head = known?.number ?? (await client.getBlockNumber({ cacheTime: 0 }));
    if (head === processedHead) return;
    const canonicalHash = blockHashReader(client, known);
    if (cursor === undefined) {
      cursor = await loadCursor(head, canonicalHash);
      // A previous run's `seen` deposits are at or below its stored cursor, or in the blocks read again after it.
      unsettled.add(cursor.blockNumber);
    }
    // A node behind the last block read (a lagging replica, or a chain rewound and not yet longer): wait.
    if (head < cursor.blockNumber) return;

    let rewoundTo: bigint | undefined;
    if ((await canonicalHash(cursor.blockNumber)) !== cursor.blockHash) {
      const target = cursor.blockNumber > reorgWindow ? cursor.blockNumber - reorgWindow : 0n;
      const targetHash = await canonicalHash(target);
      if (targetHash === null) throw new Error(`block ${target} of chain ${chainId} not found while rewinding`);
      log.warn(
        { ...context, from: cursor.blockNumber, to: target },
        'deposit cursor block was reorged away; reading the window again',
      );
      cursor = stored = await setCursor(db, {
        chainId,
        name: DEPOSITS_CURSOR,
        blockNumber: target,
        blockHash: targetHash,
        now: now(),
      });
      rewoundTo = target;
      params.onReorg?.();
    }

    let scanned = false;
    while (cursor.blockNumber < head && !stopping) {
      scanned = true;
      const fromBlock: bigint = cursor.blockNumber + 1n;
      const toBlock: bigint = head < fromBlock + maxBlockRange - 1n ? head : fromBlock + maxBlockRange - 1n;
      // The range end's hash is read before the logs: a reorg after this read changes the cursor's block, so the
      // next poll notices it and reads the range again, whichever chain the logs came from.
      const toHash = await canonicalHash(toBlock);
      if (toHash === null) throw new Error(`block ${toBlock} of chain ${chainId} not found below head ${head}`);
      // A pushed head whose header proves its block holds no log of either contract (no transaction, or a logs
      // bloom without them) needs no read: on an idle chain, most heads.
      const header = announcedBlock(known, fromBlock, toBlock);
      const provedEmpty = header !== undefined && !mayHoldLogsOf(header, logEmitters);
      const logs = provedEmpty
        ? []
        : await client.getLogs({
            address: [depository, receiver],
            events: depositEvents,
            fromBlock,
            toBlock,
            strict: true,
          });
      const entries = await withSenders(decodeAll(logs));
      if (cursorWriteDue(stored, entries.length, now(), cursorWriteIntervalMs))
        await recordAll(entries, { blockNumber: toBlock, blockHash: toHash });
      else cursor = { ...cursor, blockNumber: toBlock, blockHash: toHash };
      // Settle as each range lands, so a long backfill hands deposits on as it goes. Fresh hashes: the ones
      // read before the logs may predate them.
      await settlePending(head, rewoundTo);
    }
    if (!scanned && !stopping) await settlePending(head, rewoundTo);
    if (!stopping) await recheckUsed(head, rewoundTo !== undefined);
    if (!stopping) processedHead = head;
  }

  /**
   * Re-checks the consumed deposits within the finality depth: on the first pass and after a rewind, every one
   * whose block is no longer canonical becomes a suspect; every pass looks at each suspect's transaction.
   */
  async function recheckUsed(head: bigint, rewound: boolean): Promise<void> {
    if (rewound || !usedChecked) {
      const floor = head >= finality ? head - finality + 1n : 0n;
      const used = await listChainDeposits(db, { chainId, status: 'consumed', minBlockNumber: floor });
      const canonicalHash = blockHashReader(client);
      for (const deposit of used)
        if ((await canonicalHash(deposit.blockNumber)) !== deposit.blockHash) suspects.set(deposit.id, deposit);
      usedChecked = true;
    }
    for (const deposit of [...suspects.values()]) {
      if (stopping) return;
      await settleSuspect(head, deposit);
    }
  }

  /** One suspect: back in its block, mined elsewhere (the row follows), still pending, or gone (flagged, a loss). */
  async function settleSuspect(head: bigint, deposit: DepositRecord): Promise<void> {
    const fields = {
      ...context,
      requestId: deposit.requestId,
      depositId: deposit.id,
      txHash: deposit.txHash,
      blockNumber: deposit.blockNumber,
    };
    const receipt = await client.getTransactionReceipt({ hash: deposit.txHash as Hex }).catch((error: unknown) => {
      if (error instanceof BaseError && error.walk((e) => e instanceof TransactionReceiptNotFoundError)) return null;
      throw error;
    });
    if (receipt !== null) {
      suspects.delete(deposit.id);
      if (normalizeHex(receipt.blockHash) === deposit.blockHash) return;
      const moved = await moveConsumedDeposit(db, deposit.id, {
        fromBlockHash: deposit.blockHash,
        blockNumber: receipt.blockNumber,
        blockHash: receipt.blockHash,
        now: now(),
      });
      if (moved !== null)
        log.warn(
          { ...fields, movedTo: receipt.blockNumber },
          'a used deposit was reorged into another block (reorg deeper than the confirmation depth); it follows it',
        );
      return;
    }
    const pending = await client.getTransaction({ hash: deposit.txHash as Hex }).then(
      () => true,
      (error: unknown) => {
        if (error instanceof BaseError && error.walk((e) => e instanceof TransactionNotFoundError)) return false;
        throw error;
      },
    );
    // Still in the node's pool: it may be mined again, until the finality depth says it will not count.
    if (pending && head < deposit.blockNumber + finality) return;
    suspects.delete(deposit.id);
    const removed = await markDepositReorged(db, deposit, now());
    if (removed === null) return;
    params.metrics?.depositReorged(chainId);
    log.warn(
      { ...fields, amount: deposit.amount.toString(), token: deposit.token, pending },
      'a used deposit was removed by a reorg deeper than the confirmation depth; its amount is booked as a loss',
    );
  }

  async function settlePending(head: bigint, rewoundTo: bigint | undefined): Promise<void> {
    const tip = head - depth + 1n;
    if (rewoundTo === undefined && !unsettled.due(tip)) return;
    const settled = unsettled.reading();
    const candidates = await listChainDeposits(db, {
      chainId,
      status: 'seen',
      ...(rewoundTo === undefined ? { maxBlockNumber: tip } : {}),
    });
    if (candidates.length > 0) await settle(head, candidates, blockHashReader(client));
    settled(tip);
  }

  /**
   * Adds each deposit's transaction sender (one `eth_getTransactionByHash` per transaction): logs do not carry
   * it, and the solver needs it to tell the order's user from someone else depositing under the same id.
   */
  async function withSenders(entries: DepositLog[]): Promise<DepositLog[]> {
    const hashes = [...new Set(entries.map((entry) => entry.txHash))];
    const senders = new Map(
      await Promise.all(
        hashes.map(async (hash) => {
          const tx = await client.getTransaction({ hash });
          return [hash, { sender: tx.from, carrier: carrierOf(tx) }] as const;
        }),
      ),
    );
    return entries.map((entry) => ({ ...entry, ...senders.get(entry.txHash)! }));
  }

  /** What the transaction was, when the solver sent it: the solver's address alone says nothing of whose money. */
  function carrierOf(tx: { from: Address; to: Address | null; input: Hex }): string | null {
    if (solverAddress === undefined || !isAddressEqual(tx.from, solverAddress)) return null;
    return solverCarrierOf(chain, tx);
  }

  function decodeAll(logs: readonly DecodableLog[]): DepositLog[] {
    return logs.flatMap((entry) => {
      const decoded = decode(entry);
      return decoded === undefined ? [] : [decoded];
    });
  }

  function decode(entry: DecodableLog): DepositLog | undefined {
    // Reorged-out logs (only subscriptions and filters report them) and pending ones are not deposits.
    if (
      entry.removed ||
      entry.blockHash === null ||
      entry.blockNumber === null ||
      entry.logIndex === null ||
      entry.transactionHash === null
    ) {
      return undefined;
    }
    const at = {
      txHash: entry.transactionHash,
      logIndex: entry.logIndex,
      blockNumber: entry.blockNumber,
      blockHash: entry.blockHash,
    };
    if (entry.eventName === 'Deposit' && isAddressEqual(entry.address, depository)) {
      const { id, depositor, token, amount, depositIndex } = entry.args;
      return { ...at, requestId: id, depositor, token, amount, depositIndex };
    }
    if (entry.eventName === 'FundsForwarded' && isAddressEqual(entry.address, receiver)) {
      const { id, from, amount } = entry.args;
      return { ...at, requestId: id, depositor: from, token: zeroAddress, amount, depositIndex: null };
    }
    return undefined;
  }

  /** Stores the cursor when blocks without deposits moved it past the stored one (at `stop`). */
  async function storeCursor(): Promise<void> {
    if (cursor === undefined || cursor === stored) return;
    try {
      const { blockNumber, blockHash } = cursor;
      stored = await setCursor(db, { chainId, name: DEPOSITS_CURSOR, blockNumber, blockHash, now: now() });
    } catch (error) {
      // The next start reads those blocks again.
      log.warn({ ...context, err: error }, 'deposit watcher: the cursor could not be stored at stop');
    }
  }

  /** A poll whose failure is logged (once per outage, then at debug) and left for the next poll. */
  function pollSafely(): Promise<void> {
    inFlight = poll().then(
      () => {
        if (failing) log.info(context, 'deposit watcher: RPC answers again');
        failing = false;
      },
      (error: unknown) => {
        if (!failing) log.warn({ ...context, err: error }, 'deposit watcher poll failed; retrying on the next poll');
        else log.debug({ ...context, err: error }, 'deposit watcher poll failed again');
        failing = true;
      },
    );
    return inFlight;
  }

  return {
    chainId,

    async start() {
      if (started) throw new Error(`The deposit watcher of chain ${chainId} was already started`);
      started = true;
      // Handed on before a crash but never consumed: hand them on again (the consumer is idempotent per deposit).
      const unprocessed = await listChainDeposits(db, { chainId, status: 'confirmed' });
      for (const deposit of unprocessed) handOn(deposit);
      if (unprocessed.length > 0)
        log.info({ ...context, count: unprocessed.length }, 'confirmed deposits handed on again after a restart');
      if (stopping) return;
      loop.listen();
      await pollSafely();
      if (!stopping) loop.run();
    },

    async stop() {
      stopping = true;
      await loop.stop();
      await inFlight;
      await storeCursor();
    },

    followedBlock: () => cursor?.blockNumber,

    async indexTransaction(txHash) {
      let receipt;
      try {
        receipt = await client.getTransactionReceipt({ hash: txHash });
      } catch (error) {
        if (error instanceof BaseError && error.walk((e) => e instanceof TransactionReceiptNotFoundError)) {
          throw new GatewayError(
            'NOT_FOUND',
            `Transaction ${txHash} was not found on chain ${chainId} (not mined yet?)`,
          );
        }
        throw rpcGatewayError(error, chain, `reading the receipt of ${txHash}`);
      }
      const logs = parseEventLogs({ abi: depositEvents, logs: receipt.logs, strict: true });
      let entries = decodeAll(logs).map((entry) => ({ ...entry, sender: receipt.from }));
      if (entries.length === 0) return [];
      if (solverAddress !== undefined && isAddressEqual(receipt.from, solverAddress)) {
        const carrier = carrierOf(await client.getTransaction({ hash: txHash }));
        entries = entries.map((entry) => ({ ...entry, carrier }));
      }
      const recorded = await recordAll(entries);
      try {
        const head = await client.getBlockNumber({ cacheTime: 0 });
        const settled = await settle(
          head,
          recorded.filter((deposit) => deposit.status === 'seen'),
          blockHashReader(client),
        );
        return recorded.map((deposit) => settled.find((s) => s.id === deposit.id) ?? deposit);
      } catch (error) {
        // Recorded already: the polling loop confirms them later.
        log.warn({ ...context, txHash, err: error }, 'indexTransaction: could not check confirmations now');
        return recorded;
      }
    },
  };
}

type DecodableLog = ReturnType<typeof parseEventLogs<typeof depositEvents, true>>[number];
