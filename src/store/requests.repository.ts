/**
 * The request records: a quote's insert (one row, or the group commit's batch), the reads by id and a key's
 * volume, the status writes (each with its outbox, `requestOutbox.ts`) and the retention job's deletes. The record
 * itself is `requestRecord.ts`; the history's lists are `listRequests.repository.ts`.
 */
import { CompiledQuery, sql, type Insertable, type Kysely } from 'kysely';
import { appendUnique } from './fragments.js';
import { normalizeHex, normalizeHexOrNull, toBigInt, toJson, toUint256 } from './mappers.js';
import { lockOutbox } from './requestEvents.repository.js';
import { writeStatusOutbox } from './requestOutbox.js';
import { toRequestRecord, type RequestRecord } from './requestRecord.js';
import type { RequestStatus } from './requestStatus.js';
import type { JsonObject, JsonValue, RequestsTable, Tables } from './tables.js';

/** What a new request needs; the rest defaults (status `waiting`, no hashes, no failure, updatedAt = createdAt). */
export type InsertRequestParameters = Omit<
  RequestRecord,
  | 'status'
  | 'referrer'
  | 'apiKeyId'
  | 'feesActual'
  | 'failReason'
  | 'refundFailReason'
  | 'details'
  | 'inTxHashes'
  | 'txHashes'
  | 'depositAddress'
  | 'updatedAt'
  | 'volumeUsdMicros'
  | 'fastFill'
> &
  Partial<
    Pick<
      RequestRecord,
      | 'status'
      | 'referrer'
      | 'apiKeyId'
      | 'feesActual'
      | 'failReason'
      | 'refundFailReason'
      | 'details'
      | 'inTxHashes'
      | 'txHashes'
      | 'depositAddress'
      | 'volumeUsdMicros'
    >
  >;

/**
 * Store a new request (created by a quote). Writes no event: the outbox carries status changes, and most
 * quotes are never deposited. Throws the driver's unique violation (code 23505) on a duplicate id.
 */
export async function insertRequest(db: Kysely<Tables>, params: InsertRequestParameters): Promise<RequestRecord> {
  const row = await db.insertInto('requests').values(toRequestRow(params)).returningAll().executeTakeFirstOrThrow();
  return toRequestRecord(row);
}

/**
 * Store several new requests in one statement (one commit), returning nothing: the quote path's group
 * commit. All or none are stored; a duplicate id fails the whole batch with a unique violation.
 */
export async function insertRequests(
  db: Kysely<Tables>,
  params: ReadonlyArray<InsertRequestParameters>,
): Promise<void> {
  if (params.length === 0) return;
  const rows = params.map(toRequestRow);
  const columns = Object.keys(rows[0]!) as Array<keyof (typeof rows)[number]>;
  const values: unknown[] = [];
  for (const row of rows) for (const column of columns) values.push(row[column]);
  await db.executeQuery(CompiledQuery.raw(insertRequestsSql(columns, rows.length), values));
}

/**
 * Remove a request whose quote failed after it was stored, so the failed quote leaves nothing behind. Only
 * while it is still `waiting`: nobody was given its id, and a request a deposit moved on is never deleted.
 * Returns whether a row was removed.
 */
