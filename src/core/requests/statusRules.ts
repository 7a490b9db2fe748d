import type { RequestStatus, RequestStatusSnapshot, StatusDepositAddress } from '../../records/requestStatus.js';
import type { JsonObject, JsonValue } from '../../records/json.js';
import type { IntentStatusV1Status, RequestStatusV2, StatusFields } from './types.js';

/** What the status operation, v2 and webhooks say when there is no reason (`/requests/v3` says null). */
export const NO_REASON = 'N/A';
/** The fail reason of a failed request that recorded none. */
const UNKNOWN_REASON = 'UNKNOWN';

/** Statuses on which a fill has failed, so a fail reason applies. */
const failedStatuses: ReadonlySet<RequestStatus> = new Set(['failure', 'fallback', 'refund']);

/**
 * Why the fill failed: on `failure`, `fallback` and `refund` the recorded reason, or `UNKNOWN` when none was
 * recorded; null on every other status, even when a reason was recorded earlier (`pending → failure →
 * pending` keeps its old reason in the row, but the request is not failed any more).
 */
export function failReasonOf(record: Pick<RequestStatusSnapshot, 'status' | 'failReason'>): string | null {
  if (!failedStatuses.has(record.status)) return null;
  return record.failReason ?? UNKNOWN_REASON;
}

/** Why the refund leg failed, as recorded (whatever the status), or null. */
export const refundFailReasonOf = (record: Pick<RequestStatusSnapshot, 'refundFailReason'>): string | null =>
  record.refundFailReason;

/** A reason as the status operation renders it: `N/A` for none. */
export const orNoReason = (reason: string | null): string => reason ?? NO_REASON;

/** v1 status of each status (`GET /intents/status`). */
export const statusV1: Readonly<Record<RequestStatus, IntentStatusV1Status>> = {
  waiting: 'waiting',
  depositing: 'pending',
  pending: 'pending',
  submitted: 'pending',
  success: 'success',
  failure: 'failure',
  refund: 'fallback',
  fallback: 'fallback',
};

/** v2 status of each status (`GET /requests/v2`): `submitted` is still `pending`, `fallback` is a refund. */
export const statusV2: Readonly<Record<RequestStatus, RequestStatusV2>> = {
  waiting: 'waiting',
  depositing: 'depositing',
  pending: 'pending',
  submitted: 'pending',
  success: 'success',
  failure: 'failure',
  refund: 'refund',
  fallback: 'refund',
};

/** The statuses a v2 `status` filter matches: every status v2 reports under that name. */
export function statusesOfV2(status: RequestStatusV2): RequestStatus[] {
  return (Object.keys(statusV2) as RequestStatus[]).filter((candidate) => statusV2[candidate] === status);
}

/**
 * `details` as the contract carries it, an object or null. The solver records objects (decoded revert data);
 * anything else recorded is wrapped so that it is not lost: a string as `{ message }`, other values as `{ value }`.
 */
export function detailsObject(details: JsonValue | null): JsonObject | null {
  if (details === null) return null;
  if (typeof details === 'object' && !Array.isArray(details)) return details;
  return typeof details === 'string' ? { message: details } : { value: details };
}

/**
 * The shared status fields of a stored request or of an outbox snapshot of it: the one place the status rules
 * render a snapshot's fields (`details` as an object, reasons with `N/A` for none).
 */
export function statusFieldsOf(source: Pick<RequestStatusSnapshot, keyof StatusFields>): StatusFields {
  return {
    status: source.status,
    inTxHashes: source.inTxHashes,
    txHashes: source.txHashes,
    updatedAt: source.updatedAt,
    originChainId: source.originChainId,
    destinationChainId: source.destinationChainId,
    details: detailsObject(source.details),
    failReason: orNoReason(failReasonOf(source)),
    refundFailReason: orNoReason(refundFailReasonOf(source)),
  };
}

/** The deposit address object of the webhook and `/ws` forms (api-facts §5.3): `type` is `depositAddressType`. */
export type WebhookDepositAddress = {
  address: string;
  depositAddressType: 'open' | 'strict';
  depositor: string | null;
  depositTxHash: string | null;
} | null;

/** A status record's deposit address in the webhook form. */
export function toWebhookDepositAddress(stored: StatusDepositAddress | null): WebhookDepositAddress {
  if (stored === null) return null;
  return {
    address: stored.address,
    depositAddressType: stored.type,
    depositor: stored.depositor,
    depositTxHash: stored.depositTxHash,
  };
}
