import { sql, type Kysely } from 'kysely';

/**
 * The double-entry ledger: every money movement is two rows with opposite signed amounts in one chain and
 * currency (smallest units), so every currency sums to zero. Append-only; a movement's key makes writing it
 * twice (a retry, a recovery after a crash) a no-op.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('ledger_entries')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('movement_key', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('account', 'text', (c) => c.notNull())
    .addColumn('chain_id', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    // Signed: positive debits the account, negative credits it.
    .addColumn('amount', 'numeric(78, 0)', (c) => c.notNull())
    // The movement's USD value when it was recorded, micro-USD, signed like `amount`; null when unpriced.
    .addColumn('usd_micros', 'numeric(78, 0)')
    .addColumn('request_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // One movement writes each of its two accounts once: the idempotency key of every movement.
  await db.schema
    .createIndex('ledger_entries_movement_account_key')
    .on('ledger_entries')
    .columns(['movement_key', 'account'])
    .unique()
    .execute();
  await db.schema
    .createIndex('ledger_entries_account_idx')
    .on('ledger_entries')
    .columns(['account', 'chain_id', 'currency'])
    .execute();
  await db.schema
    .createIndex('ledger_entries_request_idx')
    .on('ledger_entries')
    .column('request_id')
    .where(sql.ref('request_id'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('ledger_entries').execute();
}
