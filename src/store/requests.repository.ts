/**
 * The request records: a quote's insert (one row, or the group commit's batch), the reads by id and a key's
 * volume, the status writes (each with its outbox, `requestOutbox.ts`) and the retention job's deletes. The record
 * itself is `src/records/request.ts`, read from its row by `requestRecord.ts`; the history's lists are
 * `listRequests.repository.ts`.
 */
import { CompiledQuery, sql, type Insertable, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import { committedOutflowJson, type CommittedOutflowLine } from './committedOutflow.repository.js';
import { appendUnique } from './fragments.js';
import { groupedCalls } from './groupedCalls.js';
import { ledgerInsertWhen } from './ledger.repository.js';
import type { LedgerMovement } from './ledgerMovements.js';
import { normalizeHex, normalizeHexOrNull, toBigInt, toJson, toNumber, toUint256 } from './mappers.js';
import { notifyEvents, outboxLock } from './requestEvents.repository.js';
import { deliveryNotified, expectedEvents, movedEvents, writeStatusOutbox } from './requestOutbox.js';
import type { ExpectedEvent } from '../records/statusEvent.js';
import { toRequestRecord } from './requestRecord.js';
import type { RequestRecord } from '../records/request.js';
import { releasedReservationsOf, settleSponsorships, settlesSponsorship } from './sponsorshipReservations.js';
import type { RequestStatus } from '../records/requestStatus.js';
import type { JsonObject, JsonValue } from '../records/json.js';
import type { RequestsTable, Tables } from './tables.js';

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
  | 'version'
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
  > & {
    /** The quote's app fees in micro-USD (the history's app-fee filters); null or omitted: the quote has none. */
    appFeesUsdMicros?: bigint | null;
    /** What the request's fill will take from the solver on the destination, as the core decided it. */
    committedOutflow: ReadonlyArray<CommittedOutflowLine>;
  };

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
  if (rows.length > MAX_VALUES_ROWS) {
    await db.executeQuery(CompiledQuery.raw(insertRequestsDocumentSql, [requestRowsDocument(rows)]));
    return;
  }
  const values: unknown[] = [];
  for (const row of rows) for (const column of requestColumns) values.push(row[column]);
  await db.executeQuery(CompiledQuery.raw(insertRequestsValuesSql(rows.length), values));
}

/**
 * Store a sponsored quote's request (`apiKeyId` set) with its reservation of `usdMicros` against that key's
 * sponsorship allowance, in one statement: the key's reserved amount grows only if the key is live, has sponsorship
 * enabled and its allowance covers what it spent, what it holds and this (`spent + reserved + usdMicros <=
 * allowance`), and the request is inserted only if it did. Concurrent reservations wait for the key's row lock and
 * are checked again against what the first committed, so they cannot overdraw. Returns false when the key cannot
 * cover it: nothing was written. The reservation ends with the request (`sponsorshipReservations.ts`).
 */
export async function insertSponsoredRequest(
  db: Kysely<Tables>,
  params: InsertRequestParameters & { apiKeyId: string },
  usdMicros: bigint,
): Promise<boolean> {
  const amount = usdMicros.toString();
  const { rows } = await sql<{ id: string }>`
    with reserved as (
      update api_keys set sponsorship_reserved_usd_micros = sponsorship_reserved_usd_micros + ${amount}::numeric
      where id = ${params.apiKeyId} and revoked_at is null and sponsorship_enabled
        and sponsorship_spent_usd_micros + sponsorship_reserved_usd_micros + ${amount}::numeric
          <= sponsorship_allowance_usd_micros
      returning id
    )
    insert into requests (${sql.raw(quotedColumns)}, sponsorship_usd_micros, sponsorship_state)
    select ${sql.raw(requestColumns.map((column) => `request."${column}"`).join(', '))}, ${amount}::numeric, 'reserved'
    from jsonb_populate_recordset(null::requests, ${requestRowsDocument([toRequestRow(params)])}::jsonb) as request
      cross join reserved
    returning id`.execute(db);
  return rows.length > 0;
}

