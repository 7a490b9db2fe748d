import { sql, type Kysely } from 'kysely';

/**
 * A deposit the solver already used (a fill or a refund) and that a reorg then took off the chain: it becomes
 * `removed`, and `reorged_at` (Unix ms) records that it was removed after it counted, which a reorg within the
 * confirmation depth never does. The ledger books its amount as a loss at the same time. Null on every other row.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table deposits add column reorged_at bigint`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table deposits drop column reorged_at`.execute(db);
}
