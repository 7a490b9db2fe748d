import type { Kysely } from 'kysely';

/**
 * The reconciliation job's latest result per chain and currency (`src/core/reconciliation/reconciler.ts`): the solver's
 * balance on chain at a block, the ledger's `solver` account at that block, what is known to be on its way
 * (deposits forwarded to the solver and not confirmed yet), and the drift between them. One row per chain and
 * currency, replaced by every settled check; read by `GET /admin/inventory` and the `/metrics` drift gauge on
 * any instance (the job runs on the solver's instance).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('ledger_reconciliations')
    .addColumn('chain_id', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    // The block whose state was compared, and the solver's balance there (smallest units).
    .addColumn('block_number', 'bigint', (c) => c.notNull())
    .addColumn('on_chain', 'numeric(78, 0)', (c) => c.notNull())
    // The ledger's `solver` account (signed), and what is incoming and not in it yet.
    .addColumn('ledger', 'numeric(78, 0)', (c) => c.notNull())
    .addColumn('incoming', 'numeric(78, 0)', (c) => c.notNull())
    // on_chain - (ledger + incoming): positive when the chain holds more than the ledger knows of.
    .addColumn('drift', 'numeric(78, 0)', (c) => c.notNull())
    // Unix ms of the settled check these numbers come from.
    .addColumn('checked_at', 'bigint', (c) => c.notNull())
    // Unix ms of the last check that could not compare (transactions in flight), when later than `checked_at`.
    .addColumn('in_flight_at', 'bigint')
    .addPrimaryKeyConstraint('ledger_reconciliations_pkey', ['chain_id', 'currency'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('ledger_reconciliations').execute();
}
