import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import { toJson, toNumber, toNumberOrNull } from './mappers.js';
import type { ApiKeyWebhook } from '../records/apiKey.js';
import { readStatusSnapshot } from './requestStatus.js';
import type { RequestStatusSnapshot } from '../records/requestStatus.js';
import type { JsonValue } from '../records/json.js';
import type { Tables, WebhookDeliveriesTable } from './tables.js';
import { listenWithReconnect } from './listen.js';
import type { WebhookAttempt, WebhookDelivery, WebhookDeliveryStatus } from '../records/webhookDelivery.js';

/** Channel of the `pg_notify` sent when a delivery is enqueued (payload: the schema), delivered at commit. */
export const webhookNotifyChannel = 'gateway_webhook_deliveries';

const notify = (db: Kysely<Tables>) => sql`select pg_notify(${webhookNotifyChannel}, current_schema())`.execute(db);

/**
 * The insert of one delivery per event of `events` (a query of rows `api_key_id`, `request_id`, `event_id`) whose
 * key has an enabled webhook, a signing secret and is not revoked, returning the deliveries' ids. For a CTE of the
 * statement that writes the events (`insertRequestEvent`, `movedDeliveries`), in the transaction of their status
 * change; the statement also notifies `webhookNotifyChannel` when it returned any.
 */
export function webhookDeliveriesOf(events: RawBuilder<unknown>, now: number): RawBuilder<unknown> {
  return sql`insert into webhook_deliveries (api_key_id, request_id, event_id, next_attempt_at, created_at, updated_at)
      select api_keys.id, event.request_id, event.event_id, ${now}, ${now}, ${now}
      from (${events}) as event join api_keys on api_keys.id = event.api_key_id
      where api_keys.revoked_at is null and api_keys.webhook_secret is not null
        and (api_keys.webhook ->> 'enabled') = 'true'
      returning webhook_deliveries.id`;
}

/** A claimed attempt: the delivery, the event it posts and the key's current webhook. */
export interface ClaimedWebhookAttempt {
  delivery: WebhookDelivery;
  /** The status record of the event, and when it was recorded (Unix ms). */
  event: { payload: RequestStatusSnapshot; createdAt: number };
  /** The key's webhook now (URL and headers can change between attempts); null when removed. */
  webhook: ApiKeyWebhook | null;
  /** The sealed signing secret; null when the key keeps none. */
  sealedSecret: string | null;
  revoked: boolean;
}

export interface ClaimDueWebhookDeliveriesParameters {
  now: number;
  limit: number;
  /** How long the claimed attempt is this instance's: no other instance takes it before `now + leaseMs`. */
  leaseMs: number;
  /**
   * At most this many attempts in flight per API key (one slow receiver cannot take every
   * slot). Absent: no per-key limit.
   */
  perKeyLimit?: number;
  /** Attempts this instance already has in flight, by API key id (counted against `perKeyLimit`). */
  busy?: ReadonlyMap<string, number>;
}

/**
 * Claim up to `limit` due deliveries for one attempt each: count the attempt and push `next_attempt_at` to the
 * end of a lease, in one statement. `FOR UPDATE SKIP LOCKED` makes concurrent claimers (several gateways on
 * one PostgreSQL) take disjoint rows, and the lease keeps the row away from them until the attempt is recorded,
 * or until the lease ends if this instance dies mid-attempt (the attempt is then made again: at least once).
 */
