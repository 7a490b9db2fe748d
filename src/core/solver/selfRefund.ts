import { getLiveOutgoingTx } from '../../store/outgoingTxs.repository.js';
import { getRequest, recordRequestFailReason } from '../../store/requests.repository.js';
import { crashPoint } from '../faults.js';
import { REFUND_REQUESTED } from './decide.js';
import type { FillGate } from './fillGate.js';
import { recoverIfStill } from './recovery.js';
import { attachedDeposit, refundRequest } from './refund.js';
import type { SolverScope } from './scope.js';
import type { SelfRefundDecision } from '../ports/selfRefundDecision.js';

/**
 * Refunds a held request at its depositor's request (`requestRefund`, which checked the signature), in its lane,
 * so that no fill of the same request runs meanwhile. The reason is recorded on the request before anything is
 * sent: a restart finds the request `pending` with it and refunds it (`decideAndFill`), a refund already sent is
 * finished from its record (`recoverRequest`); either way one refund, through the solver's refund path.
 */
export async function refundOnRequest(
  scope: SolverScope,
  gate: Pick<FillGate, 'heldReason' | 'forget'>,
  requestId: string,
): Promise<SelfRefundDecision> {
  const { ctx } = scope;
  const request = await getRequest(ctx.db, requestId);
  if (request === undefined) return { kind: 'unknown' };
  if (request.status !== 'pending') return { kind: 'moved', request };
  if (request.failReason === REFUND_REQUESTED) {
    // Asked for before (a retry, a second identical request, or a restart since): finished from the records.
    await recoverIfStill(scope, requestId, 'pending');
    return { kind: 'accepted' };
  }
  const held = gate.heldReason(requestId);
  const deposit = held === null ? null : await attachedDeposit(ctx.db, request);
  if (held === null || deposit === null || (await getLiveOutgoingTx(ctx.db, requestId, 'fill')) !== undefined)
    return { kind: 'notHeld', request };
  const details = { message: `Refunded at its depositor's request while held: ${held}` };
  await recordRequestFailReason(ctx.db, requestId, { failReason: REFUND_REQUESTED, details });
  gate.forget(requestId);
  crashPoint(ctx.config.crashAt, 'refund-requested');
  await refundRequest(scope, request, deposit, REFUND_REQUESTED, details);
  return { kind: 'accepted' };
}
