import { sql, type Kysely } from 'kysely';
import type { Tables } from './tables.js';

/** Tables smaller than this many pages (64 KB) are left alone: any plan reads them in a blink. */
export const ANALYZE_MIN_PAGES = 8;

/**
 * The statistics target of these analyses, kept small because on PGlite an `ANALYZE` holds every other statement for
 * its whole run: a sample of 300 × 10 = 3,000 rows where the default (100) reads 30,000. With PostgreSQL's defaults,
 * on a table of 24,843 quoted requests (12,422 pages: each row carries its quote's JSON) it took 1.9–2.4 s, and
 * `npm run bench` at 64 clients had quote p99s of 1.2–1.4 s in the runs it fell in; with this target 0.17–0.26 s,
 * and 0.11 s without the JSON documents no statement filters on (migration `2026_11_28_0200_requests_unsampled_columns`
 * sets their statistics target to 0). The plans these statistics steer (an index or a walk, the search's `BitmapOr`)
 * need row counts and distinct values, which a small sample gives. One estimate needs more: a jsonb `@>` is estimated
 * from the histogram only when it holds 100 values, so the hash filters are written not to depend on it
 * (`hashesContain` in `requestFilters.ts`).
 */
export const ANALYZE_STATISTICS_TARGET = 10;

export interface TableMaintenanceOptions {
  /**
   * Awaited before each `ANALYZE` or `VACUUM`, which on PGlite holds every other statement for its run: the server
   * waits there for a quiet moment. `first`: the table's first analysis (without statistics the planner guesses, and
   * the table is as small as it will ever be). Resolves false to leave the rest for the next pass (the gateway is
   * stopping).
   */
  before?: (statement: { table: string; first: boolean }) => Promise<boolean>;
}

/**
 * The fraction of a table's rows that must have changed (inserted, updated or deleted) since its last analysis for
 * the next one. PostgreSQL's autovacuum analyzes after a tenth (`autovacuum_analyze_scale_factor`), beside the
 * queries; on PGlite an analysis holds every statement. The planner scales a table's row count by its current size
 * itself, so the statistics need renewing only as the values in it shift: after half as many changes as the table
 * had rows. A table the retention keeps at one size is analyzed again as its rows are replaced; a growing one at
 * each half again (the rule before, a fifth more pages, analyzed the requests table of a 10-minute soak every 10–20
 * s, 0.1–0.2 s each).
 */
export const ANALYZE_CHANGED_FRACTION = 0.5;

/**
 * PGlite runs no autovacuum, so nothing gathers its tables' statistics and the planner guesses. On a PGlite table
 * of 30,000 requests never analyzed, the explorer's `term` search walked the `created_at` index filtering every row
 * (188 ms p50) where, with statistics, it ORs the searched columns' indexes (5 ms p50 at a million rows;
 * `bench:growth`). This `ANALYZE`s every table of the current schema of `ANALYZE_MIN_PAGES` or more
 * that was never analyzed, or in which more rows changed since its last analysis than 50
 * (`autovacuum_analyze_threshold`) + `ANALYZE_CHANGED_FRACTION` of its rows as last counted (by an `ANALYZE` or a
 * `VACUUM`). PostgreSQL's statistics count the changes (`pg_stat_all_tables.n_mod_since_analyze`); PGlite starts
 * them at zero at each start, so the changes before a restart are not counted (the statistics themselves stay).
 * An `ANALYZE` reads a sample of at most 3,000 rows (`ANALYZE_STATISTICS_TARGET`; the JSON documents of `requests`
 * not at all), so its cost stops growing with the table. Returns the tables analyzed, those without statistics
 * first. PostgreSQL's autovacuum does this itself.
 */
export async function analyzeChangedTables(
  db: Kysely<Tables>,
  options: TableMaintenanceOptions = {},
): Promise<string[]> {
  // The changes of this session reach the statistics at the end of a transaction, at most once a second; now.
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ name: string; first: boolean }>`
    select name, first from (
      select c.relname as name, c.reltuples, c.oid, s.n_mod_since_analyze,
        not exists (select from pg_statistic st where st.starelid = c.oid) as first
      from pg_class c
        join pg_namespace n on n.oid = c.relnamespace
        join pg_stat_all_tables s on s.relid = c.oid
      where n.nspname = current_schema() and c.relkind = 'r'
    ) as tables
    where pg_relation_size(oid) >= ${ANALYZE_MIN_PAGES} * current_setting('block_size')::bigint
      and (
        first
        or n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::float8
          + ${ANALYZE_CHANGED_FRACTION}::float8 * greatest(reltuples, 0)
      )
    order by first desc, name`.execute(db);
  const analyzed: string[] = [];
  for (const { name, first } of rows) {
    if (!(await (options.before?.({ table: name, first }) ?? true))) break;
    // Every column: an ANALYZE of some columns would not reset the count of changes that decides the next one.
    await db.transaction().execute(async (trx) => {
      // For this transaction only; `set_config` is a SELECT, which keeps PGlite's prepared statements (a SET would
      // not).
      await sql`select set_config('default_statistics_target', ${String(ANALYZE_STATISTICS_TARGET)}, true)`.execute(
        trx,
      );
      await sql`analyze ${sql.table(name)}`.execute(trx);
    });
    analyzed.push(name);
  }
  return analyzed;
}
