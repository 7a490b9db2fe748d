import type { UpdateRequestStatusParameters } from '../../store/requests.repository.js';
import { requestFilled, type FillFacts, type LedgerMovement } from '../ledger/movements.js';
import type { JsonObject } from '../../records/json.js';
import { statusMoves, type StatusMove } from '../vocabulary/statusMachine.js';

/** The fields a move may change besides the status. */
export type MoveFields = Partial<{
  failReason: string | null;
  refundFailReason: string | null;
  details: JsonObject | null;
  inTxHash: string;
  txHash: string;
  feesActual: JsonObject;
}>;

/** What a move needs besides its fields: a `succeed` names what the fill paid (`fillFactsOf`), which it books. */
export type MoveFacts<M extends StatusMove> = M extends 'succeed' ? MoveFields & { fill: FillFacts } : MoveFields;

/**
 * One status change of a request, as the core decides it: the row's move (status, the statuses it may come from,
 * its fields) and the ledger movements it books (a fill's fees, exchange and payout with its `success`). The store
 * writes it in one statement (`updateRequestStatus`), with the event and the webhook deliveries of the moved row,
 * or not at all when the request moved on.
 */
export interface StatusChange {
  requestId: string;
  move: StatusMove;
  update: Omit<UpdateRequestStatusParameters, 'now' | 'ledger'>;
  ledger: LedgerMovement[];
}

/** The status change of `move` on the request `requestId`. */
export function statusChangeOf<M extends StatusMove>(requestId: string, move: M, facts: MoveFacts<M>): StatusChange {
  const { to: status, from } = statusMoves[move];
  const { fill, ...fields } = facts as MoveFields & { fill?: FillFacts };
  return {
    requestId,
    move,
    update: { status, fromStatus: from, ...fields },
    ledger: fill === undefined ? [] : requestFilled(fill),
  };
}
