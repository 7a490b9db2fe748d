/**
 * The status outbox: what commits with each status change of a request, in its transaction (`updateRequestStatus`
 * takes the outbox lock first). The `request_events` row carries the status record that webhooks, `/ws` and
 * subscriptions read; a key's webhook delivery is written in the event's statement. The ledger movements a change
 * books (the core's, `StatusChange`) are written in the change's own statement (`updateRequestStatus`).
 */
import { sql, type Kysely } from 'kysely';
import { depositAddressesOfRequests } from './depositAddresses.repository.js';
import { insertRequestEvent } from './requestEvents.repository.js';
import type { RequestRecord } from '../records/request.js';
import type { RequestStatusSnapshot, StatusDepositAddress } from '../records/requestStatus.js';
import type { Tables } from './tables.js';
import { webhookDeliveriesOf, webhookNotifyChannel } from './webhookDeliveries.repository.js';

/**
 * Write the outbox of a status change that `record` is the result of: its event with its webhook delivery when an
 * API key quoted it (one statement). `db` is the transaction of the change, holding the outbox lock (`outboxLock`),
 * so all of it commits with the change or not at all.
 */
export async function writeStatusOutbox(db: Kysely<Tables>, record: RequestRecord, now: number): Promise<void> {
  await insertRequestEvent(db, {
    requestId: record.id,
    status: record.status,
    payload: await statusSnapshotOf(db, record),
    now,
    apiKeyId: record.apiKeyId,
  });
}

/**
 * When the status change's own statement writes its event (`updateRequestStatus`): its payload needs nothing but
 * the moved row, so a row with no deposit address to read; the others are written by `writeStatusOutbox` in the
 * same transaction. SQL over the columns of the moved `requests` row.
 */
export const outboxInStatement = sql<boolean>`deposit_address is null`;

/**
 * The CTE `moved_delivery` of a status change's statement: the webhook deliveries of the events it wrote (the CTE
 * `moved_event`, the inserted rows) for the moved rows (the CTE `moved`) quoted with an API key. The
 * statement notifies the dispatcher with `deliveryNotified`.
 */
export function movedDeliveries(now: number) {
  return sql`moved_delivery as (${webhookDeliveriesOf(
    sql`select moved.api_key_id, moved_event.request_id, moved_event.id as event_id
      from moved_event join moved on moved.id = moved_event.request_id where moved.api_key_id is not null`,
    now,
  )})`;
}

/** A select-list column that notifies the webhook dispatcher (at commit) when `moved_delivery` wrote any delivery. */
export const deliveryNotified = sql`(select pg_notify(${webhookNotifyChannel}, current_schema()) from moved_delivery limit 1) as delivery_notified`;

/**
 * `toStatusSnapshot(record, null)` as SQL over the columns of the moved `requests` row, for the event that the
 * status change's own statement writes (`outboxInStatement`). jsonb keeps no key order, so the stored payload is
 * the same value `writeStatusOutbox` stores (`test/store/requests.test.ts` compares the two).
 */
export const statusSnapshotInStatement = sql`jsonb_build_object(
  'requestId', id, 'status', status, 'inTxHashes', in_tx_hashes, 'txHashes', tx_hashes, 'updatedAt', updated_at,
  'originChainId', origin_chain_id, 'destinationChainId', destination_chain_id, 'details', details,
  'failReason', fail_reason, 'refundFailReason', refund_fail_reason, 'referrer', referrer,
  'depositAddress', 'null'::jsonb)`;

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