export async function claimDueWebhookDeliveries(
  db: Kysely<Tables>,
  params: ClaimDueWebhookDeliveriesParameters,
): Promise<ClaimedWebhookAttempt[]> {
  const perKeyLimit = params.perKeyLimit ?? params.limit;
  const busy = JSON.stringify(Object.fromEntries(params.busy ?? []));
  const { rows } = await sql<
    Selectable<WebhookDeliveriesTable> & {
      webhook: JsonValue | null;
      webhook_secret: string | null;
      revoked_at: string | number | null;
      event_payload: JsonValue;
      event_created_at: string | number;
    }
  >`
    with candidates as (
      select id, api_key_id, next_attempt_at from webhook_deliveries
      where status = 'pending' and next_attempt_at <= ${params.now}
        and coalesce((${busy}::jsonb ->> api_key_id)::int, 0) < ${perKeyLimit}
      order by next_attempt_at, id
      limit ${params.limit}
      for update skip locked
    ), due as (
      select id from (
        select id, api_key_id, row_number() over (partition by api_key_id order by next_attempt_at, id) as rank
        from candidates
      ) ranked
      where ranked.rank <= ${perKeyLimit} - coalesce((${busy}::jsonb ->> ranked.api_key_id)::int, 0)
    ), claimed as (
      update webhook_deliveries d
      set attempts = d.attempts + 1, next_attempt_at = ${params.now + params.leaseMs}, updated_at = ${params.now}
      from due where d.id = due.id
      returning d.*
    )
    select claimed.*, k.webhook, k.webhook_secret, k.revoked_at,
      e.payload as event_payload, e.created_at as event_created_at
    from claimed
    join api_keys k on k.id = claimed.api_key_id
    join request_events e on e.id = claimed.event_id
    order by claimed.id`.execute(db);
  return rows.map((row) => ({
    delivery: toWebhookDelivery(row),
    event: {
      payload: readStatusSnapshot(row.event_payload),
      createdAt: toNumber(row.event_created_at),
    },
    webhook: row.webhook as unknown as ApiKeyWebhook | null,
    sealedSecret: row.webhook_secret,
    revoked: row.revoked_at !== null,
  }));
}

/**
 * When the earliest pending delivery due after `after` is due (a retry's time, or the end of a claim's lease), or
 * undefined when there is none.
 */
export async function nextWebhookAttemptAt(db: Kysely<Tables>, after: number): Promise<number | undefined> {
  const row = await db
    .selectFrom('webhook_deliveries')
    .select('next_attempt_at')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '>', after)
    .orderBy('next_attempt_at')
    .limit(1)
    .executeTakeFirst();
  return row === undefined ? undefined : toNumber(row.next_attempt_at);
}

export interface RecordWebhookAttemptParameters {
  id: number;
  /** The attempt number the claim returned (`delivery.attempts`): the record applies only to that attempt. */
  attempt: WebhookAttempt;
  /** The delivery's status after the attempt, and when the next one is due if it stays pending. */
  status: WebhookDeliveryStatus;
  nextAttemptAt: number;
  now: number;
}

/**
 * Append an attempt to the log and move the delivery on. Fenced by the attempt number: an instance whose lease
 * ran out (another instance has since claimed a newer attempt) changes nothing. Returns whether it applied.
 */
