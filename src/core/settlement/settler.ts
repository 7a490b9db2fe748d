import { randomBytes } from 'node:crypto';
import { encodeFunctionData, type Address, type Hex } from 'viem';
import type { Kysely } from 'kysely';
import { normalizeHex } from '../../store/mappers.js';
import { getRequests } from '../../store/requests.repository.js';
import type { Tables } from '../../store/tables.js';
import { getLiveOutgoingTx } from '../../store/outgoingTxs.repository.js';
import {
  finishSettlementBatch,
  insertSettlementBatch,
  listPendingSettlementBatches,
  listSettleableDeposits,
  rebatchSettlementItems,
  rejectSettlementItems,
  settleSettlementItemsFromChain,
  type SettlementBatch,
  type SettlementItemReleased,
  type SettlementItemRejection,
  type SettlementRejection,
} from '../../store/settlements.repository.js';
import { depositoryAbi } from '../abi.js';
import { requireChain } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { crashPoint } from '../faults.js';
import { withGasMargin } from '../gasMargin.js';
import { inputValuation, quotedRequestOf, settlementPaid, type SettledDeposit } from '../ledger/movements.js';
import { insertLedgerMovements } from '../../store/ledger.repository.js';
import { errorMessage, GatewayError } from '../errors.js';
import { createPeriodicJob } from '../periodicJob.js';
import { createServiceSkips } from '../chains/serviceSkips.js';
import type { DepositRecord } from '../../records/deposit.js';
import type { DepositRelease, OrderTruth, TransactionSender } from '../ports/solver.js';

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
  /** The chain's word on a deposit the depository refuses to release as released already: to whom, by which transaction. */
  truth: Pick<OrderTruth, 'release'>;
  /** Whether the solver serves the chain now: one out of service is skipped until it is back (`ServiceSkips`). */
  inService?: ((chainId: number) => boolean) | undefined;
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
 * twice whatever happens.
 *
 * One deposit never holds up its chain: `releaseBatch` is all or nothing, so a batch is simulated before it is
 * sent, and when it would revert each release is simulated alone. A deposit whose release the depository refuses
 * (already released, unknown, removed by a reorg) is set aside as `rejected` with its reason, reported once (an
 * error log line and `gateway_settlement_items_rejected_total`), never retried, and the rest of the batch is sent.
 * The chain decides, the database remembers: a deposit refused as already released (a database restored from an
 * older backup, a release by hand) is looked up on chain first (its `Released` event). Released to the solver, it is
 * `settled` with that transaction and booked as its batch's receipt would have booked it; released to anyone else
 * (refunded), it is `rejected` `ALREADY_RELEASED` with that transaction, not the solver's to settle, and logged as a
 * warning. Neither is an operator's matter; only a release the chain cannot show is.
 * A batch that reverts on chain all the same is screened the same way: its refused deposits are rejected and the
 * others go into a new batch; when none is refused (the revert is the batch's, not a deposit's) it is marked
 * `failed` and left for an operator (its deposits stay in the depository, untouched and accounted).
 */
