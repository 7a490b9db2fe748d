import type { RequestStatusSnapshot, StatusDepositAddress } from '../../store/requestStatus.js';
import type { JsonObject } from '../../store/tables.js';
import { statusFieldsOf } from '../requests/statusRules.js';

const webhookEventName = 'request.status.updated';

/** The deposit address object of the webhook and `/ws` forms (api-facts §5.3): `type` is `depositAddressType`. */
export type WebhookDepositAddress = {
  address: string;
  depositAddressType: 'open' | 'strict';
  depositor: string | null;
  depositTxHash: string | null;
} | null;

/** `data` of a `request.status.updated` webhook: the spec's webhook form of the status record. */
export interface WebhookStatusData {
  status: string;
  inTxHashes: string[];
  txHashes: string[];
  updatedAt: number;
  originChainId: number;
  destinationChainId: number;
  depositAddress: WebhookDepositAddress;
  requestId: string;
  referrer: string | null;
  details: JsonObject | null;
  /** `N/A` unless the status is `failure`, `fallback` or `refund` (the status operation's rules). */
  failReason: string;
  refundFailReason: string;
}

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

/** The JSON text posted for one event: what is signed, byte for byte. */
export function webhookBodyText(snapshot: RequestStatusSnapshot, timestamp: number): string {
  const body: WebhookBody = { event: webhookEventName, timestamp, data: toWebhookStatusData(snapshot) };
  return JSON.stringify(body);
}
