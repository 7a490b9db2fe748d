import { sql, type Kysely } from 'kysely';

/**
 * `settlement_items.release_tx_hash`: the transaction that released the deposit on chain, when the settler learns it
 * from the chain rather than from its own batch (a database restored from an older backup, or a release by hand):
 * a `settled` item released to the solver by a transaction this database did not send, or a `rejected`
 * `ALREADY_RELEASED` item released to someone else (a refund). Null for an item settled by its own batch, whose
 * transaction is the batch's `settle` outgoing transaction.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table settlement_items add column release_tx_hash text`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table settlement_items drop column release_tx_hash`.execute(db);
}
