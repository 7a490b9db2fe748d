import { sql, type Kysely } from 'kysely';

/**
 * Settlement: each filled deposit released to the solver joins one batch (one `settle` transaction). The
 * primary key on the deposit is what keeps a deposit out of a second batch; rows are written before the batch's
 * transaction is recorded, so a restart finds and finishes a batch it had started.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('settlement_items')
    .addColumn('deposit_id', 'bigint', (c) => c.primaryKey().references('deposits.id'))
    .addColumn('batch_key', 'text', (c) => c.notNull())
    .addColumn('chain_id', 'bigint', (c) => c.notNull())
    // `pending` until the batch is mined: `settled`, or `failed` (reverted or refused: an operator looks).
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('pending', 'settled', 'failed')`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('settlement_items_batch_idx').on('settlement_items').column('batch_key').execute();
  await db.schema
    .createIndex('settlement_items_chain_status_idx')
    .on('settlement_items')
    .columns(['chain_id', 'status'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('settlement_items').execute();
}
