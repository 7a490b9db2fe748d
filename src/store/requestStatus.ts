/**
 * The request statuses and the status record an event carries: shared by the requests table, its outbox
 * (`request_events`) and the webhook deliveries, in a module of their own so those three import no one another.
 */
import type { JsonValue } from './tables.js';

/** Request statuses: the reference's v3 set, plus `fallback`, which its `failReason` description names. */
export const requestStatuses = [
  'waiting',
  'depositing',
  'pending',
  'submitted',
  'success',
  'failure',
  'refund',
  'fallback',
] as const;
export type RequestStatus = (typeof requestStatuses)[number];

/** The status record at one moment: the payload of each request event (core shape; transports map it). */
export interface RequestStatusSnapshot {
  requestId: string;
  status: RequestStatus;
  inTxHashes: string[];
  txHashes: string[];
  updatedAt: number;
  originChainId: number;
  destinationChainId: number;
  details: JsonValue | null;
  failReason: string | null;
  refundFailReason: string | null;
  referrer: string | null;
  depositAddress: string | null;
}
