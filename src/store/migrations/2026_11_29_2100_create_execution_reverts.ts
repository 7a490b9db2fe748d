import { sql, type Kysely } from 'kysely';

/**
 * `execution_reverts`: the solver's transactions that reverted on chain after a clean simulation, paid for by the
 * solver, that a requester caused: a fill running a call quote's calls, a gasless batch. Each names the requester
 * (the order's user, and the API key when there was one) so that one whose transactions revert is refused for a
 * while (`src/core/limits/executionReverts.ts`). The indexes serve that look-up by user and by key, newest first.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('execution_reverts')
    .addColumn('chain_id', 'bigint', (c) => c.notNull())
    .addColumn('tx_hash', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('user_address', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('execution_reverts_pkey', ['chain_id', 'tx_hash'])
    .execute();
  await sql`create index execution_reverts_user_idx on execution_reverts (user_address, created_at)`.execute(db);
  await sql`create index execution_reverts_key_idx on execution_reverts (api_key_id, created_at) where api_key_id is not null`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('execution_reverts').execute();
}
