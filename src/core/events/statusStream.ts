import type { RequestRecord } from '../../store/requestRecord.js';
import type { RequestStatusSnapshot } from '../../store/requestStatus.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { Caller } from '../quote/types.js';
import { statusFieldsOf } from '../requests/statusRules.js';
import type { IntentStatus, RenderedStatus } from '../requests/types.js';
import type { RequestEventBus } from './requestEventBus.js';

/**
 * One message of a status stream: the whole rendered snapshot, with when the request was quoted (as the status
 * record of `GET /intents/status/v3` has it). `referrer` is owner-only data: set only when the subscriber's API
 * key quoted the request.
 */
export type RequestStatusUpdate = RenderedStatus & Pick<IntentStatus, 'quoteCreatedAt'>;

/**
 * Whether a stream of this request ends here. `success` and `refund` (`fallback`) end it. `failure` ends it only
 * when the refund leg failed too (`refundFailReason` recorded): otherwise this solver follows a failed fill
 * with its refund, and the stream waits for the `refund`.
 */
export function isFinalStatus(snapshot: Pick<RequestStatusSnapshot, 'status' | 'refundFailReason'>): boolean {
  switch (snapshot.status) {
    case 'success':
    case 'refund':
    case 'fallback':
      return true;
    case 'failure':
      return snapshot.refundFailReason !== null;
    default:
      return false;
  }
}

/** The stream message of an outbox payload, with the fail-reason rules of the status operation. */
export function toStatusUpdate(
  snapshot: RequestStatusSnapshot,
  request: Pick<RequestRecord, 'createdAt' | 'apiKeyId'>,
  caller: Caller,
): RequestStatusUpdate {
  return {
    requestId: snapshot.requestId,
    ...statusFieldsOf(snapshot),
    quoteCreatedAt: request.createdAt,
    referrer: ownsRequest(caller, request) ? snapshot.referrer : null,
    depositAddress: snapshot.depositAddress,
  };
}

/** Whether the caller's API key quoted the request. */
export const ownsRequest = (caller: Caller, request: Pick<RequestRecord, 'apiKeyId'>): boolean =>
  caller.apiKey !== null && request.apiKeyId !== null && caller.apiKey.id === request.apiKeyId;

/** The process's event bus, or `SERVICE_UNAVAILABLE` when this gateway runs without one. */
export function requireEventBus(ctx: CoreContext): RequestEventBus {
  if (ctx.events === undefined)
    throw new GatewayError('SERVICE_UNAVAILABLE', 'Status streams are not available on this gateway');
  return ctx.events;
}
