import { sql, type Kysely } from 'kysely';

/**
 * `requests` rows are compressed only when they pass 8,160 bytes (`toast_tuple_target`), not PostgreSQL's default
 * 2,032. A quote's row is about 2,800 bytes (its `quote` and `fees_quoted` jsonb: the order, the fees), so every
 * insert ran TOAST's pglz on those columns, and pglz gave up: hex ids and addresses do not compress by the 25% it
 * asks, so the stored row was the same 2,805 bytes either way (`pg_column_size`, PGlite). The attempt cost the PGlite
 * worker ~0.05 ms per quote (docs/performance.md, "Where a quote's CPU goes"). Rows over 8,160 bytes (long calls)
 * are still compressed and moved out of line; a row between the two sizes that pglz could have shrunk
 * is now stored whole.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table requests set (toast_tuple_target = 8160)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table requests reset (toast_tuple_target)`.execute(db);
}
