import { sql, type Kysely } from 'kysely';

/**
 * The values the history's remaining `/requests/v3` filters and sorts compare, stored per request so that each is a
 * plain indexed comparison rather than a read of the request's JSON or of other tables:
 * - `origin_block`: the origin-chain block of the deposit the request was claimed with (`startBlock`/`endBlock`);
 *   written by the claim's statement, null until a deposit is claimed;
 * - `fill_time_ms`: from the deposit's sighting to the fill's success (`fillTimeMin`/`fillTimeMax`); written by the
 *   statement that records the success, null for any request without a successful fill of a claimed deposit;
 * - `app_fees_usd_micros`: the app fees' USD value at quote time (`appFeesAmountUsdMin`/`Max`, feature
 *   `app_fees`); written with the quote, null when the quote has no app fee.
 *
 * The indexes on them are partial (their non-null rows only), so a quote's insert enters none of them and a status
 * change enters one at most. `sortBy=amountUsd` (and the `amountUsdMin`/`amountUsdMax` bounds) walk
 * `requests_volume_usd_idx`; `refundFailReason` reads its own partial index, as failed refunds are few.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table requests
    add column origin_block bigint,
    add column fill_time_ms bigint,
    add column app_fees_usd_micros numeric(78, 0)`.execute(db);
  await sql`create index requests_origin_block_idx on requests (origin_block) where origin_block is not null`.execute(
    db,
  );
  await sql`create index requests_fill_time_idx on requests (fill_time_ms) where fill_time_ms is not null`.execute(db);
  await sql`create index requests_app_fees_usd_idx on requests (app_fees_usd_micros)
    where app_fees_usd_micros is not null`.execute(db);
  await sql`create index requests_refund_fail_reason_idx on requests (refund_fail_reason, created_at)
    where refund_fail_reason is not null`.execute(db);
  await sql`create index requests_volume_usd_idx on requests (volume_usd_micros, id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const index of [
    'requests_volume_usd_idx',
    'requests_refund_fail_reason_idx',
    'requests_app_fees_usd_idx',
    'requests_fill_time_idx',
    'requests_origin_block_idx',
  ])
    await db.schema.dropIndex(index).execute();
  await sql`alter table requests drop column origin_block, drop column fill_time_ms, drop column app_fees_usd_micros`.execute(
    db,
  );
}
