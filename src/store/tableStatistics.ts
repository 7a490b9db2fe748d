import { sql, type Kysely } from 'kysely';
import type { Tables } from './tables.js';

/** Tables smaller than this many pages (64 KB) are left alone: any plan reads them in a blink. */
export const ANALYZE_MIN_PAGES = 8;

/**
 * The statistics target of these analyses, kept small because on PGlite an `ANALYZE` holds every other statement for
 * its whole run: a sample of 300 × 10 = 3,000 rows where the default (100) reads 30,000. With PostgreSQL's defaults,
 * on a table of 24,843 quoted requests (12,422 pages: each row carries its quote's JSON) it took 1.9–2.4 s, and
 * `npm run bench` at 64 clients had quote p99s of 1.2–1.4 s in the runs it fell in; with this target 0.17–0.26 s,
 * and 0.11 s without `UNSAMPLED_COLUMNS`. The plans these statistics steer (an index or a walk, the search's
 * `BitmapOr`) need row counts and distinct values, which a small sample gives; no query here needs a fine histogram.
 */
export const ANALYZE_STATISTICS_TARGET = 10;

/**
 * Columns (`table.column`) whose statistics are not gathered: JSON documents that no statement filters or orders
 * on, whose statistics (each sampled document read and compared) were most of an analysis's cost. The JSON arrays
 * the explorer's search filters on (`in_tx_hashes`, `tx_hashes`: their containment estimates pick its plan) are
 * sampled.
 */
export const UNSAMPLED_COLUMNS = ['requests.quote', 'requests.fees_quoted', 'requests.fees_actual', 'requests.details'];

/**
 * PGlite runs no autovacuum, so nothing gathers its tables' statistics and the planner guesses. On a PGlite table
 * of 30,000 requests never analyzed, the explorer's `term` search walked the `created_at` index filtering every row
 * (188 ms p50) where, with statistics, it ORs the searched columns' indexes (5 ms p50 at a million rows;
 * `bench:growth`, session 15). This `ANALYZE`s every table of the current schema that has grown by a fifth since it
 * was last analyzed (or was never analyzed), from `ANALYZE_MIN_PAGES` up: its pages now (`pg_relation_size`, a file
 * size) against those recorded in `pg_class` by the last `ANALYZE`, `VACUUM` or index build. An `ANALYZE` reads a
 * sample of at most 3,000 rows (`ANALYZE_STATISTICS_TARGET`) and skips `UNSAMPLED_COLUMNS`, so its cost stops
 * growing with the table. Returns the tables analyzed. PostgreSQL's autovacuum does this itself.
 */
export async function analyzeGrownTables(db: Kysely<Tables>): Promise<string[]> {
  // The columns are listed only for the tables that grew: the check runs every 10 s, mostly to find none.
  const { rows } = await sql<{ name: string; columns: string[] }>`
    select name, array(
        select a.attname::text from pg_attribute a
        where a.attrelid = tables.oid and a.attnum > 0 and not a.attisdropped
          and tables.name || '.' || a.attname <> all(${UNSAMPLED_COLUMNS}::text[])
        order by a.attnum
      ) as columns
    from (
      select c.oid, c.relname as name, c.relpages::bigint as recorded, c.reltuples,
        pg_relation_size(c.oid) / current_setting('block_size')::bigint as pages
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind = 'r'
    ) as tables
    where pages >= ${ANALYZE_MIN_PAGES} and (reltuples < 0 or pages * 5 > recorded * 6)
    order by name`.execute(db);
  for (const { name, columns } of rows) {
    const only = columns.length === 0 ? sql`` : sql` (${sql.join(columns.map((column) => sql.id(column)))})`;
    await db.transaction().execute(async (trx) => {
      // For this transaction only; `set_config` is a SELECT, which keeps PGlite's prepared statements (a SET would not).
      await sql`select set_config('default_statistics_target', ${String(ANALYZE_STATISTICS_TARGET)}, true)`.execute(
        trx,
      );
      await sql`analyze ${sql.table(name)}${only}`.execute(trx);
    });
  }
  return rows.map((row) => row.name);
}