/**
 * Remove a request whose quote failed after it was stored, so the failed quote leaves nothing behind. Only
 * while it is still `waiting`: nobody was given its id, and a request a deposit moved on is never deleted.
 * A sponsored quote's reservation goes back to its key in the same statement. Returns whether a row was removed.
 */
export async function deleteUnansweredRequest(db: Kysely<Tables>, id: string): Promise<boolean> {
  const { rows } = await sql<{ deleted: string | number }>`
    with gone as (
      delete from requests where id = ${normalizeHex(id)} and status = 'waiting'
      returning api_key_id, sponsorship_usd_micros, sponsorship_state
    ),
    released as (${releasedReservationsOf('gone')})
    select count(*) as deleted from gone`.execute(db);
  return Number(rows[0]?.deleted ?? 0) > 0;
}

/** The columns a new request's row gives, in the order of its INSERT; the table's others keep their defaults. */
const requestColumns = [
  'id',
  'status',
  'user_address',
  'recipient',
  'refund_to',
  'sender',
  'origin_chain_id',
  'destination_chain_id',
  'origin_currency',
  'destination_currency',
  'amount_in',
  'amount_out',
  'min_amount_out',
  'trade_type',
  'operation',
  'order_id',
  'referrer',
  'api_key_id',
  'quote',
  'fees_quoted',
  'fees_actual',
  'fail_reason',
  'refund_fail_reason',
  'details',
  'in_tx_hashes',
  'tx_hashes',
  'deposit_address',
  'expires_at',
  'created_at',
  'updated_at',
  'volume_usd_micros',
  'app_fees_usd_micros',
  'committed_outflow',
] as const satisfies ReadonlyArray<keyof RequestsTable>;
type RequestRow = { [Column in (typeof requestColumns)[number]]: Insertable<RequestsTable>[Column] };

/** Of `requestColumns`, those of type `jsonb`: their values are JSON text (`toJson`). */
const jsonbColumns: ReadonlySet<string> = new Set<(typeof requestColumns)[number]>([
  'quote',
  'fees_quoted',
  'fees_actual',
  'details',
  'in_tx_hashes',
  'tx_hashes',
  'committed_outflow',
]);

/**
 * The group commit's INSERT has two forms. Up to `MAX_VALUES_ROWS` rows, a `values` list with one parameter per
 * column, one text per row count, built once; that is the cheapest for the few rows of a quiet gateway (a lone
 * quote's insert costs the PGlite worker ~10% less than through a document). A larger batch goes as one `jsonb`
 * array, turned into rows of the table's own types by `jsonb_populate_recordset`: one text for every size, and
 * as cheap per row as the list at 16 rows. PGlite's worker prepares each text once and keeps a bounded number of
 * them (`pgliteWorker.mjs`): with a `values` text for every size up to 64 rows (~7 KB each at 32), under 64 clients
 * they pushed each other out, and the worker parsed and analysed ~30 inserts a second again. Columns
 * absent from `requestColumns` keep their defaults.
 */
const MAX_VALUES_ROWS = 8;
const quotedColumns = requestColumns.map((column) => `"${column}"`).join(', ');
const insertRequestsValuesStatements: string[] = [];
function insertRequestsValuesSql(rowCount: number): string {
  return (insertRequestsValuesStatements[rowCount] ??= `insert into requests (${quotedColumns}) values ${Array.from(
    { length: rowCount },
    (_, row) => `(${requestColumns.map((_, i) => `$${row * requestColumns.length + i + 1}`).join(', ')})`,
  ).join(', ')}`);
}
const insertRequestsDocumentSql = `insert into requests (${quotedColumns}) select ${quotedColumns} from jsonb_populate_recordset(null::requests, $1::jsonb)`;

/**
 * The rows as one JSON array of objects keyed by column, written by hand: the `jsonb` columns hold JSON text
 * already (`toJson`), embedded as it is. Text is made well-formed first, as the parameter's UTF-8 encoding did
 * before (a lone surrogate becomes U+FFFD), since `jsonb` refuses a lone surrogate's escape.
 */
