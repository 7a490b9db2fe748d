import { CompiledQuery, sql, type Insertable, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import { requestFilled } from '../core/ledger/movements.js';
import { availableAppBalanceUsd, lockAppWallet } from './appFeeClaims.repository.js';
import { insertLedgerMovements } from './ledger.repository.js';
import { normalizeHex, normalizeHexOrNull, toBigInt, toJson, toNumber, toUint256 } from './mappers.js';
import { InvalidContinuationError } from './errors.js';
import { appendUnique } from './fragments.js';
import type { RequestStatus, RequestStatusSnapshot, StatusDepositAddress } from './requestStatus.js';
import { depositAddressesOfRequests } from './depositAddresses.repository.js';
import { applySearchFilters, type SearchRequestFilters } from './requestFilters.js';
import { insertRequestEvent, lockOutbox } from './requestEvents.repository.js';
import type { JsonObject, JsonValue, RequestsTable, Tables } from './tables.js';
import { enqueueWebhookDelivery } from './webhookDeliveries.repository.js';

export {
  requestStatuses,
  type RequestStatus,
  type RequestStatusSnapshot,
  type StatusDepositAddress,
} from './requestStatus.js';

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
  const event = await insertRequestEvent(db, {
    requestId: record.id,
    status: record.status,
    payload: await statusSnapshotOf(db, record),
    now: params.now,
  });
  // The webhook delivery is part of the outbox: committed with the change, or not at all.
  if (record.apiKeyId !== null) {
    await enqueueWebhookDelivery(db, {
      requestId: record.id,
      apiKeyId: record.apiKeyId,
      eventId: event.id,
      now: params.now,
    });
  }
  // So is the ledger: a fill's fees, exchange and payout commit with its `success`.
  if (record.status === 'success') await insertLedgerMovements(db, requestFilled(record), params.now);
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

/** Identity, time and status filters; the search filters are in `requestFilters.ts`. */
export interface ListRequestsFilters extends SearchRequestFilters {
  /** The paying user (`user_address`); the reference's v3 `user` means sender/depositor. */
  user?: string;
  id?: string;
  originChainId?: number;
  destinationChainId?: number;
  /** Either direction; ignored when `originChainId` or `destinationChainId` is given (as in the reference). */
  chainId?: number;
  status?: RequestStatus | readonly RequestStatus[];
  /** Unix seconds, inclusive, over `createdAt` (or `updatedAt` when sorting by it). */
  startTimestamp?: number;
  /** Unix seconds, inclusive of the whole second. */
  endTimestamp?: number;
  referrer?: string;
  /** One key or several (the reference's `apiKey` takes a comma list). */
  apiKeyId?: string | readonly string[];
  depositAddress?: string;
  orderId?: string;
  recipient?: string;
  failReason?: string;
}

export type RequestSortBy = 'createdAt' | 'updatedAt';
export type SortDirection = 'asc' | 'desc';

export interface ListRequestsOptions {
  /** 1 to 50 (the reference's maximum); default 20. Out-of-range values are clamped. */
  limit?: number;
  /** The `continuation` of the previous page, unchanged. */
  continuation?: string;
  sortBy?: RequestSortBy;
  sortDirection?: SortDirection;
}

export interface ListRequestsResult {
  requests: RequestRecord[];
  /** Present when more rows follow; pass it back with the same filters and sort. */
  continuation: string | undefined;
}

export const maxListRequestsLimit = 50;
const defaultListRequestsLimit = 20;

/**
 * One page of requests matching `filters`, for GET /requests/v3 and /requests/v2. Keyset pagination on
 * (sort key, id): stable under equal timestamps and under inserts between pages. Throws
 * `InvalidContinuationError` for a continuation that is malformed or was made for another sort.
 */
export async function listRequests(
  db: Kysely<Tables>,
  filters: ListRequestsFilters,
  options: ListRequestsOptions = {},
): Promise<ListRequestsResult> {
  const sortBy = options.sortBy ?? 'createdAt';
  const direction = options.sortDirection ?? 'desc';
  const limit = Math.min(Math.max(Math.trunc(options.limit ?? defaultListRequestsLimit), 1), maxListRequestsLimit);
  const sortColumn = sortBy === 'createdAt' ? 'created_at' : 'updated_at';

  let query = whereListFilters(db.selectFrom('requests').selectAll(), filters, sortColumn);

  if (options.continuation !== undefined) {
    const after = decodeContinuation(options.continuation, sortBy, direction);
    query = query.where((eb) =>
      eb(eb.refTuple(sortColumn, 'id'), direction === 'desc' ? '<' : '>', eb.tuple(after.key, after.id)),
    );
  }

  const rows = await query
    .orderBy(sortColumn, direction)
    .orderBy('id', direction)
    .limit(limit + 1)
    .execute();
  const requests = rows.slice(0, limit).map(toRequestRecord);
  const last = requests.at(-1);
  const continuation =
    rows.length > limit && last !== undefined
      ? encodeContinuation({
          s: sortBy,
          d: direction,
          k: sortBy === 'createdAt' ? last.createdAt : last.updatedAt,
          i: last.id,
        })
      : undefined;
  return { requests, continuation };
}

export interface CountRequestsOptions {
  sortBy?: RequestSortBy;
  /** Exact bounds of the sort time, Unix ms inclusive (on top of the filters' whole-second bounds). */
  from?: number | undefined;
  to?: number | undefined;
  /** Stop counting here: the answer is at most `cap` (the bound of the work one count may do). */
  cap: number;
}

/**
 * How many requests `listRequests` would list over all its pages with these filters, counted by one bounded
 * SQL query (`select count(*) from (select 1 ... limit cap)`): at most `cap` rows are visited, whatever the
 * table's size. Returns at most `cap`.
 */
export async function countRequests(
  db: Kysely<Tables>,
  filters: ListRequestsFilters,
  options: CountRequestsOptions,
): Promise<number> {
  const sortColumn = (options.sortBy ?? 'createdAt') === 'createdAt' ? 'created_at' : 'updated_at';
  let inner = whereListFilters(db.selectFrom('requests').select(sql<number>`1`.as('one')), filters, sortColumn);
  if (options.from !== undefined) inner = inner.where(sortColumn, '>=', options.from);
  if (options.to !== undefined) inner = inner.where(sortColumn, '<=', options.to);
  const cap = Math.max(Math.trunc(options.cap), 0);
  const row = await db
    .selectFrom(inner.limit(cap).as('matching'))
    .select((eb) => eb.fn.countAll<string | number | bigint>().as('total'))
    .executeTakeFirstOrThrow();
  return Number(row.total);
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

type RequestsQuery<O> = SelectQueryBuilder<Tables, 'requests', O>;

/** The WHERE clauses of the listing filters, shared by `listRequests` and `countRequests`. */
function whereListFilters<O>(
  base: RequestsQuery<O>,
  filters: ListRequestsFilters,
  sortColumn: 'created_at' | 'updated_at',
): RequestsQuery<O> {
  let query = base;
  if (filters.user !== undefined) query = query.where('user_address', '=', normalizeHex(filters.user));
  if (filters.id !== undefined) query = query.where('id', '=', normalizeHex(filters.id));
  if (filters.originChainId !== undefined) query = query.where('origin_chain_id', '=', filters.originChainId);
  if (filters.destinationChainId !== undefined) {
    query = query.where('destination_chain_id', '=', filters.destinationChainId);
  }
  if (
    filters.chainId !== undefined &&
    filters.originChainId === undefined &&
    filters.destinationChainId === undefined
  ) {
    const chainId = filters.chainId;
    query = query.where((eb) => eb.or([eb('origin_chain_id', '=', chainId), eb('destination_chain_id', '=', chainId)]));
  }
  if (filters.status !== undefined) {
    const statuses: readonly RequestStatus[] = typeof filters.status === 'string' ? [filters.status] : filters.status;
    query = statuses.length === 0 ? query.where(sql<boolean>`false`) : query.where('status', 'in', statuses);
  }
  if (filters.startTimestamp !== undefined) {
    query = query.where(sortColumn, '>=', Math.floor(filters.startTimestamp) * 1000);
  }
  if (filters.endTimestamp !== undefined) {
    query = query.where(sortColumn, '<', (Math.floor(filters.endTimestamp) + 1) * 1000);
  }
  if (filters.referrer !== undefined) query = query.where('referrer', '=', filters.referrer);
  if (filters.apiKeyId !== undefined) {
    const keys: readonly string[] = typeof filters.apiKeyId === 'string' ? [filters.apiKeyId] : filters.apiKeyId;
    query = keys.length === 0 ? query.where(sql<boolean>`false`) : query.where('api_key_id', 'in', keys);
  }
  if (filters.depositAddress !== undefined) {
    query = query.where('deposit_address', '=', normalizeHex(filters.depositAddress));
  }
  if (filters.orderId !== undefined) query = query.where('order_id', '=', normalizeHex(filters.orderId));
  if (filters.recipient !== undefined) query = query.where('recipient', '=', normalizeHex(filters.recipient));
  if (filters.failReason !== undefined) query = query.where('fail_reason', '=', filters.failReason);
  return applySearchFilters(query, filters);
}

interface Continuation {
  s: RequestSortBy;
  d: SortDirection;
  k: number;
  i: string;
}

const encodeContinuation = (c: Continuation): string => Buffer.from(JSON.stringify(c)).toString('base64url');

function decodeContinuation(
  value: string,
  sortBy: RequestSortBy,
  direction: SortDirection,
): { key: number; id: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    parsed = undefined;
  }
  const c = parsed as Partial<Continuation> | undefined;
  if (
    typeof c !== 'object' ||
    c === null ||
    typeof c.k !== 'number' ||
    !Number.isSafeInteger(c.k) ||
    typeof c.i !== 'string'
  ) {
    throw new InvalidContinuationError('Invalid continuation');
  }
  if (c.s !== sortBy || c.d !== direction) {
    throw new InvalidContinuationError('The continuation was made for another sortBy or sortDirection');
  }
  return { key: c.k, id: c.i };
}

function toRequestRecord(row: Selectable<RequestsTable>): RequestRecord {
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

/** The status record of a request, as stored in its events, with its deposit address read from `db`. */
export async function statusSnapshotOf(db: Kysely<Tables>, record: RequestRecord): Promise<RequestStatusSnapshot> {
  if (record.depositAddress === null) return toStatusSnapshot(record, null);
  const stored = (await depositAddressesOfRequests(db, [record.id])).get(record.id);
  return toStatusSnapshot(
    record,
    stored === undefined
      ? { address: record.depositAddress, type: 'open', depositor: null, depositTxHash: null, recoveryAddress: null }
      : {
          address: stored.address,
          type: stored.type,
          depositor: stored.depositor,
          depositTxHash: stored.depositTxHash,
          recoveryAddress: stored.recoveryAddress,
        },
  );
}

/** The status record of a request, as stored in its events. */
export function toStatusSnapshot(
  record: RequestRecord,
  depositAddress: StatusDepositAddress | null,
): RequestStatusSnapshot {
  return {
    requestId: record.id,
    status: record.status,
    inTxHashes: record.inTxHashes,
    txHashes: record.txHashes,
    updatedAt: record.updatedAt,
    originChainId: record.originChainId,
    destinationChainId: record.destinationChainId,
    details: record.details,
    failReason: record.failReason,
    refundFailReason: record.refundFailReason,
    referrer: record.referrer,
    depositAddress,
  };
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

export interface ClaimForFastFillParameters {
  requestId: string;
  apiKeyId: string;
  /** USD value the fill puts at risk, micro-USD. */
  usdMicros: bigint;
  /** The key's limit on outstanding fast fills, micro-USD. */
  limitUsdMicros: bigint;
  /**
   * The key's wallet (its payout address), lower case: the fill is held against that wallet's app-fee balance,
   * which must cover it, besides the key's limit. Null: only the limit applies.
   */
  appWallet?: string | null;
  now: number;
}

export type ClaimForFastFillResult =
  | { claimed: true; request: RequestRecord }
  | { claimed: false; reason: 'not-waiting'; request: RequestRecord | undefined }
  | { claimed: false; reason: 'over-limit'; outstandingUsdMicros: bigint }
  | { claimed: false; reason: 'over-balance'; availableUsdMicros: bigint };

/**
 * Moves a `waiting` request to `pending` for a fast fill, if the key's outstanding exposure (its fast-filled
 * requests whose deposit has not arrived, not counting failed or refunded ones) stays within its limit. The
 * key's row is locked for the transaction, so two concurrent fast fills of one key cannot both pass the check.
 * With `appWallet`, the fill is also a hold on that wallet's app-fee balance, which must cover it.
 */
export async function claimForFastFill(
  db: Kysely<Tables>,
  params: ClaimForFastFillParameters,
): Promise<ClaimForFastFillResult> {
  if (!db.isTransaction) return db.transaction().execute((trx) => claimForFastFill(trx, params));
  await db.selectFrom('api_keys').select('id').where('id', '=', params.apiKeyId).forUpdate().execute();
  const row = await db
    .selectFrom('requests')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('fast_fill_usd_micros'), sql<string>`0`).as('outstanding'))
    .where('fast_fill_api_key_id', '=', params.apiKeyId)
    .where(sql<boolean>`jsonb_array_length(in_tx_hashes) = 0`)
    .where('status', 'in', ['pending', 'submitted', 'success'])
    .executeTakeFirstOrThrow();
  const outstanding = toBigInt(String(row.outstanding).split('.')[0]!);
  if (outstanding + params.usdMicros > params.limitUsdMicros)
    return { claimed: false, reason: 'over-limit', outstandingUsdMicros: outstanding };
  if (params.appWallet != null) {
    // The wallet's lock, as claims take it: a claim and a fast fill cannot both spend one balance.
    await lockAppWallet(db, params.appWallet);
    const available = await availableAppBalanceUsd(db, params.appWallet);
    if (available < params.usdMicros) return { claimed: false, reason: 'over-balance', availableUsdMicros: available };
  }
  const moved = await updateRequestStatus(db, params.requestId, {
    status: 'pending',
    fromStatus: 'waiting',
    now: params.now,
  });
  if (moved === null) return { claimed: false, reason: 'not-waiting', request: await getRequest(db, params.requestId) };
  const updated = await db
    .updateTable('requests')
    .set({ fast_fill_api_key_id: params.apiKeyId, fast_fill_usd_micros: toUint256(params.usdMicros) })
    .where('id', '=', normalizeHex(params.requestId))
    .returningAll()
    .executeTakeFirstOrThrow();
  return { claimed: true, request: toRequestRecord(updated) };
}

/** Records the deposit of a fast-filled request (its origin hash) without changing its status. */
export async function attachDepositToFastFill(
  db: Kysely<Tables>,
  requestId: string,
  inTxHash: string,
  now: number,
): Promise<RequestRecord | null> {
  const row = await db
    .updateTable('requests')
    .set({
      in_tx_hashes: appendUnique('in_tx_hashes', normalizeHex(inTxHash)),
      updated_at: sql<string>`greatest(updated_at, ${now})`,
    })
    .where('id', '=', normalizeHex(requestId))
    .where('fast_fill_api_key_id', 'is not', null)
    .where(sql<boolean>`jsonb_array_length(in_tx_hashes) = 0`)
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? null : toRequestRecord(row);
}
