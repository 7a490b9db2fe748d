/**
 * The status outbox: what commits with each status change of a request, in its transaction (`updateRequestStatus`
 * takes the outbox lock first). The `request_events` row carries the status record that webhooks, `/ws` and
 * subscriptions read; a key's webhook delivery is written in the event's statement. The event is built by the
 * core from the row the change expects to leave (`ExpectedEvent`) and written in the change's own statement when
 * the moved row is that one; otherwise it is built here from the moved row (`statusEventOf`), in the same
 * transaction. The ledger movements a change books are written in the change's own statement too.
 */
import { sql, type Kysely } from 'kysely';
import { depositAddressesOfRequests } from './depositAddresses.repository.js';
import { normalizeHex, toJson } from './mappers.js';
import { insertRequestEvent } from './requestEvents.repository.js';
import type { RequestRecord } from '../records/request.js';
import {
  addressOnlyDepositAddress,
  toStatusDepositAddress,
  type RequestStatusSnapshot,
  type StatusDepositAddress,
} from '../records/requestStatus.js';
import { statusEventOf, statusRecordOf, type ExpectedEvent } from '../records/statusEvent.js';
import type { Tables } from './tables.js';
import { webhookDeliveriesOf, webhookNotifyChannel } from './webhookDeliveries.repository.js';

/**
 * Write the event of a status change that `record` is the result of, built from it, with its webhook delivery when
 * an API key quoted it (one statement). `db` is the transaction of the change, holding the outbox lock
 * (`outboxLock`), so all of it commits with the change or not at all.
 */
export async function writeStatusOutbox(db: Kysely<Tables>, record: RequestRecord, now: number): Promise<void> {
  const event = statusEventOf(record, await depositAddressOf(db, record));
  await insertRequestEvent(db, {
    requestId: event.requestId,
    status: event.status,
    payload: event.payload,
    now,
    apiKeyId: event.deliverTo,
  });
}

/** The CTE `expected` of a status change's statement: the events its writers built, by request and row version. */
export function expectedEvents(expected: readonly ExpectedEvent[]) {
  const rows = expected.map(({ version, event }) => ({
    request_id: normalizeHex(event.requestId),
    version,
    payload: event.payload,
    deliver_to: event.deliverTo,
  }));
  return sql`expected as (
      select * from jsonb_to_recordset(${toJson(rows)}::jsonb)
        as expected (request_id text, version bigint, payload jsonb, deliver_to text)
    )`;
}

/**
 * The CTEs `moved_event` and `moved_delivery` of a status change's statement: the expected event (the CTE
 * `expected`) of each moved row (the CTE `moved`) that is the very row its writer expected (its version, and the
 * status it moved to), with its
 * webhook delivery when it names a key. A moved row without one is answered without an event: its writer then
 * writes it with `writeStatusOutbox`. The statement notifies the dispatcher with `deliveryNotified`.
 */
export function movedEvents(now: number) {
  return sql`moved_event as (
      insert into request_events (request_id, status, payload, created_at)
      select moved.id, moved.status, expected.payload, ${now}::bigint
      from moved join expected on expected.request_id = moved.id and expected.version = moved.version
        and (expected.payload ->> 'status') = moved.status
      returning *
    ),
    moved_delivery as (${webhookDeliveriesOf(
      sql`select expected.deliver_to as api_key_id, moved_event.request_id, moved_event.id as event_id
        from moved_event join expected on expected.request_id = moved_event.request_id
        where expected.deliver_to is not null`,
      now,
    )})`;
}

/** A select-list column that notifies the webhook dispatcher (at commit) when `moved_delivery` wrote any delivery. */
export const deliveryNotified = sql`(select pg_notify(${webhookNotifyChannel}, current_schema()) from moved_delivery limit 1) as delivery_notified`;

/** The status record of a request, as stored in its events, with its deposit address read from `db`. */
export async function statusSnapshotOf(db: Kysely<Tables>, record: RequestRecord): Promise<RequestStatusSnapshot> {
  return statusRecordOf(record, await depositAddressOf(db, record));
}

/** A request's deposit address as its status record carries it; null when it has none. */
async function depositAddressOf(db: Kysely<Tables>, record: RequestRecord): Promise<StatusDepositAddress | null> {
  if (record.depositAddress === null) return null;
  const stored = (await depositAddressesOfRequests(db, [record.id])).get(record.id);
  return stored === undefined ? addressOnlyDepositAddress(record.depositAddress) : toStatusDepositAddress(stored);
}