function requestRowsDocument(rows: readonly RequestRow[]): string {
  let document = '[';
  for (const [index, row] of rows.entries()) {
    document += index === 0 ? '{' : ',{';
    for (const [position, column] of requestColumns.entries()) {
      const value: unknown = row[column];
      const json =
        value === null || value === undefined
          ? 'null'
          : jsonbColumns.has(column)
            ? (value as string)
            : JSON.stringify(typeof value === 'string' ? wellFormed(value) : value);
      document += `${position === 0 ? '' : ','}"${column}":${json}`;
    }
    document += '}';
  }
  return `${document}]`;
}

/** `String.prototype.toWellFormed` (ES2024): lone surrogates become U+FFFD, as `TextEncoder` writes them. */
function wellFormed(text: string): string {
  return /[\uD800-\uDFFF]/.test(text) ? Buffer.from(text, 'utf8').toString('utf8') : text;
}

function toRequestRow(params: InsertRequestParameters): RequestRow {
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
    app_fees_usd_micros: params.appFeesUsdMicros == null ? null : toUint256(params.appFeesUsdMicros),
    committed_outflow: committedOutflowJson(params.committedOutflow),
  };
}

/** One request by id (any hex casing), or undefined. Backs the status operation and the signature route. */
export async function getRequest(db: Kysely<Tables>, id: string): Promise<RequestRecord | undefined> {
  const row = await db.selectFrom('requests').selectAll().where('id', '=', normalizeHex(id)).executeTakeFirst();
  return row === undefined ? undefined : toRequestRecord(row);
}

/** Several requests by id (any hex casing), by lower-case id; ids not found are absent. */
export async function getRequests(db: Kysely<Tables>, ids: readonly string[]): Promise<Map<string, RequestRecord>> {
  if (ids.length === 0) return new Map();
  // One array parameter, not a list: one statement text for any count, which PGlite's worker prepares once.
  const rows = await db
    .selectFrom('requests')
    .selectAll()
    .where(sql<boolean>`id = any(${ids.map(normalizeHex)}::text[])`)
    .execute();
  return new Map(rows.map((row) => [row.id, toRequestRecord(row)]));
}

/**
 * `getRequest` for a caller that reads many requests at about the same time (the solver, given a block's deposits
 * together): the first read goes at once, and the reads asked for while one is under way go together in the next
 * statement (`getRequests`, through `groupedCalls`). Every answer is read after it was asked for, as a lone
 * `getRequest` would be.
 */
export function coalescedRequestReads(db: Kysely<Tables>): (id: string) => Promise<RequestRecord | undefined> {
  return groupedCalls(
    async (ids: readonly string[]) => {
      if (ids.length === 1) return [await getRequest(db, ids[0]!)];
      const found = await getRequests(db, ids);
      return ids.map((id) => found.get(normalizeHex(id)));
    },
    // The status routes read through this: a flood of polls must not make one statement of unbounded size (PostgreSQL
    // takes at most 65,535 parameters, and one huge read holds everyone behind it).
    (group) => group.length < COALESCED_READ_GROUP,
  );
}

/** Most ids one coalesced read asks for. */
export const COALESCED_READ_GROUP = 256;

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
  /**
   * The ledger movements the change books (the core's rules: a fill's fees, exchange and payout with its `success`),
   * written in the change's statement when the row moved.
   */
  ledger?: readonly LedgerMovement[];
  /**
   * The change's event as the core built it from the row it read (`core/vocabulary/statusChange.ts`): written in the
   * change's statement when the moved row is that row's next write (its `version`); otherwise, or when absent, the
   * event is built from the moved row, in the same transaction (`writeStatusOutbox`).
   */
  expected?: ExpectedEvent;
  /** Unix milliseconds. `updatedAt` never moves backwards, even when instances' clocks disagree. */
  now: number;
}

/**
 * Change a request's status and append its event (the outbox row) in one transaction: both commit or neither
 * does. When `db` is already a transaction, it runs inside it. Returns the updated request, or null when the
 * request does not exist or its status did not match `fromStatus` (nothing is written then).
 *
 * One statement takes the outbox lock, updates the row, writes the change's ledger movements and, for most rows,
 * inserts the event with its webhook delivery and notifies (`moveRequestStatus`); the event of a row with a deposit
 * address (its fields are read) follows in the same transaction (`writeStatusOutbox`).
 */
