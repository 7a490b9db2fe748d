import { getLiveOutgoingTx } from '../../store/outgoingTxs.repository.js';
import { listRequests } from '../../store/listRequests.repository.js';
import { getRequest } from '../../store/requests.repository.js';
import { decideRecovery, type RecoveryReads } from './decideRecovery.js';
import { actRecovery } from './execute.js';
import { attachedDeposit } from './refund.js';
import type { SolverScope } from './scope.js';
import type { RequestRecord } from '../../records/request.js';

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
 * the refund of a fill that reverted or was rejected, or the decision when nothing was sent yet. Reads only what
 * `decideRecovery` asks for, then acts on its decision (`actRecovery`).
 */
async function recoverRequest(scope: SolverScope, request: RequestRecord): Promise<void> {
  const { db } = scope.ctx;
  const reads: RecoveryReads = {
    deposit: () => attachedDeposit(db, request),
    fill: () => getLiveOutgoingTx(db, request.id, 'fill'),
    refund: () => getLiveOutgoingTx(db, request.id, 'refund'),
  };
  await actRecovery(scope, await decideRecovery(request, reads));
}
