import type { Kysely } from 'kysely';

/**
 * The deposit-address watcher keeps each chain's addresses in memory and adds the ones created since its last
 * read (`listDepositAddressesSince`): an index on (chain, creation) keeps that read small however many addresses
 * a chain has.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createIndex('deposit_addresses_chain_created_idx')
    .on('deposit_addresses')
    .columns(['chain_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('deposit_addresses_chain_created_idx').execute();
}
