import { getLiveOutgoingTx } from '../../store/outgoingTxs.repository.js';
import { getRequest, recordRequestFailReason } from '../../store/requests.repository.js';
import { crashPoint } from '../faults.js';
import { decideSelfRefund, REFUND_REQUESTED } from './decide.js';
import { act } from './execute.js';
import type { FillGate } from './fillGate.js';
import { recoverIfStill } from './recovery.js';
import { attachedDeposit } from './refund.js';
import type { SolverScope } from './scope.js';
import type { SelfRefundDecision } from '../ports/selfRefundDecision.js';

/**
 * Refunds a held request at its depositor's request (`requestRefund`, which checked the signature), in its lane,
 * so that no fill of the same request runs meanwhile. What to do is decided by `decideSelfRefund`. The reason is
 * recorded on the request before anything is sent: a restart finds the request `pending` with it and refunds it
 * (`decide`), a refund already sent is finished from its record (`recoverRequest`); either way one refund, through
 * the solver's executor (`act`).
 */
export async function refundOnRequest(
  scope: SolverScope,
  gate: Pick<FillGate, 'heldReason' | 'forget'>,
  requestId: string,
): Promise<SelfRefundDecision> {
  const { ctx } = scope;
  const request = await getRequest(ctx.db, requestId);
  const step = await decideSelfRefund(request, {
    heldReason: () => gate.heldReason(requestId),
    deposit: () => (request === undefined ? Promise.resolve(null) : attachedDeposit(ctx.db, request)),
    liveFill: async () => (await getLiveOutgoingTx(ctx.db, requestId, 'fill')) !== undefined,
  });
  switch (step.kind) {
    case 'answer':
      return step.answer;
    case 'resume':
      // Asked for before (a retry, a second identical request, or a restart since): finished from the records.
      await recoverIfStill(scope, requestId, 'pending');
      return { kind: 'accepted' };
    case 'refund': {
      const { decision } = step;
      await recordRequestFailReason(ctx.db, requestId, {
        failReason: REFUND_REQUESTED,
        details: decision.details ?? null,
      });
      gate.forget(requestId);
      crashPoint(ctx.config.crashAt, 'refund-requested');
      await act(scope, step.deposit, decision);
      return { kind: 'accepted' };
    }
  }
}