export async function updateRequestStatus(
  db: Kysely<Tables>,
  id: string,
  params: UpdateRequestStatusParameters,
): Promise<RequestRecord | null> {
  if (!db.isTransaction) return db.transaction().execute((trx) => updateRequestStatus(trx, id, params));
  return (await moveRequestStatus(db, id, params, undefined)).moved;
}

/**
 * A deposit's claim for its request, in the caller's transaction: the deposit's move from `confirmed` to
 * `consumed` (the one decision between instances: only one claim consumes it) and, only when that happened, the
 * request's status change with its outbox, as `updateRequestStatus`. One statement for both. `consumed` false:
 * nothing was written. `consumed` with `moved` null: the request did not match `fromStatus`; the deposit's move
 * stands in the transaction (the caller goes on or rolls back).
 */
export async function claimDepositForRequest(
  trx: Kysely<Tables>,
  depositId: number,
  requestId: string,
  params: UpdateRequestStatusParameters,
): Promise<{ consumed: boolean; moved: RequestRecord | null }> {
  if (!trx.isTransaction) throw new Error('claimDepositForRequest runs in a transaction');
  return moveRequestStatus(trx, requestId, params, depositId);
}

/** One deposit to claim for its request in `claimDepositsForRequests`. */
export interface GroupedDepositClaim {
  depositId: number;
  requestId: string;
  /** The deposit's `updatedAt` as it was `confirmed`: restored when its claim is undone. */
  confirmedAt: number;
}

/**
 * `claimDepositForRequest` for several deposits of distinct requests, in the caller's transaction, in one statement:
 * every deposit's conditional move to `consumed` first (their row locks, then the outbox lock, then the requests'
 * rows, the order every claim takes them in), then each consumed deposit's request moved with its hash appended
 * and its outbox written. Answers in the order given: the request as moved; `taken` when the deposit was no longer
 * `confirmed` (nothing written); `unmoved` when its request did not match `fromStatus`: that deposit's move is
 * undone in the transaction (`confirmed` again, its `updatedAt` restored), so the caller claims it on its own.
 */
export async function claimDepositsForRequests(
  trx: Kysely<Tables>,
  claims: readonly GroupedDepositClaim[],
  params: GroupedMoveParameters,
): Promise<Array<RequestRecord | 'taken' | 'unmoved'>> {
  if (!trx.isTransaction) throw new Error('claimDepositsForRequests runs in a transaction');
  if (claims.length === 0) return [];
  // Two deposits of one request would both join its one moved row: each request once.
  const requestIds = claims.map((claim) => normalizeHex(claim.requestId));
  if (new Set(requestIds).size !== requestIds.length) throw new Error('claimDepositsForRequests: a request twice');
  if (params.fromStatus.length === 0) throw new Error('claimDepositsForRequests: no status to move from');
  const { rows } = await sql<
    Omit<MovedRow, 'outbox_event_id' | 'deposit_consumed'> & {
      claimed_deposit_id: string | number;
      outbox_written: boolean;
    }
  >`
    with consumed as (
      update deposits set status = 'consumed', updated_at = ${params.now}
      where id = any(${claims.map((claim) => claim.depositId)}::bigint[]) and status = 'confirmed'
      returning id, request_id, tx_hash, block_number
    ),
    outbox_lock as (select ${outboxLock} as taken from (select 1 from consumed limit 1) as any_consumed),
    ${movedTogether({ name: 'consumed', id: 'request_id' }, sql`${appendedHash('in_tx_hashes', { name: 'consumed', hash: 'tx_hash' })}, deposit_id = consumed.id, origin_block = consumed.block_number`, params)}
    select consumed.id as claimed_deposit_id, moved.*,
      exists (select 1 from moved_event where moved_event.request_id = consumed.request_id) as outbox_written,
      ${notifyEvents('moved_event')} as outbox_notified,
      ${deliveryNotified}
    from consumed left join moved on moved.id = consumed.request_id`.execute(trx);
  const byDeposit = new Map(rows.map((row) => [toNumber(row.claimed_deposit_id), row]));
  const answers: Array<RequestRecord | 'taken' | 'unmoved'> = [];
  for (const claim of claims) {
    const row = byDeposit.get(claim.depositId);
    const movedId = row?.id ?? null;
    if (row === undefined) answers.push('taken');
    else if (movedId === null) {
      await trx
        .updateTable('deposits')
        .set({ status: 'confirmed', updated_at: claim.confirmedAt })
        .where('id', '=', claim.depositId)
        .where('status', '=', 'consumed')
        .execute();
      answers.push('unmoved');
    } else {
      const {
        id: _id,
        claimed_deposit_id: _deposit,
        outbox_written: written,
        outbox_notified: _notified,
        delivery_notified: _delivery,
        ...rest
      } = row;
      const record = toRequestRecord({ ...rest, id: movedId });
      // Under the outbox lock since the statement, as `updateRequestStatus`'s rest of the outbox.
      if (!written) await writeStatusOutbox(trx, record, params.now);
      answers.push(record);
    }
  }
  return answers;
}

