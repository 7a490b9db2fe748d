import { type Kysely } from 'kysely';

/**
 * Fast fill: a request filled before its deposit is confirmed records the API key that vouched for it and the
 * USD value it put at risk (micro-USD), so each key's outstanding exposure can be held under its limit.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('requests').addColumn('fast_fill_api_key_id', 'text').execute();
  await db.schema.alterTable('requests').addColumn('fast_fill_usd_micros', 'numeric(78, 0)').execute();
  await db.schema.createIndex('requests_fast_fill_api_key_idx').on('requests').column('fast_fill_api_key_id').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('requests_fast_fill_api_key_idx').execute();
  await db.schema.alterTable('requests').dropColumn('fast_fill_usd_micros').execute();
  await db.schema.alterTable('requests').dropColumn('fast_fill_api_key_id').execute();
}
