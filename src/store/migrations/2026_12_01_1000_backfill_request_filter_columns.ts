import { sql, type Kysely } from 'kysely';

/**
 * Fills the per-request filter values (`2026_12_01_0500_request_filter_columns`) of the requests stored before
 * they existed, by the rules the live statements follow, so that `startBlock`/`endBlock`, the fill-time bounds,
 * the app-fee bounds and `features=app_fees` find old requests as they find new ones:
 * - `origin_block`: the block of the deposit the request was claimed with (`requests.deposit_id`), as the claim
 *   writes it;
 * - `fill_time_ms`: for a `success` request with a claimed deposit, from the deposit's sighting
 *   (`deposits.created_at`) to the first `success` event (the event is written by the statement that moves the
 *   request to `success`, with the time that statement writes as the fill time), never negative. A request with no
 *   `success` event (one moved by hand, or with its events purged) keeps null, as does a fill without a claimed
 *   deposit (a fast fill), which the live rule also leaves null;
 * - `app_fees_usd_micros`: the quote's own `usdMicros.app` from `fees_quoted` when its `appFees` list is not empty
 *   (the quote's rule: `pricing.usd.app` when `pricing.fees.appFees` is not empty, stored by `storedFeesOf`), null
 *   otherwise, or when the stored breakdown predates either field.
 *
 * Each update touches only the rows it changes (null column, source present), so on a table written by a current
 * gateway it reads the partial conditions and writes nothing. The migrations run in one transaction at start-up,
 * before the gateway serves, so batching would not release the row locks sooner: each column is one statement
 * (measured in docs/api-notes.md).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`update requests set origin_block = d.block_number
    from deposits as d
    where requests.origin_block is null and requests.deposit_id is not null and d.id = requests.deposit_id`.execute(db);
  // The first success of each request in one grouped scan of the events: joined rather than looked up per row,
  // as `request_events.request_id` (default collation) cannot use its index against `requests.id` (collation "C").
  await sql`update requests set fill_time_ms = greatest(0, filled.at - d.created_at)
    from deposits as d,
      (select request_id, min(created_at) as at from request_events where status = 'success' group by request_id)
        as filled
    where requests.fill_time_ms is null and requests.status = 'success' and requests.deposit_id is not null
      and d.id = requests.deposit_id and filled.request_id = requests.id`.execute(db);
  await sql`update requests set app_fees_usd_micros = (fees_quoted #>> '{usdMicros,app}')::numeric
    where app_fees_usd_micros is null
      and jsonb_typeof(fees_quoted -> 'appFees') = 'array' and jsonb_array_length(fees_quoted -> 'appFees') > 0
      and coalesce(fees_quoted #>> '{usdMicros,app}', '') ~ '^[0-9]{1,78}$'`.execute(db);
}

/** The values stay: they are what the live statements would have written, and the columns' own migration drops them. */
export async function down(): Promise<void> {}