/** A grouped move's status, the statuses it may come from, its clock and the events its writer built. */
export interface GroupedMoveParameters {
  status: RequestStatus;
  fromStatus: readonly RequestStatus[];
  now: number;
  /** The moves' events as the core built them, by request (`UpdateRequestStatusParameters.expected`). */
  expected?: readonly ExpectedEvent[];
}

/**
 * The `moved` and `moved_event` CTEs of a grouped move (`claimDepositsForRequests`, `moveRequestsWithTxHash`,
 * `failRequests`): every request named by a row of the CTE `source.name` (its column `id`) moved from `fromStatus`,
 * once the outbox lock is held (`exists (select 1 from outbox_lock)`: the statement defines `outbox_lock` before
 * these), with `set` (`column = value`, the source's columns named as `${source.name}.column`) changed with it; then
 * the events of the moved rows that the statement writes itself (`outboxInStatement`).
 */
function movedTogether(source: { name: string; id: string }, set: RawBuilder<unknown>, params: GroupedMoveParameters) {
  return sql`${expectedEvents(params.expected ?? [])},
    moved as (
      update requests
      set status = ${params.status}, updated_at = greatest(requests.updated_at, ${params.now}), ${set}${
        params.status === 'success' ? sql`, fill_time_ms = ${fillTimeAt(params.now)}` : sql``
      }
      from ${sql.table(source.name)}
      where requests.id = ${sql.ref(`${source.name}.${source.id}`)} and requests.status in (${sql.join(params.fromStatus)})
        and exists (select 1 from outbox_lock)
      returning requests.*
    ),
    ${movedEvents(params.now)}`;
}

/**
 * A fill's time as the history's `fillTimeMin`/`fillTimeMax` compare it, for a move to `success` at `now`: from the
 * sighting of the deposit the request was claimed with (`deposits.created_at`, as the `deposit_succeeded` metric
 * measures it) to now; null when no deposit was claimed (a fast fill, a same-chain transfer indexed as it landed).
 */
const fillTimeAt = (now: number) =>
  sql<string>`(select greatest(0, ${now}::bigint - d.created_at) from deposits as d where d.id = requests.deposit_id)`;

/** `column = column || hash` (once) for a grouped move, the hash from the source row's column `hash`. */
const appendedHash = (column: 'in_tx_hashes' | 'tx_hashes', source: { name: string; hash: string }) =>
  sql`${sql.ref(column)} = ${appendUnique(`requests.${column}`, sql.ref(`${source.name}.${source.hash}`))}`;

/** One request to move in `moveRequestsWithTxHash`, with the destination-chain hash to append to it. */
export interface TxHashMove {
  requestId: string;
  txHash: string;
}

/**
 * `updateRequestStatus` with `txHash` for several distinct requests, in the caller's transaction, in one statement:
 * the outbox lock first, then every request's conditional move with its hash appended, then the events of those
 * written in the statement (`outboxInStatement`); the rest of their outboxes follow, still under the lock. Answers
 * in the order given: the request as moved, or null when it did not match `fromStatus` (nothing written for it).
 */
