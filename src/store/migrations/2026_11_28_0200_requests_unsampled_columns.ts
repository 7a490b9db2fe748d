import { sql, type Kysely } from 'kysely';

/** The JSON documents of `requests` that no statement filters, joins or orders on. */
const DOCUMENTS = ['quote', 'fees_quoted', 'fees_actual', 'details'];

/**
 * `ANALYZE` gathers no statistics on the JSON documents of `requests` that no statement filters, joins or orders on
 * (`SET STATISTICS 0`): reading and comparing each sampled document was most of an analysis's cost (on PGlite, where
 * it holds every other statement: 0.17–0.26 s for 24,843 quoted requests with them, 0.11 s without), and no plan
 * uses them. The hash lists the explorer's search filters on (`in_tx_hashes`, `tx_hashes`) keep theirs.
 * Leaving these columns out of each `ANALYZE`'s column list instead would not do: an `ANALYZE` of some columns does not reset
 * the table's count of changes since its last analysis, which now decides the next one (`tableStatistics.ts`).
 * PostgreSQL's autovacuum skips them too.
 */
export async function up(db: Kysely<any>): Promise<void> {
  for (const column of DOCUMENTS)
    await sql`alter table requests alter column ${sql.id(column)} set statistics 0`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const column of DOCUMENTS)
    await sql`alter table requests alter column ${sql.id(column)} set statistics -1`.execute(db);
}
