import type { Kysely } from 'kysely';

/**
 * `solver_nonces`: per chain and signer, the solver account's transaction count the database last knew to be all its
 * own (after a start found the chain no further ahead, or after a rebuild from chain events). A chain whose count is
 * ahead of it and of every nonce in `outgoing_txs` holds transactions this database never recorded: the key was used
 * with another database (lost, restored from an older backup, or another gateway's), and the solver rebuilds from
 * chain events before it runs (`src/chain/solverHistory.ts`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('solver_nonces')
    .addColumn('chain_id', 'bigint', (c) => c.notNull())
    .addColumn('signer', 'text', (c) => c.notNull())
    .addColumn('nonce', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('solver_nonces_pkey', ['chain_id', 'signer'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('solver_nonces').execute();
}