export async function moveRequestsWithTxHash(
  trx: Kysely<Tables>,
  moves: readonly TxHashMove[],
  params: GroupedMoveParameters,
): Promise<Array<RequestRecord | null>> {
  if (!trx.isTransaction) throw new Error('moveRequestsWithTxHash runs in a transaction');
  if (moves.length === 0) return [];
  const ids = moves.map((move) => normalizeHex(move.requestId));
  // Each request's row is updated once per statement: one hash each.
  if (new Set(ids).size !== ids.length) throw new Error('moveRequestsWithTxHash: a request twice');
  if (params.fromStatus.length === 0) return moves.map(() => null);
  const asked = sql`select * from unnest(${ids}::text[], ${moves.map((move) => normalizeHex(move.txHash))}::text[])
    as asked (id, hash)`;
  return moveAsked(trx, ids, asked, appendedHash('tx_hashes', { name: 'asked', hash: 'hash' }), params);
}

/** A row of a grouped move's answer: the moved request, and whether the statement wrote its event. */
type GroupedMoveRow = Omit<MovedRow, 'outbox_event_id' | 'deposit_consumed'> & { outbox_written: boolean };

/**
 * A grouped move of the distinct requests `ids`, named by the query `asked` (its rows `asked.id`, in any order), in
 * one statement that takes the outbox lock first (`movedTogether` with `set`); then the rest of the outbox of each
 * moved request whose event the statement did not write, under that lock. Answers in the order of `ids`: the request
 * as moved, or null (nothing written for it).
 */
async function moveAsked(
  trx: Kysely<Tables>,
  ids: readonly string[],
  asked: RawBuilder<unknown>,
  set: RawBuilder<unknown>,
  params: GroupedMoveParameters,
): Promise<Array<RequestRecord | null>> {
  const { rows } = await sql<GroupedMoveRow>`
    with outbox_lock as (select ${outboxLock} as taken),
    asked as (${asked}),
    ${movedTogether({ name: 'asked', id: 'id' }, set, params)}
    select moved.*, exists (select 1 from moved_event where moved_event.request_id = moved.id) as outbox_written,
      ${notifyEvents('moved_event')} as outbox_notified,
      ${deliveryNotified}
    from moved`.execute(trx);
  const byId = new Map(rows.map((row) => [row.id, row]));
  const answers: Array<RequestRecord | null> = [];
  for (const id of ids) {
    const row = byId.get(id);
    if (row === undefined || row.id === null) {
      answers.push(null);
      continue;
    }
    const { outbox_written: written, outbox_notified: _notified, delivery_notified: _delivery, ...rest } = row;
    const record = toRequestRecord({ ...rest, id: row.id });
    // Under the outbox lock since the statement, as `updateRequestStatus`'s rest of the outbox.
    if (!written) await writeStatusOutbox(trx, record, params.now);
    answers.push(record);
  }
  // Sponsored requests' reservations end with their moves, in this transaction (one statement for all of them).
  await settleSponsorships(
    trx,
    rows.flatMap((row) => (row.id !== null && settlesSponsorship(row) ? [row.id] : [])),
  );
  return answers;
}

/**
 * `updateRequestStatus` to `failure` with `failReason` for several distinct requests, in the caller's transaction,
 * in one statement (as `moveRequestsWithTxHash`, without a hash): each request that is in one of `fromStatus` moves,
 * with its event. Answers in the order given: the request as moved, or null (nothing written for it).
 */
export async function failRequests(
  trx: Kysely<Tables>,
  requestIds: readonly string[],
  params: { fromStatus: readonly RequestStatus[]; failReason: string; now: number },
): Promise<Array<RequestRecord | null>> {
  if (!trx.isTransaction) throw new Error('failRequests runs in a transaction');
  const ids = requestIds.map(normalizeHex);
  if (new Set(ids).size !== ids.length) throw new Error('failRequests: a request twice');
  if (ids.length === 0 || params.fromStatus.length === 0) return ids.map(() => null);
  const asked = sql`select * from unnest(${ids}::text[]) as asked (id)`;
  const { fromStatus, now } = params;
  return moveAsked(trx, ids, asked, sql`fail_reason = ${params.failReason}`, { status: 'failure', fromStatus, now });
}

