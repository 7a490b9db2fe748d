import type { Kysely } from 'kysely';
import { toNumber } from './mappers.js';
import type { Tables } from './tables.js';

/** `rate_limit_counters` (migration 0308); declared here because only this module touches it. */
interface RateLimitCountersTable {
  bucket: string;
  window_start: string | number | bigint;
  count: number;
}

const withCounters = (db: Kysely<Tables>) => db.withTables<{ rate_limit_counters: RateLimitCountersTable }>();

/**
 * Add `by` requests to a bucket's window and return the new total: one statement (an upsert), atomic under
 * concurrency, so instances sharing the database count together.
 */
export async function incrementRateLimitCounter(
  db: Kysely<Tables>,
  params: { bucket: string; windowStart: number; by: number },
): Promise<number> {
  const row = await withCounters(db)
    .insertInto('rate_limit_counters')
    .values({ bucket: params.bucket, window_start: params.windowStart, count: params.by })
    .onConflict((oc) =>
      oc
        .columns(['bucket', 'window_start'])
        .doUpdateSet((eb) => ({ count: eb('rate_limit_counters.count', '+', params.by) })),
    )
    .returning('count')
    .executeTakeFirstOrThrow();
  return toNumber(row.count);
}

/** Delete the windows that started before `before` (Unix ms); returns how many rows went. */
export async function deleteRateLimitCountersBefore(db: Kysely<Tables>, before: number): Promise<number> {
  const result = await withCounters(db)
    .deleteFrom('rate_limit_counters')
    .where('window_start', '<', before)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
