import { sql, type Kysely } from 'kysely';

/**
 * Deposit addresses (`useDepositAddress`): the addresses quotes handed out and the plain transfers seen at them.
 *
 * - `deposit_addresses`: one row per (chain, address). `type` strict (bound to `request_id`) or open (reusable for
 *   its route: `params` holds what a re-quote of a transfer needs). `salt_key` and `recovery_address` are the
 *   factory's inputs, so the gateway can sweep without recomputing anything.
 * - `deposit_address_transfers`: one row per transfer (a native transaction to the address, `log_index` -1, or an
 *   ERC-20 `Transfer` log). Status `seen` -> `confirmed` (deep enough, block still canonical) or `removed`
 *   (reorged away); `unsupported` (a token that is not a listed solver currency: left at the address);
 *   `sweeping` (the request it pays and the sweep's legs are recorded) -> `swept`; `held` (nothing to sweep it
 *   for: an open address without a refund address whose transfer cannot be re-quoted).
 * - outgoing transactions get the kind `sweep`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('deposit_addresses')
    .addColumn('chain_id', 'bigint', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull().check(sql`type in ('strict', 'open')`))
    .addColumn('salt_key', 'text', (c) => c.notNull())
    .addColumn('recovery_address', 'text')
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    .addColumn('refund_to', 'text')
    .addColumn('params', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('reindexed_at', 'bigint')
    .addPrimaryKeyConstraint('deposit_addresses_pkey', ['chain_id', 'address'])
    .execute();
  await db.schema
    .createIndex('deposit_addresses_request_id_idx')
    .on('deposit_addresses')
    .column('request_id')
    .execute();

  await db.schema
    .createTable('deposit_address_transfers')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('chain_id', 'bigint', (c) => c.notNull())
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('log_index', 'integer', (c) => c.notNull())
    .addColumn('block_number', 'bigint', (c) => c.notNull())
    .addColumn('block_hash', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('amount', 'numeric(78, 0)', (c) => c.notNull().check(sql`amount >= 0`))
    .addColumn('depositor', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text')
    .addColumn('supersedes_request_id', 'text')
    .addColumn('sweep_id', 'text')
    .addColumn('legs', 'jsonb')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('deposit_address_transfers_chain_tx_log_key', ['chain_id', 'tx_hash', 'log_index'])
    .addCheckConstraint(
      'deposit_address_transfers_status_check',
      sql`status in ('seen', 'confirmed', 'removed', 'unsupported', 'sweeping', 'swept', 'held')`,
    )
    .execute();
  await db.schema
    .createIndex('deposit_address_transfers_address_idx')
    .on('deposit_address_transfers')
    .columns(['chain_id', 'address'])
    .execute();
  await db.schema
    .createIndex('deposit_address_transfers_status_idx')
    .on('deposit_address_transfers')
    .columns(['chain_id', 'status', 'block_number'])
    .execute();
  await db.schema
    .createIndex('deposit_address_transfers_request_idx')
    .on('deposit_address_transfers')
    .column('request_id')
    .execute();

  await sql`alter table outgoing_txs drop constraint outgoing_txs_kind_check`.execute(db);
  await sql`alter table outgoing_txs add constraint outgoing_txs_kind_check check (kind in ('fill', 'refund', 'settle', 'deposit', 'gasless', 'sweep'))`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table outgoing_txs drop constraint outgoing_txs_kind_check`.execute(db);
  await sql`alter table outgoing_txs add constraint outgoing_txs_kind_check check (kind in ('fill', 'refund', 'settle', 'deposit', 'gasless'))`.execute(
    db,
  );
  await db.schema.dropTable('deposit_address_transfers').execute();
  await db.schema.dropTable('deposit_addresses').execute();
}
