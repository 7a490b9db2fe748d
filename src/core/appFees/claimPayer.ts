import { encodeFunctionData, erc20Abi, zeroAddress, type Address, type Hex } from 'viem';
import { deleteExpiredClaims, finishClaim, listPendingClaims } from '../../store/appFeeClaims.repository.js';
import type { ClaimRecord } from '../../records/appFeeClaim.js';
import { getLiveOutgoingTx } from '../../store/outgoingTxs.repository.js';
import type { CoreContext } from '../context.js';
import type { TransactionSender } from '../ports/solver.js';
import { errorMessage } from '../errors.js';
import { createPeriodicJob } from '../periodicJob.js';
import { createServiceSkips } from '../chains/serviceSkips.js';

/**
 * How long a claim that was never signed stays listed (`expired`) after its signature window before the payer's
 * sweep deletes it.
 */
export const expiredClaimRetentionMs = 60 * 60 * 1000;

/**
 * How often a pass sweeps, at most. Passes run on the settlement interval (every 5 s on the devnet), and a claim
 * kept an hour needs no sweep to the second: swept every pass, it was a delete a pass on an idle gateway.
 */
const sweepIntervalMs = 5 * 60 * 1000;

export interface ClaimPayer {
  /** Pays what a previous run left pending, then every claim authorized later, until `stop`. */
  start(): void;
  /** A claim was authorized: pay it now rather than at the next interval. */
  wake(): void;
  /** One pass over every pending claim now; resolves when each is mined (or left for the next pass). */
  payNow(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Pays authorized app-fee claims from the solver's wallet on the claim's chain: an ERC-20 `transfer` (or a
 * native transfer) to the recipient, sent as an outgoing transaction of kind `claim` keyed by the claim id.
 *
 * Crash safety: the sender records the transaction before broadcasting it and allows one live `claim` per
 * claim id, so a claim is paid at most once; the receipt ends the claim and writes its ledger movements in one
 * transaction (`updateOutgoingTx` → `finishClaim`). A restart finds the claim still `pending`: a recorded
 * payout is awaited (the sender rebroadcasts it), a claim without one is sent. A payout the node refuses or that
 * reverts fails the claim, which gives its value back to the wallet's available balance.
 *
 * A pass first sweeps the claims never signed (at most every `sweepIntervalMs`): an hour after their signature
 * window they are deleted.
 */
export function createClaimPayer({
  ctx,
  senders,
  intervalMs,
  inService,
}: {
  ctx: CoreContext;
  senders: ReadonlyMap<number, TransactionSender>;
  intervalMs: number;
  /** Whether the solver serves the chain now: claims on one out of service stay pending until it is back. */
  inService?: ((chainId: number) => boolean) | undefined;
}): ClaimPayer {
  const { db, log } = ctx;
  const skips = createServiceSkips({
    job: 'app-fee claims',
    inService,
    reason: (chainId) => ctx.chainStatus?.chainBlocked(chainId) ?? null,
    log,
  });
  const job = createPeriodicJob(intervalMs, pass);

  async function pay(claim: ClaimRecord): Promise<void> {
    const sender = senders.get(claim.chainId);
    if (sender === undefined) return;
    let record = await getLiveOutgoingTx(db, claim.id, 'claim');
    if (record === undefined) {
      const native = claim.currency === zeroAddress;
      record = await sender.send({
        requestId: claim.id as Hex,
        kind: 'claim',
        to: native ? (claim.recipient as Address) : (claim.currency as Address),
        data: native
          ? '0x'
          : encodeFunctionData({
              abi: erc20Abi,
              functionName: 'transfer',
              args: [claim.recipient as Address, claim.amount],
            }),
        value: native ? claim.amount : 0n,
      });
    }
    if (record.status === 'failed' && record.nonce === null) {
      await finishClaim(db, { id: claim.id, status: 'failed', txHash: null, now: ctx.now() });
      log.error({ claimId: claim.id, chainId: claim.chainId }, 'claim payout refused by the node; the claim failed');
      return;
    }
    const receipt = await sender.waitForReceipt(record.id);
    ctx.market.invalidateSolverBalances(claim.chainId);
    if (receipt.status === 'success')
      log.info({ claimId: claim.id, chainId: claim.chainId, hash: receipt.hash }, 'app-fee claim paid');
    else log.error({ claimId: claim.id, hash: receipt.hash }, 'app-fee claim payout reverted; the claim failed');
  }

  /** When the last sweep ran (the gateway's clock). */
  let sweptAt: number | undefined;

  /** Deletes the claims never signed whose window ended more than `expiredClaimRetentionMs` ago. */
  async function sweep(): Promise<void> {
    if (sweptAt !== undefined && ctx.now() - sweptAt < sweepIntervalMs) return;
    try {
      const deleted = await deleteExpiredClaims(db, ctx.now() - expiredClaimRetentionMs);
      sweptAt = ctx.now();
      if (deleted > 0) log.info({ deleted }, 'app-fee claims never signed deleted');
    } catch (error) {
      log.error({ err: error }, 'expired claims not swept; retried at the next pass');
    }
  }

  async function pass(): Promise<void> {
    await sweep();
    let pending: ClaimRecord[];
    try {
      pending = await listPendingClaims(db);
    } catch (error) {
      // A pass is scheduled work: a database that fails (or went away at shutdown) is logged, never unhandled.
      log.error({ err: error }, 'pending claims not read; retried at the next pass');
      return;
    }
    for (const claim of pending) {
      if (job.stopped) return;
      if (skips.skip(claim.chainId)) continue;
      try {
        await pay(claim);
      } catch (error) {
        if (job.stopped)
          log.info(
            { claimId: claim.id, reason: errorMessage(error) },
            'claim payer stopping: resumed at the next start',
          );
        else log.error({ err: error, claimId: claim.id }, 'claim payout failed; retried at the next pass');
      }
    }
  }

  return {
    start() {
      void job.start();
    },
    wake: () => job.wake(),
    payNow: () => job.runNow(),
    stop: () => job.stop(),
  };
}
