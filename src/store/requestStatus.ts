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
  /** The request's deposit address when it has one, with the transfer that paid it once one did. */
  depositAddress: StatusDepositAddress | null;
}

/** The deposit address a status record carries (`depositAddress` of webhooks, `/ws` and GraphQL). */
export interface StatusDepositAddress {
  address: string;
  type: 'open' | 'strict';
  /** Who sent the transfer that paid the request; null until one did. */
  depositor: string | null;
  /** The hash of that transfer. */
  depositTxHash: string | null;
  recoveryAddress: string | null;
}

/**
 * A stored event payload as a snapshot. Events written before the deposit-address object carried the address
 * alone (a string): read as an address of unknown type with no transfer known (`open`, the reference's default).
 */
export function readStatusSnapshot(payload: unknown): RequestStatusSnapshot {
  const snapshot = payload as Omit<RequestStatusSnapshot, 'depositAddress'> & { depositAddress?: unknown };
  const stored = snapshot.depositAddress;
  if (typeof stored === 'string')
    return {
      ...snapshot,
      depositAddress: { address: stored, type: 'open', depositor: null, depositTxHash: null, recoveryAddress: null },
    };
  return { ...snapshot, depositAddress: (stored ?? null) as StatusDepositAddress | null };
}
