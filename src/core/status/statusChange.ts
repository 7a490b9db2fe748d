import type { Kysely } from 'kysely';
import { updateRequestStatus, type UpdateRequestStatusParameters } from '../../store/requests.repository.js';
import type { Tables } from '../../store/tables.js';
import { requestFilled, type FillFacts, type LedgerMovement } from '../ledger/movements.js';
import type { JsonObject } from '../../records/json.js';
import type { RequestRecord } from '../../records/request.js';
import { statusEventOf, type ExpectedEvent } from '../../records/statusEvent.js';
import { statusMoves, type StatusMove } from '../vocabulary/statusMachine.js';

/** The fields a move may change besides the status. */
export type MoveFields = Partial<{
  failReason: string | null;
  refundFailReason: string | null;
  details: JsonObject | null;
  inTxHash: string;
  txHash: string;
  feesActual: JsonObject | null;
  /** The output to deliver, when it changes (a gasless batch's origin gas recovered from it). */
  amountOut: bigint;
}>;

/** What a move needs besides its fields: a `succeed` names what the fill paid (`fillFactsOf`), which it books. */
export type MoveFacts<M extends StatusMove> = M extends 'succeed' ? MoveFields & { fill: FillFacts } : MoveFields;

/** A row's move as the store writes it: the status, the statuses it may come from, the fields changed with it. */
export type RowMove = Omit<UpdateRequestStatusParameters, 'now' | 'ledger' | 'expected'>;

/**
 * One status change of a request, as the core decides it: the row's move (status, the statuses it may come from,
 * its fields), the event it writes with the webhook delivery it owes (built from the row the move is expected to
 * leave), and the ledger movements it books (a fill's fees, exchange and payout with its `success`). The store
 * writes all of it in one statement (`writeStatusChange`), or nothing when the request moved on; when another
 * writer changed the row since it was read, the store builds the event again from the row as moved.
 */
export interface StatusChange {
  requestId: string;
  move: StatusMove;
  update: RowMove;
  /** Undefined for a row with a deposit address: its event carries the address's record, which the store reads. */
  expected: ExpectedEvent | undefined;
  ledger: LedgerMovement[];
  /** When the change is made (Unix ms): read once its transaction has begun. */
  now: number;
}

/** The status change of `move` on `request` (the row as read), made at `now`. */
export function statusChangeOf<M extends StatusMove>(
  request: RequestRecord,
  move: M,
  facts: MoveFacts<M>,
  now: number,
): StatusChange {
  const { to: status, from } = statusMoves[move];
  const { fill, ...fields } = facts as MoveFields & { fill?: FillFacts };
  const update: RowMove = { status, fromStatus: from, ...fields };
  return {
    requestId: request.id,
    move,
    update,
    expected: expectedEventOf(request, update, now),
    ledger: fill === undefined ? [] : requestFilled(fill),
    now,
  };
}

/** Writes a status change in the caller's transaction: the moved row, or null when the request moved on. */
export function writeStatusChange(trx: Kysely<Tables>, change: StatusChange): Promise<RequestRecord | null> {
  return updateRequestStatus(trx, change.requestId, {
    ...change.update,
    ledger: change.ledger,
    ...(change.expected === undefined ? {} : { expected: change.expected }),
    now: change.now,
  });
}

/**
 * The event of a move of the row `seen`, as the move leaves it when nobody else writes the row first (the store
 * checks that by the row's version); undefined for a row with a deposit address (its event carries the address's
 * record, read with the event).
 */
export function expectedEventOf(seen: RequestRecord, update: RowMove, now: number): ExpectedEvent | undefined {
  if (seen.depositAddress !== null) return undefined;
  const after = rowAfter(seen, update, now);
  return { version: after.version, event: statusEventOf(after, null) };
}

/** The row `seen` as `update` leaves it at `now` (the store's `updateRequestStatus`, field by field). */
export function rowAfter(seen: RequestRecord, update: RowMove, now: number): RequestRecord {
  const appended = (hashes: string[], hash: string | undefined) => {
    const lower = hash?.toLowerCase();
    return lower === undefined || hashes.includes(lower) ? hashes : [...hashes, lower];
  };
  return {
    ...seen,
    status: update.status,
    updatedAt: Math.max(seen.updatedAt, now),
    inTxHashes: appended(seen.inTxHashes, update.inTxHash),
    txHashes: appended(seen.txHashes, update.txHash),
    ...(update.failReason === undefined ? {} : { failReason: update.failReason }),
    ...(update.refundFailReason === undefined ? {} : { refundFailReason: update.refundFailReason }),
    ...(update.details === undefined ? {} : { details: update.details }),
    ...(update.feesActual === undefined ? {} : { feesActual: update.feesActual }),
    ...(update.amountOut === undefined ? {} : { amountOut: update.amountOut }),
    version: seen.version + 1,
  };
}
