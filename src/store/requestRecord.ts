/**
 * A request as the store keeps it and the core reads it, with its row mapper: shared by the request records, the
 * status outbox, the lists and the fast fills, in a module of their own so those import no one another.
 */
import type { Selectable } from 'kysely';
import { toBigInt, toNumber } from './mappers.js';
import type { RequestStatus } from './requestStatus.js';
import type { JsonObject, JsonValue, RequestsTable } from './tables.js';

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
}

/** A `requests` row as a record. */
export function toRequestRecord(row: Selectable<RequestsTable>): RequestRecord {
  return {
    id: row.id,
    status: row.status as RequestStatus,
    user: row.user_address,
    recipient: row.recipient,
    refundTo: row.refund_to,
    sender: row.sender,
    originChainId: toNumber(row.origin_chain_id),
    destinationChainId: toNumber(row.destination_chain_id),
    originCurrency: row.origin_currency,
    destinationCurrency: row.destination_currency,
    amountIn: toBigInt(row.amount_in),
    amountOut: toBigInt(row.amount_out),
    minAmountOut: toBigInt(row.min_amount_out),
    tradeType: row.trade_type as TradeType,
    operation: row.operation,
    orderId: row.order_id,
    referrer: row.referrer,
    apiKeyId: row.api_key_id,
    quote: row.quote as JsonObject,
    feesQuoted: row.fees_quoted as JsonObject,
    feesActual: row.fees_actual as JsonObject | null,
    failReason: row.fail_reason,
    refundFailReason: row.refund_fail_reason,
    details: row.details,
    inTxHashes: row.in_tx_hashes,
    txHashes: row.tx_hashes,
    depositAddress: row.deposit_address,
    expiresAt: toNumber(row.expires_at),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
    volumeUsdMicros: toBigInt(row.volume_usd_micros),
    fastFill:
      row.fast_fill_api_key_id === null
        ? null
        : { apiKeyId: row.fast_fill_api_key_id, usdMicros: toBigInt(row.fast_fill_usd_micros ?? '0') },
  };
}
