import { sql, type Kysely } from 'kysely';

/**
 * Settlement selects a request's deposit by the deposit's own identity, and an item whose release would revert is
 * set aside with its reason instead of holding up its chain.
 *
 * `requests.deposit_id`: the `deposits` row that paid the request, written by the statement that consumes the
 * deposit and moves the request (or attaches it to a fast fill). Two deposits of one transaction (a Multicall3 that
 * deposits twice, a strict deposit address's over-payment) share the transaction hash the request's `in_tx_hashes`
 * holds; only this column tells which of them paid and which was refunded. Plain `bigint` without a foreign key: the
 * claim's statement writes it from the row it has just locked, and a check per request update would cost the hot
 * path for nothing. The backfill covers the requests settlement still reads (`success`, a consumed deposit not in a
 * batch yet); of two candidates sharing a hash it picks the older, and a wrong pick is caught by the settler's
 * screening (`rejected`, `ALREADY_RELEASED`) rather than settled.
 *
 * `settlement_items`: `rejected` is an item whose release the depository refuses (screened before the batch is sent,
 * or after a batch reverted), with `reason` (a class: `ALREADY_RELEASED`, `UNKNOWN_DEPOSIT`, `REMOVED_BY_REORG`,
 * `DEPOSIT_MISMATCH`, `REVERTED`) and `detail` (the decoded revert). A rejected item is final: never retried.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table requests add column deposit_id bigint`.execute(db);
  await sql`update requests r set deposit_id = (
      select min(d.id) from deposits d
      where d.request_id = r.id and d.status = 'consumed' and d.deposit_index is not null
        and r.in_tx_hashes @> jsonb_build_array(d.tx_hash)
        and not exists (select 1 from settlement_items s where s.deposit_id = d.id)
    )
    where r.status = 'success' and r.in_tx_hashes <> '[]'::jsonb`.execute(db);
  await sql`alter table settlement_items
    add column reason text,
    add column detail text,
    drop constraint settlement_items_status_check,
    add constraint settlement_items_status_check check (status in ('pending', 'settled', 'failed', 'rejected')),
    add constraint settlement_items_rejected_reason check ((status = 'rejected') = (reason is not null))`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`update settlement_items set status = 'failed' where status = 'rejected'`.execute(db);
  await sql`alter table settlement_items
    drop constraint settlement_items_rejected_reason,
    drop constraint settlement_items_status_check,
    add constraint settlement_items_status_check check (status in ('pending', 'settled', 'failed')),
    drop column detail,
    drop column reason`.execute(db);
  await sql`alter table requests drop column deposit_id`.execute(db);
}