/** The answer of `moveRequestStatus`: the moved row's columns (null when nothing moved), and what else it did. */
type MovedRow = Omit<Selectable<RequestsTable>, 'id'> & {
  id: string | null;
  /** The event the statement inserted; null when `writeStatusOutbox` writes it (or nothing moved). */
  outbox_event_id: unknown;
  outbox_notified: unknown;
  delivery_notified: unknown;
  deposit_consumed: boolean;
};

/**
 * The status change as one statement: the outbox lock (`outboxLock`) taken first, before the request's row is
 * locked (the update's rows wait for it: `exists (select 1 from outbox_lock)`), so every event id is still drawn under
 * the lock and the lock still comes before any request row lock. With `depositId`, the deposit's conditional
 * update comes first and the lock is taken only for the row it returns, so nothing else happens when it returns
 * none; the lock then follows the deposit's row lock, as when the claim ran these as separate statements.
 */
async function moveRequestStatus(
  db: Kysely<Tables>,
  id: string,
  params: UpdateRequestStatusParameters,
  depositId: number | undefined,
): Promise<{ consumed: boolean; moved: RequestRecord | null }> {
  const from: readonly RequestStatus[] | undefined =
    params.fromStatus === undefined
      ? undefined
      : typeof params.fromStatus === 'string'
        ? [params.fromStatus]
        : params.fromStatus;
  if (from !== undefined && from.length === 0 && depositId === undefined) return { consumed: false, moved: null };
  let update = db
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
      // The claimed deposit is the request's own by its identity, not only by its transaction's hash.
      ...(depositId === undefined
        ? {}
        : {
            deposit_id: depositId,
            origin_block: sql<string>`(select block_number from deposits where id = ${depositId})`,
          }),
      ...(params.status === 'success' ? { fill_time_ms: fillTimeAt(params.now) } : {}),
    })
    .where('id', '=', normalizeHex(id))
    .where(sql<boolean>`exists (select 1 from outbox_lock)`);
  if (from !== undefined)
    update = from.length === 0 ? update.where(sql<boolean>`false`) : update.where('status', 'in', from);
  const consume =
    depositId === undefined
      ? sql``
      : sql`consumed as (
          update deposits set status = 'consumed', updated_at = ${params.now}
          where id = ${depositId} and status = 'confirmed'
          returning id
        ), `;
  const { rows } = await sql<MovedRow>`
    with ${consume}outbox_lock as (select ${outboxLock} as taken${depositId === undefined ? sql`` : sql` from consumed`}),
    ${expectedEvents(params.expected === undefined ? [] : [params.expected])},
    moved as (${update.returningAll()}),
    ${movedLedger(params)}${movedEvents(params.now)}
    select moved.*, (select id from moved_event) as outbox_event_id,
      ${notifyEvents('moved_event')} as outbox_notified,
      ${deliveryNotified},
      ${depositId === undefined ? sql`true` : sql`exists (select 1 from consumed)`} as deposit_consumed
    from (select 1) as one left join moved on true`.execute(db);
  // One row always (`from (select 1)`); its request columns are null when nothing moved.
  const row = rows[0];
  const consumed = row?.deposit_consumed === true;
  const movedId = row?.id ?? null;
  if (row === undefined || movedId === null) return { consumed, moved: null };
  const {
    id: _id,
    outbox_event_id: eventId,
    outbox_notified: _notified,
    delivery_notified: _delivery,
    deposit_consumed: _consumed,
    ...rest
  } = row;
  const record = toRequestRecord({ ...rest, id: movedId });
  // The lock is held since this statement (it took it before the update); the rest of the outbox goes beside.
  if (eventId === null) await writeStatusOutbox(db, record, params.now);
  // A sponsored request's reservation ends with its fill, failure or refund, in this transaction.
  if (settlesSponsorship(row)) await settleSponsorships(db, [movedId]);
  return { consumed, moved: record };
}

