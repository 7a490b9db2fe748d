import { sql, type Kysely } from 'kysely';

/** API keys. Only a hash of the key is stored; the key itself is shown once, when it is created. */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('key_hash', 'text', (c) => c.notNull().unique())
    .addColumn('sponsorship_enabled', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('limits', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    // One webhook per key: { url, headers, enabled }.
    .addColumn('webhook', 'jsonb')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at', 'bigint')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('api_keys').execute();
}
