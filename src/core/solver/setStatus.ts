import { groupedCalls } from '../../store/groupedCalls.js';
import { moveRequestsWithTxHash } from '../../store/requests.repository.js';
import type { CoreContext } from '../context.js';
import { expectedEventOf, statusChangeOf, writeStatusChange, type MoveFacts } from '../status/statusChange.js';
import type { RequestRecord } from '../../records/request.js';
import { moveOf, statusMoves, type StatusMove } from '../vocabulary/statusMachine.js';

/** Applies one move of the status machine (`statusMoves`); skipped (null) when the request moved on. */
export async function setStatus<M extends StatusMove>(
  ctx: CoreContext,
  request: RequestRecord,
  move: M,
  ...[facts]: M extends 'succeed' ? [MoveFacts<M>] : [MoveFacts<M>?]
) {
  // The clock is read once the transaction has begun, as the deposit's claim does: `updatedAt` is when the change
  // was made, not when it started waiting for the database (on PGlite, behind every query already queued).
  const updated = await ctx.db
    .transaction()
    .execute((trx) => writeStatusChange(trx, statusChangeOf(request, move, (facts ?? {}) as MoveFacts<M>, ctx.now())));
  reportStatus(ctx, request.id, move, updated, facts?.failReason);
  return updated;
}

/** Logs a move of `setStatus` (or its skip) and counts it. */
function reportStatus(
  ctx: CoreContext,
  requestId: string,
  move: StatusMove,
  updated: RequestRecord | null,
  failReason: string | null | undefined,
): void {
  const { to: status, from } = statusMoves[move];
  if (updated === null) ctx.log.warn({ requestId, status, from }, 'status change skipped: the request moved on');
  else {
    ctx.log.info({ requestId, status, failReason: failReason ?? undefined }, 'request status');
    ctx.metrics?.statusChanged(status, failReason ?? null);
  }
}

/** Most moves to `submitted` one transaction writes. */
const SUBMIT_GROUP = 16;

/** `setStatus(ctx, request, 'submit', { txHash })`, for the solver's fills, written together (`createSubmitTogether`). */
export type SubmitTogether = (request: RequestRecord, txHash: string) => Promise<RequestRecord | null>;

/**
 * The fills' moves to `submitted`: those asked for in one turn of the event loop (a sender batch's fills, which
 * learn together that they were broadcast) go together in one transaction, and those asked for while one is under
 * way together in the next, one statement for all of them (`groupedCalls` with `gatherTurn`,
 * `moveRequestsWithTxHash`): on PGlite a transaction holds every other statement and waits behind all of them, so
 * five moves one after the other held the status reads and each other five times. Each request's move is still
 * conditional on its own status, and its `updatedAt` is read once its group's transaction has begun.
 */
export function createSubmitTogether(ctx: CoreContext): SubmitTogether {
  const moveGrouped = groupedCalls(
    (moves: ReadonlyArray<{ request: RequestRecord; txHash: string }>) =>
      ctx.db.transaction().execute((trx) => {
        const now = ctx.now();
        return moveRequestsWithTxHash(
          trx,
          moves.map(({ request, txHash }) => ({ requestId: request.id, txHash })),
          {
            ...moveOf('submit'),
            now,
            expected: moves.flatMap(({ request, txHash }) => {
              const expected = expectedEventOf(request, { ...moveOf('submit'), txHash }, now);
              return expected === undefined ? [] : [expected];
            }),
          },
        );
      }),
    (group, move) =>
      group.length < SUBMIT_GROUP &&
      !group.some((other) => other.request.id.toLowerCase() === move.request.id.toLowerCase()),
    // The fills of one sender batch learn they were broadcast in one turn (`sending.ts`): one group from the first.
    { gatherTurn: true },
  );
  return async (request, txHash) => {
    const updated = await moveGrouped({ request, txHash });
    reportStatus(ctx, request.id, 'submit', updated, undefined);
    return updated;
  };
}
