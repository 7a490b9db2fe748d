/**
 * The request statuses and the status record an event carries: what the requests table, its outbox
 * (`request_events`) and the webhook deliveries keep, and what the core derives every form of the status from.
 */
import type { JsonValue } from './json.js';

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

/**
 * The status record at one moment: the payload of each request event, and the source of every form of the
 * status record (the status operation's, the stream message, the webhook's `data`), which the core derives from
 * it. A new status field is added here, then where the compiler asks for it.
 */
export interface RequestStatusSnapshot {
  requestId: string;
  status: RequestStatus;
  /** Origin-chain transaction hashes (deposits), in the order they were recorded. */
  inTxHashes: string[];
  /** Destination-chain transaction hashes (fills, and refunds); empty when none. */
  txHashes: string[];
  /** Unix milliseconds of the last status change. */
  updatedAt: number;
  originChainId: number;
  destinationChainId: number;
  /** As recorded: the status rules render it as an object (`detailsObject`). */
  details: JsonValue | null;
  /** As recorded: the status rules decide when it applies and render none as `N/A`. */
  failReason: string | null;
  /** As recorded, or null. */
  refundFailReason: string | null;
  /** The quote's referrer: owner-only data, which the stream hides from other keys. */
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

/** The status record's form of a recorded deposit address: its other members (refund address, ...) left out. */
export const toStatusDepositAddress = (recorded: StatusDepositAddress): StatusDepositAddress => ({
  address: recorded.address,
  type: recorded.type,
  depositor: recorded.depositor,
  depositTxHash: recorded.depositTxHash,
  recoveryAddress: recorded.recoveryAddress,
});

/** A deposit address known by its address alone: of unknown type (`open`, the reference's default), no transfer. */
export const addressOnlyDepositAddress = (address: string): StatusDepositAddress => ({
  address,
  type: 'open',
  depositor: null,
  depositTxHash: null,
  recoveryAddress: null,
});
