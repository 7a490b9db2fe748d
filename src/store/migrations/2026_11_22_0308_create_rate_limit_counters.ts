import { type Kysely } from 'kysely';

/**
 * Rate limit counters: one row per bucket (`key:<api key id>` or `ip:<client address>`) and fixed window
 * (its start, Unix ms). Counting here, not in memory, is what makes the limits hold across instances that share
 * the database. Old windows are pruned by the limiter.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('rate_limit_counters')
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_limit_counters_pkey', ['bucket', 'window_start'])
    .execute();
  await db.schema
    .createIndex('rate_limit_counters_window_start_idx')
    .on('rate_limit_counters')
    .column('window_start')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('rate_limit_counters').execute();
}
