/**
 * The event a status change writes, and what it is built from: the status record of the request's row as the change
 * left it, delivered to the webhook of the API key that quoted the request. The core builds it from the row a change
 * is expected to leave (`core/solver/statusChange.ts`); the store builds it from the moved row when that row is not
 * the one expected (another writer came between), so an event always carries the row it follows.
 */
import type { RequestRecord } from './request.js';
import type { RequestStatus, RequestStatusSnapshot, StatusDepositAddress } from './requestStatus.js';

/** One status change's event: its outbox row and the webhook delivery it owes. */
export interface StatusEvent {
  requestId: string;
  status: RequestStatus;
  payload: RequestStatusSnapshot;
  /** The API key whose webhook gets a delivery of the event (the key that quoted the request); null: none. */
  deliverTo: string | null;
}

/** The event of a request whose row is `record`, with its deposit address as recorded (null when it has none). */
export function statusEventOf(record: RequestRecord, depositAddress: StatusDepositAddress | null): StatusEvent {
  return {
    requestId: record.id,
    status: record.status,
    payload: statusRecordOf(record, depositAddress),
    deliverTo: record.apiKeyId,
  };
}

/** The status record of a request as its events carry it. */
export function statusRecordOf(
  record: RequestRecord,
  depositAddress: StatusDepositAddress | null,
): RequestStatusSnapshot {
  return {
    requestId: record.id,
    status: record.status,
    inTxHashes: record.inTxHashes,
    txHashes: record.txHashes,
    updatedAt: record.updatedAt,
    originChainId: record.originChainId,
    destinationChainId: record.destinationChainId,
    details: record.details,
    failReason: record.failReason,
    refundFailReason: record.refundFailReason,
    referrer: record.referrer,
    depositAddress,
  };
}

/**
 * A status change's event as its writer expects it: written in the change's own statement when the moved row's
 * `version` is this one (nobody else wrote the row since the writer read it), built again from the moved row
 * otherwise.
 */
export interface ExpectedEvent {
  /** The row's version once the change is written: the version the writer read, plus one. */
  version: number;
  event: StatusEvent;
}
