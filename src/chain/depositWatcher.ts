import type { Kysely } from 'kysely';
import {
  BaseError,
  isAddressEqual,
  parseEventLogs,
  TransactionReceiptNotFoundError,
  type Address,
  type PublicClient,
} from 'viem';
import type { ChainConfig } from '../core/chains/types.js';
import type { GatewayMetrics } from '../core/metrics.js';
import type { Logger } from '../core/logger.js';
import { GatewayError } from '../core/errors.js';
import { depositRules } from '../core/ledger/movements.js';
import { createDepositLogReader, depositEvents, type DepositLog } from './depositLogs.js';
import { createChainFollower, type ChainFollower } from './follower/follower.js';
import type { HeadFeed } from './heads.js';
import { createUsedDeposits } from './usedDeposits.js';
import {
  confirmDepositsAtBlocks,
  insertDeposits,
  listChainDeposits,
  moveConsumedDeposit,
  reviveDeposit,
  updateDepositStatusAtBlock,
} from '../store/deposits.repository.js';
import { normalizeHex } from '../store/mappers.js';
import type { Tables } from '../store/tables.js';
import { rpcGatewayError } from './rpcErrors.js';
import type { DepositWatcher, DepositWatcherOptions } from '../core/ports/solver.js';
import { type DepositRecord } from '../records/deposit.js';
import type { RequestRecord } from '../records/request.js';

/** The `chain_cursors` name of the deposit watcher. */
export const DEPOSITS_CURSOR = 'deposits';

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

/**
 * Follows one origin chain's deposits, as the hooks of a chain follower (`follower/follower.ts`, which owns the
 * cursor, the rewind, the ranges and the confirmation depth): on every head its node pushes (`heads`), and by
 * polling `eth_blockNumber` every `pollIntervalMs` (default a quarter of the block time, at most 1 s; every two block times while the head
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
 * (`finalityDepthOf`, `usedDeposits.ts`): on the first pass and after every rewind, each one in the last
 * `finalityDepth` blocks whose block changed is looked at again on every pass until its transaction settles. Mined in another block, the row
 * follows it; still pending in the node, it waits (up to the finality depth); gone from the chain and the node,
 * the deposit is flagged (`removed` with `reorgedAt`), its amount booked as a loss (`loss:reorg`), a warning
 * logged once and `gateway_deposits_reorged_total` counted.
 */
export function createDepositWatcher(params: CreateDepositWatcherParameters): DepositWatcher {
  const { chain, client, db, log, now, onConfirmed } = params;
  const chainId = chain.id;
  const context = { chainId };
  const logs = createDepositLogReader({ chain, client, solverAddress: params.solverAddress });
  const used = createUsedDeposits({ chain, client, db, log, now, metrics: params.metrics });

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
      used.settled(deposit.id);
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

  /** One insert for the logs not yet recorded; a known one is read back and looked at on its own. */
  async function recordAll(trx: Kysely<Tables>, entries: DepositLog[]): Promise<DepositRecord[]> {
    const results = await insertDeposits(
      trx,
      entries.map((entry) => ({ chainId, ...entry, now: now() })),
    );
    const recorded: DepositRecord[] = [];
    for (const [index, entry] of entries.entries()) recorded.push(await record(trx, entry, results[index]!));
    return recorded;
  }

  const follower: ChainFollower<DepositRecord> = createChainFollower<DepositLog, DepositRecord>({
    chainId,
    blockTime: chain.blockTime,
    confirmations: chain.confirmations,
    client,
    db,
    log,
    now,
    cursorName: DEPOSITS_CURSOR,
    label: 'deposit watcher',
    context,
    maxBlockRange: params.maxBlockRange ?? 2_000n,
    reorgWindow: params.reorgWindow,
    pollIntervalMs: params.pollIntervalMs,
    heads: params.heads,
    cursorWriteIntervalMs: params.cursorWriteIntervalMs,
    startBlock: () => (typeof params.startBlock === 'function' ? params.startBlock() : params.startBlock),
    hooks: {
      async resume() {
        // Handed on before a crash but never consumed: hand them on again (the consumer is idempotent per deposit).
        const unprocessed = await listChainDeposits(db, { chainId, status: 'confirmed' });
        for (const deposit of unprocessed) handOn(deposit);
        if (unprocessed.length > 0)
          log.info({ ...context, count: unprocessed.length }, 'confirmed deposits handed on again after a restart');
      },
      read: (range) => logs.read(range),
      async record(trx, entries) {
        const recorded = await recordAll(trx, entries);
        return recorded.filter((deposit) => deposit.status === 'seen').map((deposit) => deposit.blockNumber);
      },
      listSeen: (maxBlockNumber) =>
        listChainDeposits(db, {
          chainId,
          status: 'seen',
          ...(maxBlockNumber === undefined ? {} : { maxBlockNumber }),
        }),
      async remove(deposit) {
        const removed = await updateDepositStatusAtBlock(db, deposit.id, {
          status: 'removed',
          fromStatus: 'seen',
          blockHash: deposit.blockHash,
          now: now(),
        });
        if (removed !== null)
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
        return removed;
      },
      /**
       * The confirmable deposits are confirmed together, in one statement (`confirmDepositsAtBlocks`: the same
       * conditional update per deposit, its block hash and `seen`), and handed on together, in block and log
       * order, each with its request as the confirmation read it.
       */
      async confirm(confirmable) {
        const confirmed = await confirmDepositsAtBlocks(db, confirmable, now(), depositRules.received);
        for (const { deposit } of confirmed)
          log.info(
            { ...context, depositId: deposit.id, requestId: deposit.requestId, blockNumber: deposit.blockNumber },
            'deposit confirmed',
          );
        for (const { deposit, request } of confirmed) handOn(deposit, request);
        return confirmed.map(({ deposit }) => deposit);
      },
      onRewind: () => params.onReorg?.(),
      afterPass: (head, rewound) => used.recheck(head, rewound, () => follower.stopping()),
    },
  });

  return {
    chainId,
    start: () => follower.start(),
    stop: () => follower.stop(),
    followedBlock: () => follower.followedBlock(),

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
      const parsed = parseEventLogs({ abi: depositEvents, logs: receipt.logs, strict: true });
      let entries = logs.decodeAll(parsed).map((entry) => ({ ...entry, sender: receipt.from }));
      if (entries.length === 0) return [];
      if (params.solverAddress !== undefined && isAddressEqual(receipt.from, params.solverAddress)) {
        const carrier = logs.carrierOf(await client.getTransaction({ hash: txHash }));
        entries = entries.map((entry) => ({ ...entry, carrier }));
      }
      const recorded = await db.transaction().execute((trx) => recordAll(trx, entries));
      for (const deposit of recorded) if (deposit.status === 'seen') follower.noteSeen(deposit.blockNumber);
      try {
        const head = await client.getBlockNumber({ cacheTime: 0 });
        const settled = await follower.settleRecords(
          head,
          recorded.filter((deposit) => deposit.status === 'seen'),
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
