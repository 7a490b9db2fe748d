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
 * The update touches only the rows it changes (null column, source present), so on a table written by a current
 * gateway it reads the table once and writes nothing. The migrations run in one transaction at start-up, before
 * the gateway serves, so batching would not release the row locks sooner: it is one statement (measured in
 * docs/api-notes.md).
 */
export async function up(db: Kysely<any>): Promise<void> {
  // The first success of each request in one grouped scan of the events: joined rather than looked up per row,
  // as `request_events.request_id` (default collation) cannot use its index against `requests.id` (collation "C").
  const firstSuccess = sql`(select request_id, min(created_at) as at from request_events
    where status = 'success' group by request_id)`;
  const hasAppFees = sql`(jsonb_typeof(r.fees_quoted -> 'appFees') = 'array'
    and jsonb_array_length(r.fees_quoted -> 'appFees') > 0
    and coalesce(r.fees_quoted #>> '{usdMicros,app}', '') ~ '^[0-9]{1,78}$')`;
  const fillTime = sql`case when r.status = 'success' then greatest(0, filled.at - d.created_at) end`;
  // One statement, so each old row is rewritten once (with all its index entries) rather than once per column.
  await sql`update requests set
      origin_block = coalesce(requests.origin_block, d.block_number),
      fill_time_ms = coalesce(requests.fill_time_ms, ${fillTime}),
      app_fees_usd_micros = coalesce(requests.app_fees_usd_micros,
        case when ${hasAppFees} then (r.fees_quoted #>> '{usdMicros,app}')::numeric end)
    from requests as r
      left join deposits as d on d.id = r.deposit_id
      left join ${firstSuccess} as filled on filled.request_id = r.id
    where r.id = requests.id
      and ((r.origin_block is null and d.block_number is not null)
        or (r.fill_time_ms is null and ${fillTime} is not null)
        or (r.app_fees_usd_micros is null and ${hasAppFees}))`.execute(db);
}

/** The values stay: they are what the live statements would have written, and the columns' own migration drops them. */
export async function down(): Promise<void> {}