export async function deleteUnansweredRequest(db: Kysely<Tables>, id: string): Promise<boolean> {
  const result = await db
    .deleteFrom('requests')
    .where('id', '=', normalizeHex(id))
    .where('status', '=', 'waiting')
    .executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * The multi-row INSERT of `insertRequests`, by row count: the quote path runs it for every group commit, and
 * building the same statement with the query builder each time cost more main-thread time than the rest of
 * the write. Every row from `toRequestRow` has the same columns in the same order.
 */
const insertRequestsStatements = new Map<number, string>();
function insertRequestsSql(columns: readonly string[], rowCount: number): string {
  let text = insertRequestsStatements.get(rowCount);
  if (text === undefined) {
    const tuples = Array.from(
      { length: rowCount },
      (_, row) => `(${columns.map((_, i) => `$${row * columns.length + i + 1}`).join(', ')})`,
    );
    text = `insert into requests (${columns.map((column) => `"${column}"`).join(', ')}) values ${tuples.join(', ')}`;
    insertRequestsStatements.set(rowCount, text);
  }
  return text;
}

function toRequestRow(params: InsertRequestParameters): Insertable<RequestsTable> {
  return {
    id: normalizeHex(params.id),
    status: params.status ?? 'waiting',
    user_address: normalizeHex(params.user),
    recipient: normalizeHex(params.recipient),
    refund_to: normalizeHex(params.refundTo),
    sender: normalizeHex(params.sender),
    origin_chain_id: params.originChainId,
    destination_chain_id: params.destinationChainId,
    origin_currency: normalizeHex(params.originCurrency),
    destination_currency: normalizeHex(params.destinationCurrency),
    amount_in: toUint256(params.amountIn),
    amount_out: toUint256(params.amountOut),
    min_amount_out: toUint256(params.minAmountOut),
    trade_type: params.tradeType,
    operation: params.operation,
    order_id: normalizeHex(params.orderId),
    referrer: params.referrer ?? null,
    api_key_id: params.apiKeyId ?? null,
    quote: toJson(params.quote),
    fees_quoted: toJson(params.feesQuoted),
    fees_actual: params.feesActual == null ? null : toJson(params.feesActual),
    fail_reason: params.failReason ?? null,
    refund_fail_reason: params.refundFailReason ?? null,
    details: params.details == null ? null : toJson(params.details),
    in_tx_hashes: toJson(unique((params.inTxHashes ?? []).map(normalizeHex))),
    tx_hashes: toJson(unique((params.txHashes ?? []).map(normalizeHex))),
    deposit_address: normalizeHexOrNull(params.depositAddress),
    expires_at: params.expiresAt,
    created_at: params.createdAt,
    updated_at: params.createdAt,
    volume_usd_micros: toUint256(params.volumeUsdMicros ?? 0n),
  };
}

/** One request by id (any hex casing), or undefined. Backs the status operation and the signature route. */
export async function getRequest(db: Kysely<Tables>, id: string): Promise<RequestRecord | undefined> {
  const row = await db.selectFrom('requests').selectAll().where('id', '=', normalizeHex(id)).executeTakeFirst();
  return row === undefined ? undefined : toRequestRecord(row);
}

export interface UpdateRequestStatusParameters {
  status: RequestStatus;
  /**
   * Apply only when the current status is this one (or one of these): optimistic concurrency for the
   * watcher, solver and refunder, which may race on the same request. Omitted: apply whatever the status.
   */
  fromStatus?: RequestStatus | readonly RequestStatus[];
  /** Omitted: unchanged; null: cleared. */
  failReason?: string | null;
  refundFailReason?: string | null;
  details?: JsonValue | null;
  feesActual?: JsonObject | null;
  /** The output to deliver, when it changes (a gasless batch's origin gas recovered from it). */
  amountOut?: bigint;
  /** An origin-chain hash to append (ignored when already recorded). */
  inTxHash?: string;
  /** A destination-chain hash to append (ignored when already recorded). */
  txHash?: string;
  /** Unix milliseconds. `updatedAt` never moves backwards, even when instances' clocks disagree. */
  now: number;
}

/**
 * Change a request's status and append its event (the outbox row) in one transaction: both commit or neither
 * does. When `db` is already a transaction, it runs inside it. Returns the updated request, or null when the
 * request does not exist or its status did not match `fromStatus` (nothing is written then).
 */
export async function updateRequestStatus(
  db: Kysely<Tables>,
  id: string,
  params: UpdateRequestStatusParameters,
): Promise<RequestRecord | null> {
  if (!db.isTransaction) return db.transaction().execute((trx) => updateRequestStatus(trx, id, params));

  await lockOutbox(db);
  let query = db
    .updateTable('requests')
    .set({
      status: params.status,
      updated_at: sql<string>`greatest(updated_at, ${params.now})`,
      ...(params.inTxHash === undefined
        ? {}
        : { in_tx_hashes: appendUnique('in_tx_hashes', normalizeHex(params.inTxHash)) }),
      ...(params.txHash === undefined ? {} : { tx_hashes: appendUnique('tx_hashes', normalizeHex(params.txHash)) }),
      ...(params.failReason === undefined ? {} : { fail_reason: params.failReason }),
      ...(params.refundFailReason === undefined ? {} : { refund_fail_reason: params.refundFailReason }),
      ...(params.details === undefined ? {} : { details: params.details === null ? null : toJson(params.details) }),
      ...(params.feesActual === undefined
        ? {}
        : { fees_actual: params.feesActual === null ? null : toJson(params.feesActual) }),
      ...(params.amountOut === undefined ? {} : { amount_out: toUint256(params.amountOut) }),
    })
    .where('id', '=', normalizeHex(id));
  if (params.fromStatus !== undefined) {
    const from: readonly RequestStatus[] =
      typeof params.fromStatus === 'string' ? [params.fromStatus] : params.fromStatus;
    if (from.length === 0) return null;
    query = query.where('status', 'in', from);
  }
  const row = await query.returningAll().executeTakeFirst();
  if (row === undefined) return null;

  const record = toRequestRecord(row);
  // The outbox lock is held since the first statement of this transaction.
  await writeStatusOutbox(db, record, params.now);
  return record;
}

/**
 * Record why a request is about to be refunded, before the refund is sent, without changing its status (and so
 * without an event: the status change that follows carries the reason). A restart that finds the refund in
 * flight reads the reason back from here. Transports show it only once the status is a failed one.
 */
export async function recordRequestFailReason(
  db: Kysely<Tables>,
  id: string,
  params: { failReason: string; details: JsonValue | null },
): Promise<void> {
  await db
    .updateTable('requests')
    .set({ fail_reason: params.failReason, details: params.details === null ? null : toJson(params.details) })
    .where('id', '=', normalizeHex(id))
    .execute();
}

export interface DeleteExpiredUnpaidRequestsParameters {
  /** Requests whose `expiresAt` is before this (Unix ms) may go. */
  expiredBefore: number;
  /** Most rows one call deletes. */
  limit: number;
}

/**
 * Delete up to `limit` requests that were never paid: still `waiting`, expired before `expiredBefore`, with no
 * deposit recorded, no event, no outgoing transaction, no ledger entry and no webhook delivery. One bounded
 * statement (`delete ... where id in (select id ... limit n)`, which PostgreSQL and PGlite both run; neither has
 * `DELETE ... LIMIT`). Returns the number of rows deleted.
 */
export async function deleteExpiredUnpaidRequests(
  db: Kysely<Tables>,
  params: DeleteExpiredUnpaidRequestsParameters,
): Promise<number> {
  const limit = Math.max(Math.trunc(params.limit), 0);
  if (limit === 0) return 0;
  const result = await db
    .deleteFrom('requests')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('requests as r')
        .select('r.id')
        .where('r.status', '=', 'waiting')
        .where('r.expires_at', '<', params.expiredBefore)
        .where((w) =>
          w.and([
            w.not(
              w.exists(
                w
                  .selectFrom('deposits')
                  .select(sql`1`.as('one'))
                  .whereRef('deposits.request_id', '=', 'r.id'),
              ),
            ),
            w.not(
              w.exists(
                w
                  .selectFrom('request_events')
                  .select(sql`1`.as('one'))
                  .whereRef('request_events.request_id', '=', 'r.id'),
              ),
            ),
            w.not(
              w.exists(
                w
                  .selectFrom('outgoing_txs')
                  .select(sql`1`.as('one'))
                  .whereRef('outgoing_txs.request_id', '=', 'r.id'),
              ),
            ),
            w.not(
              w.exists(
                w
                  .selectFrom('ledger_entries')
                  .select(sql`1`.as('one'))
                  .whereRef('ledger_entries.request_id', '=', 'r.id'),
              ),
            ),
            w.not(
              w.exists(
                w
                  .selectFrom('webhook_deliveries')
                  .select(sql`1`.as('one'))
                  .whereRef('webhook_deliveries.request_id', '=', 'r.id'),
              ),
            ),
          ]),
        )
        .limit(limit),
    )
    // A deposit recorded between the subquery and the delete keeps its request (re-checked on the locked row).
    .where('status', '=', 'waiting')
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/**
 * Adds a transaction hash of the request's own to `txHashes` without a status change (no event): the refund of
 * an excess leg that a strict deposit address swept beside the order's amount. Idempotent.
 */
export async function appendRequestTxHash(db: Kysely<Tables>, id: string, txHash: string): Promise<void> {
  await db
    .updateTable('requests')
    .set({ tx_hashes: appendUnique('tx_hashes', normalizeHex(txHash)) })
    .where('id', '=', normalizeHex(id))
    .execute();
}

const unique = (values: string[]): string[] => [...new Set(values)];

/**
 * USD volume (micro-USD) of the successful requests an API key quoted since `since` (Unix ms): the trailing
 * volume that decides a key's revenue-share tier.
 */
export async function sumApiKeyVolume(db: Kysely<Tables>, apiKeyId: string, since: number): Promise<bigint> {
  const row = await db
    .selectFrom('requests')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('volume_usd_micros'), sql<string>`0`).as('volume'))
    .where('api_key_id', '=', apiKeyId)
    .where('status', '=', 'success')
    .where('created_at', '>=', since)
    .executeTakeFirstOrThrow();
  return toBigInt(String(row.volume).split('.')[0]!);
}
