import { sql, type Kysely } from 'kysely';

/**
 * Gasless batches (`POST /execute`): `gasless_submissions` keeps each accepted batch (the transaction to send for
 * the user, who pays its gas, what was recovered) from the moment it is accepted, in the same transaction that
 * moves its request to `depositing`, so a restart sends an accepted batch that was not sent yet. The batch itself
 * is then sent like every other transaction of the solver's key: `outgoing_txs.kind` may be `gasless`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('gasless_submissions')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('chain_id', 'bigint', (c) => c.notNull())
    .addColumn('user_address', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text')
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await sql`alter table outgoing_txs drop constraint outgoing_txs_kind_check`.execute(db);
  await sql`alter table outgoing_txs add constraint outgoing_txs_kind_check check (kind in ('fill', 'refund', 'settle', 'deposit', 'gasless'))`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table outgoing_txs drop constraint outgoing_txs_kind_check`.execute(db);
  await sql`alter table outgoing_txs add constraint outgoing_txs_kind_check check (kind in ('fill', 'refund', 'settle', 'deposit'))`.execute(
    db,
  );
  await db.schema.dropTable('gasless_submissions').execute();
}
