import { randomBytes } from 'node:crypto';
import { encodeFunctionData, type Address, type Hex } from 'viem';
import { getLiveOutgoingTx } from '../../store/outgoingTxs.repository.js';
import {
  finishSettlementBatch,
  insertSettlementBatch,
  listPendingSettlementBatches,
  listSettleableDeposits,
  type SettlementBatch,
} from '../../store/settlements.repository.js';
import { depositoryAbi } from '../abi.js';
import { requireChain } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { crashPoint } from '../faults.js';
import type { TransactionSender } from '../solver/ports.js';
import { errorMessage } from '../errors.js';
import { createPeriodicJob } from '../periodicJob.js';

export interface SettlementSettings {
  /** How often each origin chain's filled deposits are released to the solver, ms. */
  intervalMs: number;
  /** Most deposits released by one transaction. */
  maxBatch: number;
}

export const defaultSettlementSettings: SettlementSettings = { intervalMs: 30_000, maxBatch: 50 };

export interface Settler {
  /** Finishes batches a previous run left pending, then settles every `intervalMs` until `stop`. */
  start(): Promise<void>;
  /** One pass over every chain now (finish pending batches, then start one per chain); resolves when done. */
  settleNow(): Promise<void>;
  stop(): Promise<void>;
}

export interface CreateSettlerParameters {
  ctx: CoreContext;
  senders: ReadonlyMap<number, TransactionSender>;
  settings: SettlementSettings;
}

/**
 * Settlement: after a request succeeds, its deposit belongs to the solver and is released from the depository
 * to the solver's wallet on the origin chain, many deposits per transaction (`Depository.releaseBatch`).
 *
 * Crash safety, in order: the batch's deposits are recorded first (`settlement_items`, one batch per deposit by
 * primary key); the transaction is then recorded by the sender before it is broadcast (one live `settle` per
 * batch key); its receipt commits the ledger's movements with the row; the batch is marked last. A restart
 * finishes pending batches before starting new ones, resending only a batch that has no transaction yet. On
 * chain, the depository releases a deposit at most once and a batch is all or nothing, so nothing is released
 * twice whatever happens. A batch that reverts is marked `failed` and left for an operator (its deposits stay
 * in the depository, untouched and accounted).
 */
export function createSettler({ ctx, senders, settings }: CreateSettlerParameters): Settler {
  const { db, log } = ctx;
  const job = createPeriodicJob(settings.intervalMs, pass);
  /** Passes check it between pieces of work. */
  const stopped = (): boolean => job.stopped;

  async function finish(batch: SettlementBatch): Promise<void> {
    const sender = senders.get(batch.chainId);
    if (sender === undefined) return;
    let record = await getLiveOutgoingTx(db, batch.batchKey, 'settle');
    if (record === undefined) {
      const depository = requireChain(ctx, batch.chainId).contracts.depository;
      const releases = batch.deposits.map((deposit) => ({
        depositIndex: deposit.depositIndex!,
        id: deposit.requestId as Hex,
        depositor: deposit.depositor as Address,
        token: deposit.token as Address,
        depositAmount: deposit.amount,
        to: ctx.solver.address,
        amount: deposit.amount,
      }));
      record = await sender.send({
        requestId: batch.batchKey as Hex,
        kind: 'settle',
        to: depository,
        data: encodeFunctionData({ abi: depositoryAbi, functionName: 'releaseBatch', args: [releases] }),
        value: 0n,
      });
    }
    if (record.status === 'failed' && record.nonce === null) {
      await finishSettlementBatch(db, { batchKey: batch.batchKey, status: 'failed', now: ctx.now() });
      log.error(
        { chainId: batch.chainId, batchKey: batch.batchKey },
        'settlement refused by the node; its deposits stay in the depository for an operator',
      );
      return;
    }
    const receipt = await sender.waitForReceipt(record.id);
    ctx.market.invalidateSolverBalances(batch.chainId);
    crashPoint(ctx.config.crashAt, 'settle-mined');
    const status = receipt.status === 'success' ? 'settled' : 'failed';
    await finishSettlementBatch(db, { batchKey: batch.batchKey, status, now: ctx.now() });
    if (status === 'failed')
      log.error(
        { chainId: batch.chainId, batchKey: batch.batchKey, hash: receipt.hash },
        'settlement reverted; its deposits stay in the depository for an operator',
      );
    else log.info({ chainId: batch.chainId, deposits: batch.deposits.length, hash: receipt.hash }, 'deposits settled');
  }

  async function settleChain(chainId: number): Promise<void> {
    for (const batch of await listPendingSettlementBatches(db, chainId)) await finish(batch);
    const deposits = await listSettleableDeposits(db, { chainId, limit: settings.maxBatch });
    if (deposits.length === 0 || stopped()) return;
    const batchKey = `0x${randomBytes(32).toString('hex')}`;
    await insertSettlementBatch(db, {
      chainId,
      batchKey,
      depositIds: deposits.map((deposit) => deposit.id),
      now: ctx.now(),
    });
    crashPoint(ctx.config.crashAt, 'settle-batched');
    await finish({ batchKey, chainId, deposits });
  }

  async function pass(): Promise<void> {
    for (const chainId of senders.keys()) {
      if (stopped()) return;
      try {
        await settleChain(chainId);
      } catch (error) {
        // At shutdown the sender stops under the pass: the batch is resumed from its records at the next start.
        if (stopped())
          log.info({ chainId, reason: errorMessage(error) }, 'settlement stopping: resumed at the next start');
        else log.error({ err: error, chainId }, 'settlement pass failed; retried at the next interval');
      }
    }
  }

  return {
    async start() {
      // Not awaited: pending batches from a previous run are finished in the background, like new ones.
      void job.start();
    },
    settleNow: () => job.runNow(),
    stop: () => job.stop(),
  };
}
