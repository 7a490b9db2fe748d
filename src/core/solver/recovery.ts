import { getLiveOutgoingTx } from '../../store/outgoingTxs.repository.js';
import { listRequests } from '../../store/listRequests.repository.js';
import { getRequest } from '../../store/requests.repository.js';
import { act, followFill, sendFill, walkPaidRequest } from './execute.js';
import { attachedDeposit } from './refund.js';
import type { SolverScope } from './scope.js';
import { setStatus } from './setStatus.js';
import type { RequestRecord } from '../../records/request.js';
import type { FailReason } from '../vocabulary/statusMachine.js';

/**
 * After a restart: queues every request left in flight (`pending`, `submitted`, or `failure` with its refund not
 * done) to be picked up from its records. A `failure` with no deposit attached and no fast fill is owed nothing (a
 * devnet chain reset fails the open quotes of the old chain so): there is no refund to finish.
 */
export async function recoverAll(scope: SolverScope): Promise<void> {
  for (const status of ['pending', 'submitted', 'failure'] as const) {
    let continuation: string | undefined;
    do {
      const page = await listRequests(
        scope.ctx.db,
        { status },
        { limit: 50, ...(continuation === undefined ? {} : { continuation }) },
      );
      for (const request of page.requests) {
        if (status === 'failure' && (request.refundFailReason !== null || !paidIn(request))) continue;
        void scope.enqueue(
          request.id,
          () => recoverIfStill(scope, request.id, status),
          () => resumeRequest(scope, request.id),
        );
      }
      continuation = page.continuation;
    } while (continuation !== undefined);
  }
}

/** Whether the request has money in play: a deposit attached (`attachedDeposit` reads it) or a fast fill. */
const paidIn = (request: RequestRecord) => request.inTxHashes.length > 0 || request.fastFill !== null;

/** Picks a request up from its records, as a restart would, when it is still in `status` (it may have moved on). */
export async function recoverIfStill(
  scope: SolverScope,
  requestId: string,
  status: RequestRecord['status'],
): Promise<void> {
  const fresh = await getRequest(scope.ctx.db, requestId);
  if (fresh !== undefined && fresh.status === status) await recoverRequest(scope, fresh);
}

/**
 * A retry: picks a request's work up from what is recorded, as a restart would, when the request is in flight
 * (and, given `depositTxHash`, only when that deposit is the request's own).
 */
export async function resumeRequest(scope: SolverScope, requestId: string, depositTxHash?: string): Promise<void> {
  const fresh = await getRequest(scope.ctx.db, requestId);
  if (fresh === undefined) return;
  const inFlight =
    fresh.status === 'pending' ||
    fresh.status === 'submitted' ||
    (fresh.status === 'failure' && fresh.refundFailReason === null);
  if (!inFlight) return;
  if (depositTxHash !== undefined && !fresh.inTxHashes.includes(depositTxHash.toLowerCase())) return;
  await recoverRequest(scope, fresh);
}

/**
 * Finishes what a request in flight had started, from its recorded transactions: a refund's or a fill's receipt,
 * the refund of a fill that reverted or was rejected, or the decision when nothing was sent yet.
 */
async function recoverRequest(scope: SolverScope, request: RequestRecord): Promise<void> {
  const { ctx } = scope;
  const deposit = await attachedDeposit(ctx.db, request);
  if (deposit === null && request.fastFill !== null) {
    const fastFillTx = await getLiveOutgoingTx(ctx.db, request.id, 'fill');
    if (fastFillTx !== undefined) await followFill(scope, request, null, fastFillTx.id);
    else if (request.status === 'pending') await sendFill(scope, request, null);
    return;
  }
  if (deposit === null) {
    ctx.log.error(
      { requestId: request.id },
      'request is past waiting but its deposit is not recorded; leaving it for an operator',
    );
    return;
  }
  const refund = await getLiveOutgoingTx(ctx.db, request.id, 'refund');
  if (refund !== undefined) {
    const receipt = await scope.senderOf(deposit.chainId).waitForReceipt(refund.id);
    const failReason = request.failReason ?? 'UNKNOWN';
    if (receipt.status === 'success') await setStatus(ctx, request, 'refund', { failReason, txHash: receipt.hash });
    else
      await setStatus(ctx, request, 'refundFail', {
        failReason,
        refundFailReason: 'MANUAL_REFUND_REQUIRED',
      });
    return;
  }
  // `failure` with no refund fail reason: the fill reverted and the refund was never recorded. Checked before
  // the fill's branch, which would only find the reverted receipt again and leave the deposit unrefunded.
  if (request.status === 'failure') {
    const failReason = (request.failReason as FailReason | null) ?? 'TRANSACTION_REVERTED';
    await act(scope, deposit, { kind: 'refund', request, failReason });
    return;
  }
  const fillTx = await getLiveOutgoingTx(ctx.db, request.id, 'fill');
  if (fillTx !== undefined && fillTx.status === 'failed' && fillTx.nonce === null) {
    await act(scope, deposit, { kind: 'refund', request, failReason: 'EXECUTION_REVERTED' });
    return;
  }
  if (fillTx !== undefined) {
    if (request.status === 'pending' && fillTx.hashes.length > 0)
      await setStatus(ctx, request, 'submit', { txHash: fillTx.hashes.at(-1)! });
    await followFill(scope, request, deposit, fillTx.id);
    return;
  }
  await walkPaidRequest(scope, request, deposit);
}