export function createSettler({ ctx, senders, settings, truth, inService }: CreateSettlerParameters): Settler {
  const { db, log } = ctx;
  const skips = createServiceSkips({
    job: 'settlement',
    inService,
    reason: (chainId) => ctx.chainStatus?.chainBlocked(chainId) ?? null,
    log,
  });
  const job = createPeriodicJob(settings.intervalMs, pass);
  /** Passes check it between pieces of work. */
  const stopped = (): boolean => job.stopped;

  const releaseData = (deposits: readonly DepositRecord[]): Hex =>
    encodeFunctionData({
      abi: depositoryAbi,
      functionName: 'releaseBatch',
      args: [
        deposits.map((deposit) => ({
          depositIndex: deposit.depositIndex!,
          id: deposit.requestId as Hex,
          depositor: deposit.depositor as Address,
          token: deposit.token as Address,
          depositAmount: deposit.amount,
          to: ctx.solver.address,
          amount: deposit.amount,
        })),
      ],
    });

  /** Gas units of releasing `deposits` now; a revert is `DESTINATION_TX_FAILED` (its reason decoded), as any estimate. */
  const estimateRelease = (chainId: number, deposits: readonly DepositRecord[]): Promise<bigint> =>
    ctx.market.estimateGas(chainId, {
      from: ctx.solver.address,
      to: requireChain(ctx, chainId).contracts.depository,
      data: releaseData(deposits),
      value: 0n,
    });

  /**
   * Simulates each release of `deposits` alone: those the depository refuses are rejected (recorded with their
   * reason, in one transaction with `then`, and reported once); the others are returned. A revert that names no
   * deposit (`REVERTED`) is the deposit's own only when another deposit of the batch passes: when none passes
   * (the depository's owner is not the solver, say) those stay pending as `unexplained`, never rejected. A failed
   * read (no answer, a rate limit) is thrown: nothing is decided on it, and the next pass tries again.
   */
  async function screenEach(
    batch: SettlementBatch,
    deposits: readonly DepositRecord[],
    then?: (trx: typeof db, kept: DepositRecord[]) => Promise<void>,
  ): Promise<{ kept: DepositRecord[]; setAside: number; unexplained?: string }> {
    const kept: DepositRecord[] = [];
    const all: Array<SettlementItemRejection & { deposit: DepositRecord }> = [];
    for (const deposit of deposits) {
      try {
        await estimateRelease(batch.chainId, [deposit]);
        kept.push(deposit);
      } catch (error) {
        const reason = refusalOf(error);
        if (reason === undefined) throw error;
        all.push({ depositId: deposit.id, deposit, reason: classify(reason, deposit), detail: reason });
      }
    }
    const refused = kept.length > 0 ? all : all.filter((item) => item.reason !== 'REVERTED');
    const unexplained = all.find((item) => !refused.includes(item))?.detail;
    if (refused.length === 0) return { kept, setAside: 0, ...(unexplained === undefined ? {} : { unexplained }) };
    // Released already: the chain says to whom. A failed read is thrown, as any: nothing is decided on it.
    const releases = new Map<number, DepositRelease>();
    for (const item of refused) {
      if (item.reason !== 'ALREADY_RELEASED') continue;
      const release = await truth.release(batch.chainId, item.deposit.depositIndex!, item.deposit.blockNumber);
      if (release !== undefined) releases.set(item.depositId, release);
    }
    const solver = ctx.solver.address.toLowerCase();
    const ours = refused.filter((item) => releases.get(item.depositId)?.to === solver);
    const rejected = refused
      .filter((item) => !ours.includes(item))
      .map((item) => {
        const release = releases.get(item.depositId);
        return release === undefined
          ? item
          : {
              ...item,
              detail: `${item.detail}: released to ${release.to} by ${release.txHash}`,
              releaseTxHash: release.txHash,
            };
      });
    const now = ctx.now();
    const { moved, settled } = await db.transaction().execute(async (trx) => {
      const moved = await rejectSettlementItems(trx, { batchKey: batch.batchKey, items: rejected, now });
      const settled = await settleSettlementItemsFromChain(trx, {
        batchKey: batch.batchKey,
        items: ours.map((item): SettlementItemReleased => ({
          depositId: item.depositId,
          releaseTxHash: releases.get(item.depositId)!.txHash,
        })),
        now,
      });
      // Booked as the batch's receipt books a release (`settle:<chain>:<deposit index>`, so never twice), with what
      // the chain says was released.
      const booked = ours.filter((item) => settled.includes(item.depositId));
      if (booked.length > 0) {
        const facts = await settledDeposits(
          trx,
          batch.chainId,
          booked.map((item) => item.deposit),
        );
        const released = facts.map((fact, i) => ({ ...fact, released: releases.get(booked[i]!.depositId)!.amount }));
        await insertLedgerMovements(trx, settlementPaid(batch.chainId, released), now);
      }
      await then?.(trx, kept);
      return { moved, settled };
    });
    for (const item of ours) {
      if (!settled.includes(item.depositId)) continue;
      const release = releases.get(item.depositId)!;
      log.info(
        {
          chainId: batch.chainId,
          batchKey: batch.batchKey,
          depositId: item.depositId,
          depositIndex: item.deposit.depositIndex?.toString(),
          requestId: item.deposit.requestId,
          amount: release.amount.toString(),
          releaseTxHash: release.txHash,
        },
        'settlement: the chain shows this deposit released to the solver already (the database did not know); recorded as settled',
      );
    }
    for (const item of rejected) {
      if (!moved.includes(item.depositId)) continue;
      if (item.releaseTxHash !== undefined) {
        // Released to someone else (refunded) by a transaction this database did not know: finished on chain, and
        // not the solver's to settle.
        log.warn(
          {
            chainId: batch.chainId,
            batchKey: batch.batchKey,
            depositId: item.depositId,
            depositIndex: item.deposit.depositIndex?.toString(),
            requestId: item.deposit.requestId,
            amount: item.deposit.amount.toString(),
            releasedTo: releases.get(item.depositId)!.to,
            releaseTxHash: item.releaseTxHash,
          },
          "settlement: the chain shows this deposit released to someone else than the solver (the database did not know); not the solver's to settle",
        );
        continue;
      }
      ctx.metrics?.settlementItemRejected(batch.chainId, item.reason);
      log.error(
        {
          chainId: batch.chainId,
          batchKey: batch.batchKey,
          depositId: item.depositId,
          depositIndex: item.deposit.depositIndex?.toString(),
          requestId: item.deposit.requestId,
          txHash: item.deposit.txHash,
          amount: item.deposit.amount.toString(),
          token: item.deposit.token,
          reason: item.reason,
          revert: item.detail,
        },
        "settlement: the depository refuses this deposit's release; set aside for an operator, the rest of the batch goes on",
      );
    }
    return { kept, setAside: refused.length, ...(unexplained === undefined ? {} : { unexplained }) };
  }

  /** The batch's deposits that can be released now (the whole batch when it simulates), and its gas when known. */
  async function screen(batch: SettlementBatch): Promise<{ deposits: DepositRecord[]; gas?: bigint }> {
    try {
      return { deposits: batch.deposits, gas: withGasMargin(await estimateRelease(batch.chainId, batch.deposits)) };
    } catch (error) {
      if (refusalOf(error) === undefined) throw error;
    }
    const { kept, unexplained } = await screenEach(batch, batch.deposits);
    // Every release reverts for a reason that is no deposit's: the batch waits, pending, for the next pass.
    if (unexplained !== undefined)
      throw new GatewayError(
        'DESTINATION_TX_FAILED',
        `Chain ${batch.chainId}: settlement would revert for every deposit of the batch: ${unexplained}`,
      );
    return { deposits: kept };
  }

  async function finish(batch: SettlementBatch): Promise<void> {
    const sender = senders.get(batch.chainId);
    if (sender === undefined) return;
    let record = await getLiveOutgoingTx(db, batch.batchKey, 'settle');
    if (record === undefined) {
      const { deposits, gas } = await screen(batch);
      // Every deposit was rejected: nothing is left pending in the batch, and nothing is sent.
      if (deposits.length === 0) return;
      batch = { ...batch, deposits };
      record = await sender.send({
        requestId: batch.batchKey as Hex,
        kind: 'settle',
        to: requireChain(ctx, batch.chainId).contracts.depository,
        data: releaseData(deposits),
        value: 0n,
        ...(gas === undefined ? {} : { gas }),
        ledger: { kind: 'settlement', deposits: await settledDeposits(db, batch.chainId, deposits) },
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
    if (receipt.status !== 'success') {
      // A deposit refused between the simulation and the block (another transaction released it first): it is
      // rejected, and the others go on in a batch of their own, with the rejection in one transaction.
      const retry = `0x${randomBytes(32).toString('hex')}`;
      const { kept, setAside, unexplained } = await screenEach(batch, batch.deposits, (trx, kept) =>
        rebatchSettlementItems(trx, {
          fromBatchKey: batch.batchKey,
          toBatchKey: retry,
          depositIds: kept.map((deposit) => deposit.id),
          now: ctx.now(),
        }),
      );
      // Deposits left unexplained (none passes alone) stay in this batch, which is marked `failed` below.
      if (setAside > 0 && unexplained === undefined) {
        log.warn(
          { chainId: batch.chainId, batchKey: batch.batchKey, hash: receipt.hash, setAside, retried: kept.length },
          'settlement reverted on a refused deposit; the others go on in a new batch',
        );
        if (kept.length > 0) await finish({ batchKey: retry, chainId: batch.chainId, deposits: kept });
        return;
      }
    }
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
      if (skips.skip(chainId)) continue;
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

/** The decoded revert of a simulated release (`MarketData.estimateGas`'s `DESTINATION_TX_FAILED`); undefined for a failed read. */
function refusalOf(error: unknown): string | undefined {
  if (!(error instanceof GatewayError) || error.code !== 'DESTINATION_TX_FAILED') return undefined;
  return error.data ?? error.message;
}

/** The class of a refused release, from the depository's custom error (decoded with the contracts' ABIs). */
function classify(reason: string, deposit: DepositRecord): SettlementRejection {
  const name = /^(\w+)\(/.exec(reason)?.[1];
  if (name === 'AlreadyReleased') return 'ALREADY_RELEASED';
  if (name === 'UnknownDeposit') return deposit.status === 'removed' ? 'REMOVED_BY_REORG' : 'UNKNOWN_DEPOSIT';
  if (name === 'DepositMismatch') return deposit.status === 'removed' ? 'REMOVED_BY_REORG' : 'DEPOSIT_MISMATCH';
  return 'REVERTED';
}

/**
 * What a settlement batch releasing `deposits` (each in full, to the solver) books once it succeeds, each deposit
 * valued as its request values its input.
 */
async function settledDeposits(
  db: Kysely<Tables>,
  chainId: number,
  deposits: readonly DepositRecord[],
): Promise<SettledDeposit[]> {
  const requests = await getRequests(db, [...new Set(deposits.map((deposit) => normalizeHex(deposit.requestId)))]);
  return deposits.map((deposit) => {
    const request = requests.get(normalizeHex(deposit.requestId));
    return {
      requestId: deposit.requestId.toLowerCase(),
      depositIndex: deposit.depositIndex!,
      currency: deposit.token.toLowerCase(),
      depositAmount: deposit.amount,
      released: deposit.amount,
      valuation: inputValuation(request === undefined ? undefined : quotedRequestOf(request), chainId, deposit.token),
    };
  });
}
