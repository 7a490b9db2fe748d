/** A webhook delivery and its log, as the store keeps it and the core shows it. */

export type WebhookDeliveryStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';

/** One attempt of a delivery, as kept in its log. */
export interface WebhookAttempt {
  /** 1 for the first attempt. */
  attempt: number;
  /** Unix ms when the request was sent. */
  at: number;
  durationMs: number;
  /** HTTP status of the answer; null when there was none (timeout, refused connection, refused URL). */
  statusCode: number | null;
  error: string | null;
}

/** A delivery and its log: what `listWebhookDeliveries` shows. */
export interface WebhookDelivery {
  id: number;
  apiKeyId: string;
  requestId: string;
  eventId: number;
  /** The delivery this one replays, when it is a replay. */
  replayOf: number | null;
  status: WebhookDeliveryStatus;
  attempts: number;
  /** When the next attempt is due (pending only). */
  nextAttemptAt: number | null;
  log: WebhookAttempt[];
  createdAt: number;
  updatedAt: number;
  /** When it was delivered, failed for good or cancelled. */
  finishedAt: number | null;
}