/** The CTE `moved_ledger` of a status change's statement: its ledger movements, when the row moved (none: empty). */
const movedLedger = (params: UpdateRequestStatusParameters) =>
  params.ledger === undefined || params.ledger.length === 0
    ? sql``
    : sql`moved_ledger as (${ledgerInsertWhen(params.ledger, params.now, sql`exists (select 1 from moved)`)}),
    `;

/**
 * Record why a request is about to be refunded, before the refund is sent, without changing its status (and so
 * without an event: the status change that follows carries the reason). A restart that finds the refund in
 * flight reads the reason back from here. Transports show it only once the status is a failed one.
 * Answers the request as written (undefined when it does not exist), so the change that follows is built from it.
 */
export async function recordRequestFailReason(
  db: Kysely<Tables>,
  id: string,
  params: { failReason: string; details: JsonValue | null },
): Promise<RequestRecord | undefined> {
  const row = await db
    .updateTable('requests')
    .set({ fail_reason: params.failReason, details: params.details === null ? null : toJson(params.details) })
    .where('id', '=', normalizeHex(id))
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? undefined : toRequestRecord(row);
}

/** The tables whose rows make a request history: a request with a row in any of them is never deleted unpaid. */
const REQUEST_HISTORY_TABLES = [
  'deposits',
  'request_events',
  'outgoing_txs',
  'ledger_entries',
  'webhook_deliveries',
] as const;

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
 * `DELETE ... LIMIT`), which also gives back any reservation of sponsorship still open on them (the expiry sweep
 * normally released it long before). Returns the number of rows deleted.
 */
export async function deleteExpiredUnpaidRequests(
  db: Kysely<Tables>,
  params: DeleteExpiredUnpaidRequestsParameters,
): Promise<number> {
  const limit = Math.max(Math.trunc(params.limit), 0);
  if (limit === 0) return 0;
  const deleted = db
    .deleteFrom('requests')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('requests as r')
        .select('r.id')
        .where('r.status', '=', 'waiting')
        .where('r.expires_at', '<', params.expiredBefore)
        .where((w) =>
          w.and(
            REQUEST_HISTORY_TABLES.map((table) =>
              w.not(
                w.exists(
                  w
                    .selectFrom(table)
                    .select(sql`1`.as('one'))
                    .whereRef(`${table}.request_id`, '=', 'r.id'),
                ),
              ),
            ),
          ),
        )
        .limit(limit),
    )
    // A deposit recorded between the subquery and the delete keeps its request (re-checked on the locked row).
    .where('status', '=', 'waiting')
    .returning(['api_key_id', 'sponsorship_usd_micros', 'sponsorship_state']);
  const { rows } = await sql<{ deleted: string | number }>`
    with gone as (${deleted}),
    released as (${releasedReservationsOf('gone')})
    select count(*) as deleted from gone`.execute(db);
  return Number(rows[0]?.deleted ?? 0);
}

/**
 * Adds a transaction hash of the request's own to `txHashes` without a status change: the refund of an excess leg
 * that a strict deposit address swept beside the order's amount. Its event (the status record with the hash, same
 * status) is written in the same transaction, so `/ws`, subscriptions and webhooks tell of the refund as of any
 * other. Idempotent: a hash already there changes nothing and writes no second event.
 */
export async function appendRequestTxHash(db: Kysely<Tables>, id: string, txHash: string, now: number): Promise<void> {
  const hash = normalizeHex(txHash);
  await db.transaction().execute(async (trx) => {
    // The outbox lock before the row's, as every status change takes them (`outboxLock`).
    await sql`select ${outboxLock}`.execute(trx);
    const row = await trx
      .updateTable('requests')
      .set({ tx_hashes: appendUnique('tx_hashes', hash) })
      .where('id', '=', normalizeHex(id))
      .where(sql<boolean>`not (tx_hashes @> cast(${toJson([hash])} as jsonb))`)
      .returningAll()
      .executeTakeFirst();
    if (row !== undefined) await writeStatusOutbox(trx, toRequestRecord(row), now);
  });
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
