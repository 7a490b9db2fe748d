import type { RequestStatusSnapshot } from '../../records/requestStatus.js';
import { statusFieldsOf, toWebhookDepositAddress, type WebhookDepositAddress } from '../requests/statusRules.js';
import type { RenderedStatus } from '../requests/types.js';

const webhookEventName = 'request.status.updated';

/**
 * `data` of a `request.status.updated` webhook and of a `/ws` status event: the rendered snapshot with its deposit
 * address in the webhook form. `failReason` is `N/A` unless the status is `failure`, `fallback` or `refund`.
 */
export type WebhookStatusData = Omit<RenderedStatus, 'depositAddress'> & { depositAddress: WebhookDepositAddress };

export interface WebhookBody {
  event: typeof webhookEventName;
  /** Unix ms of the status change (the same for every attempt and replay of one event). */
  timestamp: number;
  data: WebhookStatusData;
}

/** The webhook form of a status record (the payload of a request event). */
function toWebhookStatusData(snapshot: RequestStatusSnapshot): WebhookStatusData {
  return {
    ...statusFieldsOf(snapshot),
    depositAddress: toWebhookDepositAddress(snapshot.depositAddress),
    requestId: snapshot.requestId,
    referrer: snapshot.referrer,
  };
}

/** The JSON text posted for one event: what is signed, byte for byte. */
export function webhookBodyText(snapshot: RequestStatusSnapshot, timestamp: number): string {
  const body: WebhookBody = { event: webhookEventName, timestamp, data: toWebhookStatusData(snapshot) };
  return JSON.stringify(body);
}
