import { sql, type Kysely } from 'kysely';
import type { Tables } from './tables.js';

/** Tables smaller than this many pages (64 KB) are left alone: any plan reads them in a blink. */
export const ANALYZE_MIN_PAGES = 8;

/**
 * PGlite runs no autovacuum, so nothing gathers its tables' statistics and the planner guesses. On a PGlite table
 * of 30,000 requests never analyzed, the explorer's `term` search walked the `created_at` index filtering every row
 * (188 ms p50) where, with statistics, it ORs the searched columns' indexes (5 ms p50 at a million rows;
 * `bench:growth`, session 15). This `ANALYZE`s every table of the current
 * schema that has grown by a fifth since it was last analyzed (or was never analyzed), from
 * `ANALYZE_MIN_PAGES` up: its pages now (`pg_relation_size`, a file size) against those recorded in `pg_class` by
 * the last `ANALYZE`, `VACUUM` or index build. An `ANALYZE` reads a sample of at most 30,000 rows, so its cost stops
 * growing with the table. Returns the tables analyzed. PostgreSQL's autovacuum does this itself.
 */
export async function analyzeGrownTables(db: Kysely<Tables>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select name from (
      select c.relname as name, c.relpages::bigint as recorded, c.reltuples,
        pg_relation_size(c.oid) / current_setting('block_size')::bigint as pages
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind = 'r'
    ) as tables
    where pages >= ${ANALYZE_MIN_PAGES} and (reltuples < 0 or pages * 5 > recorded * 6)
    order by name`.execute(db);
  for (const { name } of rows) await sql`analyze ${sql.table(name)}`.execute(db);
  return rows.map((row) => row.name);
}
