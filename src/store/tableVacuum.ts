import { sql, type Kysely } from 'kysely';
import type { TableMaintenanceOptions } from './tableStatistics.js';
import type { Tables } from './tables.js';

/**
 * PGlite runs no autovacuum, so without this nothing reclaims the row versions that updates and deletes leave: a
 * request is updated about four times on its way to `success`, the retention job deletes the quotes never paid, the
 * rate limiter and the cursors rewrite their rows all the time. Only `VACUUM` records a page's free space for later
 * inserts, so a table whose rows are deleted grows for ever on PGlite even when the rows it holds do not: 20,000
 * requests with 10,000 deleted and 10,000 inserted again four times took 6,667 → 20,000 pages without it, and stayed
 * at 6,667 with it (each `VACUUM` 100–120 ms). And PostgreSQL compares transaction ids modulo 2³²: a row must be
 * frozen before two billion transactions have passed it, which only `VACUUM` does.
 *
 * So this vacuums, as autovacuum would with the database's own settings, every table of the current schema or of
 * the catalog (`ANALYZE` rewrites `pg_statistic`) that has more dead rows than `autovacuum_vacuum_threshold` +
 * `autovacuum_vacuum_scale_factor` × its rows (50 + a fifth, PostgreSQL's defaults), and every table of the database
 * whose oldest unfrozen transaction is older than `vacuum_freeze_table_age` (150 million), which makes that `VACUUM`
 * aggressive: it visits every page not yet frozen and freezes the rows older than `vacuum_freeze_min_age`, so the
 * table's `relfrozenxid`, and the database's `datfrozenxid`, move on. Dead rows are counted by PostgreSQL's
 * statistics (`pg_stat_all_tables`), which PGlite keeps while it runs: a restart starts them at zero, so the dead
 * rows of before it wait for the vacuum that new ones bring on.
 *
 * Each `VACUUM` holds every other statement on PGlite for its run, like an `ANALYZE`; its cost grows with the
 * table's indexes when dead rows are many (each index is scanned once). An insert-only table is not vacuumed until
 * it reaches the freeze age: that one then visits every page (16 s for the first `VACUUM` of a million requests).
 * PostgreSQL's autovacuum does all of this itself, in the background. Returns the tables vacuumed, `schema.table`.
 */
export async function vacuumTables(db: Kysely<Tables>, options: TableMaintenanceOptions = {}): Promise<string[]> {
  // This session's counts reach the statistics at the end of a transaction, at most once a second; now, so the check
  // below sees the deletes and updates of the moment before.
  await sql`select pg_stat_force_next_flush()`.execute(db);
  const { rows } = await sql<{ schema: string; name: string }>`
    select n.nspname as schema, c.relname as name
    from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      join pg_stat_all_tables s on s.relid = c.oid
    where c.relkind in ('r', 'm') and (
        (n.nspname = current_schema() or n.nspname = 'pg_catalog')
          and s.n_dead_tup > current_setting('autovacuum_vacuum_threshold')::float8
            + current_setting('autovacuum_vacuum_scale_factor')::float8 * greatest(c.reltuples, 0)
        or age(c.relfrozenxid) > current_setting('vacuum_freeze_table_age')::int
      )
    order by n.nspname <> 'pg_catalog', c.relname`.execute(db);
  const vacuumed: string[] = [];
  for (const { schema, name } of rows) {
    if (!(await (options.before?.({ table: `${schema}.${name}`, first: false }) ?? true))) break;
    await sql`vacuum ${sql.table(`${schema}.${name}`)}`.execute(db);
    vacuumed.push(`${schema}.${name}`);
  }
  return vacuumed;
}
