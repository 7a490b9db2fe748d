import type { RequestRecord } from '../../records/request.js';
import type { RequestStatusSnapshot } from '../../records/requestStatus.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { Caller } from '../vocabulary/caller.js';
import { statusFieldsOf } from '../requests/statusRules.js';
import type { IntentStatus, RenderedStatus } from '../requests/types.js';
import type { RequestEventBus } from '../ports/requestEventBus.js';

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
    case 'waiting':
    case 'depositing':
    case 'pending':
    case 'submitted':
      return false;
  }
}

/** The messages rendered from each outbox payload: one for the request's owner, one for everybody else. */
const renderedUpdates = new WeakMap<
  RequestStatusSnapshot,
  { owner?: RequestStatusUpdate; other?: RequestStatusUpdate }
>();

/**
 * The stream message of an outbox payload, with the fail-reason rules of the status operation. The bus hands the
 * same payload object to every subscriber of a change, so it is rendered once per view (owner or not) and the
 * subscribers share the message, which nobody may modify: transports serialize it once too (see statusSocket).
 * `request` is the payload's request, whose `createdAt` and `apiKeyId` never change.
 */
export function toStatusUpdate(
  snapshot: RequestStatusSnapshot,
  request: Pick<RequestRecord, 'createdAt' | 'apiKeyId'>,
  caller: Caller,
): RequestStatusUpdate {
  const owner = ownsRequest(caller, request);
  let views = renderedUpdates.get(snapshot);
  if (views === undefined) {
    views = {};
    renderedUpdates.set(snapshot, views);
  }
  const view = owner ? 'owner' : 'other';
  return (views[view] ??= {
    requestId: snapshot.requestId,
    ...statusFieldsOf(snapshot),
    quoteCreatedAt: request.createdAt,
    referrer: owner ? snapshot.referrer : null,
    depositAddress: snapshot.depositAddress,
  });
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
