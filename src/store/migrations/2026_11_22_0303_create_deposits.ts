import { sql, type Kysely } from 'kysely';

/**
 * Deposit events seen on origin chains. One row per log: the unique (chain_id, tx_hash, log_index) makes
 * re-reading a block range after a restart or a reorg harmless.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('deposits')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('chain_id', 'bigint', (c) => c.notNull())
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('log_index', 'integer', (c) => c.notNull())
    .addColumn('block_number', 'bigint', (c) => c.notNull())
    .addColumn('block_hash', 'text', (c) => c.notNull())
    // The id the deposit carried. No foreign key: a deposit for an unknown id is still recorded (and refunded).
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('depositor', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('amount', 'numeric(78, 0)', (c) => c.notNull().check(sql`amount >= 0`))
    // The depository's own counter for the deposit, when it emits one.
    .addColumn('deposit_index', 'numeric')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('deposits_chain_tx_log_key', ['chain_id', 'tx_hash', 'log_index'])
    .addCheckConstraint('deposits_status_check', sql`status in ('seen', 'confirmed', 'removed', 'consumed')`)
    .execute();

  await db.schema.createIndex('deposits_request_id_idx').on('deposits').column('request_id').execute();
  await db.schema
    .createIndex('deposits_chain_status_block_idx')
    .on('deposits')
    .columns(['chain_id', 'status', 'block_number'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('deposits').execute();
}