export async function recordWebhookAttempt(
  db: Kysely<Tables>,
  params: RecordWebhookAttemptParameters,
): Promise<boolean> {
  const finished = params.status === 'pending' ? null : params.now;
  const result = await db
    .updateTable('webhook_deliveries')
    .set({
      status: params.status,
      next_attempt_at: params.nextAttemptAt,
      log: sql<string>`log || ${toJson([params.attempt])}::jsonb`,
      updated_at: params.now,
      finished_at: finished,
    })
    .where('id', '=', params.id)
    .where('attempts', '=', params.attempt.attempt)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Delete up to `limit` finished deliveries (delivered, failed or cancelled) that finished before `before` (Unix
 * ms), oldest first, with their logs; returns how many went. A delivery that a kept replay names stays until
 * that replay goes too.
 */
export async function deleteFinishedWebhookDeliveries(
  db: Kysely<Tables>,
  params: { before: number; limit: number },
): Promise<number> {
  const result = await db
    .deleteFrom('webhook_deliveries')
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('webhook_deliveries as d')
        .select('d.id')
        .where('d.status', '<>', 'pending')
        .where('d.finished_at', '<', params.before)
        .where((eb) =>
          eb.not(
            eb.exists(eb.selectFrom('webhook_deliveries as r').select('r.id').whereRef('r.replay_of', '=', 'd.id')),
          ),
        )
        .orderBy('d.finished_at')
        .limit(params.limit),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

export interface ListWebhookDeliveriesParameters {
  apiKeyId: string;
  /** 1 to 100; default 50. */
  limit?: number;
  /** Only deliveries with a smaller id (the previous page's last id): newest first. */
  beforeId?: number;
}

/** A key's deliveries with their logs, newest first. */
export async function listWebhookDeliveries(
  db: Kysely<Tables>,
  params: ListWebhookDeliveriesParameters,
): Promise<WebhookDelivery[]> {
  const limit = Math.min(Math.max(Math.trunc(params.limit ?? 50), 1), 100);
  let query = db.selectFrom('webhook_deliveries').selectAll().where('api_key_id', '=', params.apiKeyId);
  if (params.beforeId !== undefined) query = query.where('id', '<', params.beforeId);
  const rows = await query.orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toWebhookDelivery);
}

export async function getWebhookDelivery(db: Kysely<Tables>, id: number): Promise<WebhookDelivery | undefined> {
  const row = await db.selectFrom('webhook_deliveries').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toWebhookDelivery(row);
}

/**
 * Enqueue a copy of a delivery (same key, same event, a fresh log), due now. The original and its log are
 * kept as they are. Returns the new delivery, or undefined when there is no delivery `id`.
 */
export async function insertWebhookReplay(
  db: Kysely<Tables>,
  id: number,
  now: number,
): Promise<WebhookDelivery | undefined> {
  const { rows } = await sql<Selectable<WebhookDeliveriesTable>>`
    insert into webhook_deliveries (api_key_id, request_id, event_id, replay_of, next_attempt_at, created_at, updated_at)
    select api_key_id, request_id, event_id, id, ${now}::bigint, ${now}::bigint, ${now}::bigint
    from webhook_deliveries where id = ${id}
    returning *`.execute(db);
  const row = rows[0];
  if (row === undefined) return undefined;
  await notify(db);
  return toWebhookDelivery(row);
}

function toWebhookDelivery(row: Selectable<WebhookDeliveriesTable>): WebhookDelivery {
  const status = row.status as WebhookDeliveryStatus;
  return {
    id: toNumber(row.id),
    apiKeyId: row.api_key_id,
    requestId: row.request_id,
    eventId: toNumber(row.event_id),
    replayOf: toNumberOrNull(row.replay_of),
    status,
    attempts: row.attempts,
    nextAttemptAt: status === 'pending' ? toNumber(row.next_attempt_at) : null,
    // Written only by recordWebhookAttempt, from WebhookAttempts.
    log: row.log as unknown as WebhookAttempt[],
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
    finishedAt: toNumberOrNull(row.finished_at),
  };
}

export interface ListenWebhookDeliveriesParameters {
  databaseUrl: string;
  /** The schema whose deliveries matter (`public` when unset); notifications of other schemas are ignored. */
  schema: string | undefined;
  onDelivery: () => void;
  onError: (error: Error) => void;
}

/**
 * PostgreSQL only: LISTEN for enqueued deliveries on a dedicated connection. Notifications arrive when the
 * enqueuing transaction commits, on every instance sharing the database, so a dispatcher can start the first
 * attempt right away. A lost connection is re-opened every second until it works (`listenWithReconnect`; the
 * dispatcher's poll covers the gap). Returns a function that closes the connection.
 */
export async function listenWebhookDeliveries(params: ListenWebhookDeliveriesParameters): Promise<() => Promise<void>> {
  const schema = params.schema ?? 'public';
  return listenWithReconnect({
    databaseUrl: params.databaseUrl,
    channel: webhookNotifyChannel,
    onNotification: (payload) => {
      if (payload === schema) params.onDelivery();
    },
    // Deliveries enqueued while no connection listened: the dispatcher looks at once.
    onListening: params.onDelivery,
    onError: (error) => params.onError(error ?? new Error('the LISTEN connection ended')),
  });
}
