import type { Address } from 'viem';
import { updateDepositStatus } from '../../store/deposits.repository.js';
import type { DepositRecord } from '../../records/deposit.js';
import { attachDepositToFastFill } from '../../store/fastFills.repository.js';
import type { RequestRecord } from '../../records/request.js';
import { claimDepositForRequest, getRequest } from '../../store/requests.repository.js';
import { crashPoint } from '../faults.js';
import { statusMoves, type FailReason } from '../vocabulary/statusMachine.js';
import { decideAndFill, startFillReads } from './decide.js';
import { judgeDeposit, type DepositVerdict } from './depositMatch.js';
import { queueStrayRefund, queueUnknownRefund, refundRequest } from './refund.js';
import type { SolverScope } from './scope.js';
import { depositOwner, solverCarriedRefundTarget } from './solverCarrier.js';
import { requireChain } from '../chains/requireChain.js';

/**
 * Takes a confirmed deposit: claims it for its request when it is the order's own (`depositMatch.ts`) and decides
 * the request, records it on a fast-filled request, or refunds it on its own (stray, double spend, unknown
 * request).
 */
export async function processDeposit(
  scope: SolverScope,
  deposit: DepositRecord,
  handed?: RequestRecord,
): Promise<void> {
  const { ctx } = scope;
  const { db, log } = ctx;
  // `handed`: the request as the deposit's confirmation read it. Nothing before the claim relies on its status
  // (`judgeDeposit` reads only the order, which a request never changes; the claim checks the status in its own
  // statement), so it spares this read. Without it, read with the other deposits handed on with it (one statement).
  const request = handed ?? (await scope.readRequest(deposit.requestId));
  // A deposit the solver's own transaction carried is the order user's own only when that transaction is positively
  // theirs: a sweep of the request's own deposit address (`src/core/depositAddresses/processor.ts`), their permit or
  // their gasless batch. Any other (nested in a fill, a call quote's calls, someone else's batch) pays no request and
  // spoils none: it is refunded on its own (`solverCarrier.ts`).
  const owner = request === undefined ? 'sender' : depositOwner(request, deposit, ctx.solver.address);
  const swept = owner === 'user' && deposit.carrier !== null && deposit.carrier.startsWith('sweep:');
  const verdict: DepositVerdict | undefined =
    request === undefined
      ? undefined
      : owner === 'in-solver-transaction'
        ? { kind: 'stray', why: 'in-solver-transaction' }
        : judgeDeposit(request, owner === 'user' ? { ...deposit, sender: request.user } : deposit);
  // The request's own deposit is consumed together with the request's move. Any other deposit (a double spend,
  // an unknown request) is consumed only once its refund is done: a crash before that leaves it `confirmed`,
  // and the watcher hands it on again at start, so it cannot be lost. Consuming first and rolling back keeps
  // the conditional update of the deposit as the one decision between two instances.
  const own = request !== undefined && verdict !== undefined && verdict.kind !== 'stray';
  // A deposit that pays: the fill's check reads (balance, simulation, fee caps) start now, from this record, and run
  // while it is claimed; the decision uses them only if the claimed row asks for the same fill (`decide.ts`).
  const early = own && verdict.kind === 'pays' ? startFillReads(scope, request) : undefined;
  // Claimed together with the other deposits handed on with it (`claims.ts`); one whose request was not waiting is
  // claimed on its own below, as every other deposit is.
  const together = own ? await scope.claimTogether(deposit) : 'unmoved';
  const claim =
    together !== 'unmoved'
      ? together
      : await db
          .transaction()
          .execute(async (trx) => {
            const now = ctx.now();
            if (request !== undefined && verdict !== undefined && verdict.kind !== 'stray') {
              // `depositing`: the gateway sent this deposit itself for the user's permit (`src/core/permits`) or
              // gasless batch (`POST /execute`). The deposit's consumption and the request's move are one statement.
              const { consumed, moved } = await claimDepositForRequest(trx, deposit.id, request.id, {
                status: statusMoves.claim.to,
                fromStatus: statusMoves.claim.from,
                inTxHash: deposit.txHash,
                now,
              });
              if (!consumed) return 'taken' as const;
              if (moved !== null) return moved;
              // The first matching deposit of a fast-filled request pays for the fill (and releases the key's hold).
              if (verdict.kind === 'pays') {
                const attached = await attachDepositToFastFill(trx, request.id, deposit, now);
                if (attached !== null) return 'fast' as const;
              }
            } else {
              const consumed = await updateDepositStatus(trx, deposit.id, {
                status: 'consumed',
                fromStatus: 'confirmed',
                now,
              });
              if (consumed === null) return 'taken' as const;
            }
            throw new NotOwnDeposit(request === undefined ? 'orphan' : verdict?.kind === 'pays' ? 'extra' : 'stray');
          })
          .catch((error: unknown) => {
            if (error instanceof NotOwnDeposit) return error.claim;
            throw error;
          });
  if (claim === 'taken') return;
  // The claim returns the request as its move left it (`pending`): the decision starts from that row, with no
  // second read.
  const claimed = typeof claim === 'object' ? claim : undefined;
  if (claimed !== undefined) ctx.metrics?.statusChanged('pending', null);
  if (claim === 'fast') {
    // The fast fill failed before its deposit arrived: the deposit is the order's own and is refunded.
    const paid = await getRequest(db, deposit.requestId);
    if (paid !== undefined && paid.status === 'failure' && paid.refundFailReason === null) {
      log.warn({ requestId: paid.id, txHash: deposit.txHash }, 'deposit for a fast fill that failed: refunding it');
      await refundRequest(scope, paid, deposit, (paid.failReason as FailReason | null) ?? 'EXECUTION_REVERTED');
    }
    return;
  }
  crashPoint(ctx.config.crashAt, 'deposit-claimed');
  // A deposit that is not the request's own is refunded in a lane of its own, so refunding it does not hold up
  // the request's work (its proper deposit may be right behind).
  if (claim === 'orphan' || request === undefined) {
    log.warn(
      { requestId: deposit.requestId, txHash: deposit.txHash },
      'deposit for an unknown request: refunding the depositor unless a chain says its order was filled',
    );
    queueUnknownRefund(scope, deposit);
    return;
  }
  if (claim === 'stray' || claim === 'extra') {
    // A deposit refunded on its own reads the request's status (`shownOn`, the log): a handed-on record's may be
    // old, so the request is read again here (never deleted once a deposit carried its id).
    const latest = handed === undefined ? request : ((await getRequest(db, request.id)) ?? request);
    // A swept deposit refunded on its own beside a request already paid is a leg of the address's transfer (a
    // strict over-payment's excess, a second transfer): its refund is shown in the request's `txHashes` beside the
    // fill.
    const shownOn = swept && latest.status !== 'waiting' ? latest.id : null;
    if (claim === 'stray') {
      const why = verdict?.kind === 'stray' ? verdict.why : 'short-not-from-user';
      log.warn(
        { requestId: request.id, txHash: deposit.txHash, chainId: deposit.chainId, why },
        'deposit that cannot pay for its order: refunding it on its own; the request is left as it was',
      );
      const refundTo =
        why === 'in-solver-transaction'
          ? await solverCarriedRefundTarget(db, requireChain(ctx, deposit.chainId), ctx.solver.address, deposit)
          : (deposit.depositor as Address);
      if (refundTo === null) {
        // Refunded to a gateway contract, it would be anyone's to sweep: it stays in the depository.
        await updateDepositStatus(db, deposit.id, { status: 'consumed', fromStatus: 'confirmed', now: ctx.now() });
        ctx.metrics?.strayDepositHeld(deposit.chainId);
        log.error(
          {
            requestId: request.id,
            txHash: deposit.txHash,
            chainId: deposit.chainId,
            depositor: deposit.depositor,
            amount: deposit.amount.toString(),
          },
          "deposit in the solver's own transaction names a gateway contract and no requester: held in the depository for the operator",
        );
        return;
      }
      queueStrayRefund(scope, deposit, refundTo, shownOn);
      return;
    }
    log.warn(
      { requestId: request.id, txHash: deposit.txHash, status: latest.status },
      'second deposit for a paid request: refunding it (DOUBLE_SPEND)',
    );
    // A swept deposit names its refund target as depositor (the transfer's own sender, or the address's
    // refundTo): a second transfer to a strict address goes back to whoever sent it, not to the first sender.
    queueStrayRefund(scope, deposit, (swept ? deposit.depositor : request.refundTo) as Address, shownOn);
    return;
  }
  await decideAndFill(scope, claim, deposit, early);
}

/** Rolls back a claim that found the deposit is not its request's own: it stays `confirmed` until refunded. */
class NotOwnDeposit extends Error {
  constructor(readonly claim: 'orphan' | 'stray' | 'extra') {
    super(`not the request's own deposit (${claim})`);
  }
}
