import type { RequestRecord } from '../../store/requestRecord.js';
import { updateRequestStatus } from '../../store/requests.repository.js';
import type { JsonObject } from '../../store/tables.js';
import type { CoreContext } from '../context.js';
import { statusMoves, type StatusMove } from '../requests/statusMachine.js';

/** Applies one move of the status machine (`statusMoves`); skipped (null) when the request moved on. */
export async function setStatus(
  ctx: CoreContext,
  request: RequestRecord,
  move: StatusMove,
  extra: Partial<{
    failReason: string | null;
    refundFailReason: string | null;
    details: JsonObject | null;
    inTxHash: string;
    txHash: string;
    feesActual: JsonObject;
  }> = {},
) {
  const { to: status, from } = statusMoves[move];
  // The clock is read once the transaction has begun, as the deposit's claim does: `updatedAt` is when the change
  // was made, not when it started waiting for the database (on PGlite, behind every query already queued).
  const updated = await ctx.db
    .transaction()
    .execute((trx) => updateRequestStatus(trx, request.id, { status, fromStatus: from, now: ctx.now(), ...extra }));
  if (updated === null)
    ctx.log.warn({ requestId: request.id, status, from }, 'status change skipped: the request moved on');
  else {
    ctx.log.info({ requestId: request.id, status, failReason: extra.failReason ?? undefined }, 'request status');
    ctx.metrics?.statusChanged(status, extra.failReason ?? null);
  }
  return updated;
}
