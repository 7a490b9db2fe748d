import { type Kysely } from 'kysely';

/**
 * Revenue share (spec "Fee rules" §4) needs each key's trailing 30-day USD volume and whether the key
 * qualifies: `requests.volume_usd_micros` is the input's USD value at quote time (micro-USD), and an API key
 * records its business verification and the EVM address that receives the share.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('requests')
    .addColumn('volume_usd_micros', 'numeric(78, 0)', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('api_keys')
    .addColumn('business_verified', 'boolean', (c) => c.notNull().defaultTo(false))
    .execute();
  await db.schema.alterTable('api_keys').addColumn('payout_address', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').dropColumn('payout_address').execute();
  await db.schema.alterTable('api_keys').dropColumn('business_verified').execute();
  await db.schema.alterTable('requests').dropColumn('volume_usd_micros').execute();
}
