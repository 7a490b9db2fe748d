import { sql, type Kysely, type Selectable } from 'kysely';
import { groupByRequest, normalizeHex, toJson, toNumber } from './mappers.js';
import { readStatusSnapshot } from './requestStatus.js';
import type { RequestStatus, RequestStatusSnapshot } from '../records/requestStatus.js';
import type { RequestEventsTable, Tables } from './tables.js';
import { webhookDeliveriesOf, webhookNotifyChannel } from './webhookDeliveries.repository.js';
import type { RequestEvent } from '../records/requestEvent.js';

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
 * notification is delivered at commit, to every session that LISTENs on the channel (PGlite's worker forwards it),
 * and names the event (on PGlite it carries it: `notifyEvents`): followers act at once instead of at their next
 * poll. With `apiKeyId`, the same statement enqueues the event's webhook delivery (and notifies the dispatcher).
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
    select event.*, ${notifyEvents('event')} as notified${
      apiKeyId === null
        ? sql``
        : sql`, (select pg_notify(${webhookNotifyChannel}, current_schema()) from delivery limit 1) as delivery_notified`
    } from event`.execute(trx);
  return toRequestEvent(rows[0]!);
}

/** The notification channel of committed events (`notifyEvents`; payload: `EventNotification` as JSON). */
export const REQUEST_EVENTS_CHANNEL = 'request_events';

/**
 * PostgreSQL refuses a notification payload of 8,000 bytes or more (PGlite too): an event whose notification would
 * be that long is notified by id only, and its followers read it from the outbox.
 */
const MAX_NOTIFICATION_BYTES = 7_999;

/**
 * The setting that makes `notifyEvents` put the events themselves in the notifications: set for PGlite only (its
 * worker's start parameters), whose one session is the gateway's own, so nothing else can notify its channel. On
 * PostgreSQL any role that can connect may `NOTIFY` any channel, and read every notification: an event in a
 * notification would be readable by the roles of other schemas, and an event forged by one would be as good as a
 * committed one. There the notification names the schema and the id, and a follower reads the outbox.
 */
export const EVENT_NOTIFICATIONS_SETTING = 'intent_gateway.event_notifications';

/**
 * A select-list expression that notifies `REQUEST_EVENTS_CHANNEL` of every row of the CTE `events` (inserted
 * `request_events` rows, all columns), in id order; the notifications are delivered at commit, in commit order.
 * Each names the schema and the event's id; where `EVENT_NOTIFICATIONS_SETTING` is `full` (PGlite) it carries the
 * event itself (`readEventNotification`), so the follower hands it to its subscribers without reading the outbox
 * back, which on a busy gateway waited behind the statements that the committing code runs next. Its value (a
 * count) means nothing.
 */
export function notifyEvents(events: string) {
  const column = (name: string) => sql.ref(`notified_event.${name}`);
  const whole = sql`json_build_object('schema', current_schema(), 'event', json_build_object(
      'id', ${column('id')}, 'request_id', ${column('request_id')}, 'status', ${column('status')},
      'payload', ${column('payload')}, 'created_at', ${column('created_at')}))::text`;
  const idOnly = sql`json_build_object('schema', current_schema(), 'id', ${column('id')})::text`;
  return sql`(select count(pg_notify(${REQUEST_EVENTS_CHANNEL},
      case when octet_length(notification.whole) <= ${sql.lit(MAX_NOTIFICATION_BYTES)} then notification.whole
      else notification.id_only end))
    from (
      select case when current_setting(${sql.lit(EVENT_NOTIFICATIONS_SETTING)}, true) = 'full' then ${whole} end as whole,
        ${idOnly} as id_only
      -- offset 0 keeps each subquery, and so the id order, from being merged into the aggregate's scan
      from (select * from ${sql.table(events)} order by id offset 0) as notified_event offset 0
    ) as notification)`;
}

/** The schema the connection's statements use (`current_schema()`): the one its notifications name. */
export async function currentSchema(db: Kysely<Tables>): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return rows[0]!.schema;
}

/** What a notification on `REQUEST_EVENTS_CHANNEL` says (`notifyEvents`). */
export interface EventNotification {
  /** The schema of the outbox that committed it; undefined when the payload cannot be read (read the outbox). */
  schema: string | undefined;
  /** The event's id; null from a gateway of an earlier version, or when the payload cannot be read. */
  id: number | null;
  /**
   * The committed event: only on PGlite (`EVENT_NOTIFICATIONS_SETTING`), and not when it was too long for a
   * notification. A follower hands it on only where its notifications cannot be forged (PGlite).
   */
  event: RequestEvent | null;
}

/**
 * Reads a notification's payload. A gateway of an earlier version notified the schema's name alone: that is a
 * notification without its event, as is one that cannot be read (its schema unknown: the follower reads its outbox).
 */
export function readEventNotification(payload: string): EventNotification {
  if (!payload.startsWith('{')) return { schema: payload, id: null, event: null };
  try {
    const parsed = JSON.parse(payload) as { schema?: unknown; id?: unknown; event?: Selectable<RequestEventsTable> };
    const schema = typeof parsed.schema === 'string' ? parsed.schema : undefined;
    const event = parsed.event === undefined ? null : toRequestEvent(parsed.event);
    const id = event?.id ?? (typeof parsed.id === 'number' ? parsed.id : null);
    return { schema, id, event };
  } catch {
    return { schema: undefined, id: null, event: null };
  }
}

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
