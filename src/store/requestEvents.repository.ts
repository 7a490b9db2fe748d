import { sql, type Kysely, type Selectable } from 'kysely';
import { groupByRequest, normalizeHex, toJson, toNumber } from './mappers.js';
import { readStatusSnapshot, type RequestStatus, type RequestStatusSnapshot } from './requestStatus.js';
import type { RequestEventsTable, Tables } from './tables.js';
import { webhookDeliveriesOf, webhookNotifyChannel } from './webhookDeliveries.repository.js';

/** One row of a request's status history; also an outbox entry for webhooks and event fan-out. */
export interface RequestEvent {
  /** Increases in commit order (see `outboxLock`), so a reader can resume after the last id it saw. */
  id: number;
  requestId: string;
  status: RequestStatus;
  /** The status record right after the change. */
  payload: RequestStatusSnapshot;
  createdAt: number;
}

export interface InsertRequestEventParameters {
  requestId: string;
  status: RequestStatus;
  payload: RequestStatusSnapshot;
  now: number;
  /** The API key the request was quoted with: its webhook gets a delivery of the event (`webhookDeliveriesOf`). */
  apiKeyId?: string | null;
}

/**
 * The outbox lock of this schema, held until the current transaction ends: the call that takes it, for the statement
 * of a status change (`updateRequestStatus`), which takes it before it locks the request's row.
 *
 * A bigserial is allocated when a row is inserted, not when it commits, so without this two concurrent
 * transactions can commit ids 6 then 5, and a reader that already moved past 6 would never see 5. Holding a
 * transaction-scoped advisory lock from before the id is drawn until after the commit makes id order commit
 * order. Taken first in a status change (before any request row lock), so it cannot deadlock with request row locks.
 */
export const outboxLock = sql`pg_advisory_xact_lock(hashtext('request_events:' || current_schema()))`;

/**
 * Insert the event and notify, in one statement, in the transaction that changes the status and holds the
 * outbox lock (`updateRequestStatus`, the only writer, takes it first), so the event commits with the change. The
 * notification is delivered at commit, to every session that LISTENs on the channel (PGlite's worker forwards it):
 * followers wake at once instead of at their next poll. The payload is the schema, as several gateways may share a
 * database. With `apiKeyId`, the same statement enqueues the event's webhook delivery (and notifies the dispatcher).
 */
export async function insertRequestEvent(
  trx: Kysely<Tables>,
  params: InsertRequestEventParameters,
): Promise<RequestEvent> {
  const apiKeyId = params.apiKeyId ?? null;
  const delivery =
    apiKeyId === null
      ? sql``
      : sql`, delivery as (${webhookDeliveriesOf(
          sql`select ${apiKeyId}::text as api_key_id, request_id, id as event_id from event`,
          params.now,
        )})`;
  const { rows } = await sql<Selectable<RequestEventsTable>>`
    with event as (
      insert into request_events (request_id, status, payload, created_at)
      values (${params.requestId}, ${params.status}, ${toJson(params.payload)}::jsonb, ${params.now}::bigint)
      returning *
    )${delivery}
    select event.*, pg_notify(${REQUEST_EVENTS_CHANNEL}, current_schema()) as notified${
      apiKeyId === null
        ? sql``
        : sql`, (select pg_notify(${webhookNotifyChannel}, current_schema()) from delivery limit 1) as delivery_notified`
    } from event`.execute(trx);
  return toRequestEvent(rows[0]!);
}

/** The PostgreSQL notification channel `insertRequestEvent` notifies (payload: the schema of the outbox). */
export const REQUEST_EVENTS_CHANNEL = 'request_events';

/** The id of the newest committed event, or 0 when there is none: where a follower starts tailing. */
export async function lastEventId(db: Kysely<Tables>): Promise<number> {
  const row = await db
    .selectFrom('request_events')
    .select((eb) => eb.fn.max('id').as('id'))
    .executeTakeFirst();
  return row?.id == null ? 0 : toNumber(row.id);
}

/**
 * Events with an id greater than `afterId`, oldest first, at most `limit` of them. This is how the webhook
 * deliverer and the event fan-out read the outbox: remember the last id handled, ask again from there.
 */
export async function listEventsAfter(db: Kysely<Tables>, afterId: number, limit: number): Promise<RequestEvent[]> {
  const rows = await db
    .selectFrom('request_events')
    .selectAll()
    .where('id', '>', afterId)
    .orderBy('id', 'asc')
    .limit(limit)
    .execute();
  return rows.map(toRequestEvent);
}

/** The whole status history of one request, oldest first. */
export async function listEventsForRequest(db: Kysely<Tables>, requestId: string): Promise<RequestEvent[]> {
  const rows = await db
    .selectFrom('request_events')
    .selectAll()
    .where('request_id', '=', normalizeHex(requestId))
    .orderBy('id', 'asc')
    .execute();
  return rows.map(toRequestEvent);
}

function toRequestEvent(row: Selectable<RequestEventsTable>): RequestEvent {
  return {
    id: toNumber(row.id),
    requestId: row.request_id,
    status: row.status as RequestStatus,
    // Written only by insertRequestEvent, from a RequestStatusSnapshot (or its earlier form).
    payload: readStatusSnapshot(row.payload),
    createdAt: toNumber(row.created_at),
  };
}

/** The events of several requests (a listing's page), oldest first, by request id (lower-case hex). */
export async function listEventsForRequests(
  db: Kysely<Tables>,
  requestIds: readonly string[],
): Promise<Map<string, RequestEvent[]>> {
  if (requestIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('request_events')
    .selectAll()
    .where('request_id', 'in', requestIds.map(normalizeHex))
    .orderBy('id', 'asc')
    .execute();
  return groupByRequest(rows.map(toRequestEvent));
}
