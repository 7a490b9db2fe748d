import type { Kysely } from 'kysely';

/**
 * The genesis block hash of each chain the database has followed, by chain id: at start the gateway compares it
 * with the chain it is given, so a database saved on one devnet is never read as the state of a new one.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('chain_genesis')
    .addColumn('chain_id', 'bigint', (c) => c.primaryKey())
    .addColumn('genesis_hash', 'text', (c) => c.notNull())
    .addColumn('recorded_at', 'bigint', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('chain_genesis').execute();
}
