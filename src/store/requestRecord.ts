/**
 * A `requests` row read as a request record: shared by the request records, the status outbox, the lists and the
 * fast fills, in a module of their own so those import no one another.
 */
import type { Selectable } from 'kysely';
import type { JsonObject } from '../records/json.js';
import type { RequestRecord, TradeType } from '../records/request.js';
import type { RequestStatus } from '../records/requestStatus.js';
import { toBigInt, toNumber } from './mappers.js';
import type { RequestsTable } from './tables.js';

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
    version: toNumber(row.version),
  };
}
