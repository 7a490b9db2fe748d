/** A request as the store keeps it and the core reads it. */
import type { JsonObject, JsonValue } from './json.js';
import type { RequestStatus } from './requestStatus.js';

export type TradeType = 'EXACT_INPUT' | 'EXPECTED_OUTPUT' | 'EXACT_OUTPUT';

/** A request as the core sees it: amounts are bigint, times Unix milliseconds, hex strings lower case. */
export interface RequestRecord {
  /** bytes32 hex request id. */
  id: string;
  status: RequestStatus;
  /** The paying user (the `user` of the quote, the depositor); the `user` filter of GET /requests/v3. */
  user: string;
  recipient: string;
  refundTo: string;
  sender: string;
  originChainId: number;
  destinationChainId: number;
  originCurrency: string;
  destinationCurrency: string;
  amountIn: bigint;
  amountOut: bigint;
  minAmountOut: bigint;
  tradeType: TradeType;
  operation: string;
  /** Protocol v2 order id (bytes32 hex). */
  orderId: string;
  referrer: string | null;
  apiKeyId: string | null;
  /** Snapshot of the quote (details, fees, steps) as returned to the client, JSON-safe. */
  quote: JsonObject;
  feesQuoted: JsonObject;
  feesActual: JsonObject | null;
  /** Null when none; the transports render it as `N/A` (status, webhooks) or null (requests v3). */
  failReason: string | null;
  refundFailReason: string | null;
  details: JsonValue | null;
  /** Origin-chain transaction hashes, in the order they were recorded. */
  inTxHashes: string[];
  /** Destination-chain transaction hashes. */
  txHashes: string[];
  depositAddress: string | null;
  expiresAt: number;
  createdAt: number;
  updatedAt: number;
  /** USD value of the input at quote time, micro-USD (trailing volume for revenue share). */
  volumeUsdMicros: bigint;
  /** Set when an API key had the request filled before its deposit was confirmed (`POST /fast-fill`). */
  fastFill: { apiKeyId: string; usdMicros: bigint } | null;
  /**
   * How many times the row was written since it was stored: a status change built from this record is the row's
   * next write when the moved row's version is this one plus one.
   */
  version: number;
}

/**
 * The statuses in which a fast-filled request whose deposit has not arrived holds its value against its API key's
 * limit and its wallet's app-fee balance: filled or being filled. A failed or refunded one puts nothing at risk.
 */
export const fastFillHoldingStatuses: readonly RequestStatus[] = ['pending', 'submitted', 'success'];
