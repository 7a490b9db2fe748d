import { sql, type Kysely } from 'kysely';

/** Where each watcher (named per purpose) stopped reading a chain, so a restart resumes without a gap. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('chain_cursors')
    .addColumn('chain_id', 'bigint', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('block_number', 'bigint', (c) => c.notNull().check(sql`block_number >= 0`))
    // The hash lets a watcher detect that the block it stopped at was reorged away.
    .addColumn('block_hash', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('chain_cursors_pkey', ['chain_id', 'name'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('chain_cursors').execute();
}
