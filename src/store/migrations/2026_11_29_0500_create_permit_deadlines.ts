import { sql, type Kysely } from 'kysely';

/**
 * `permit_deadlines`: the EIP-2612 deadlines quotes handed out. A 2612 permit's message is (owner, spender, value,
 * nonce, deadline) and the token fixes the nonce (`nonces(owner)`), so two quotes of one user for one amount in one
 * second would ask for the same message, and a signature for one would be good for the other. The primary key
 * makes each deadline of one owner's nonce on one token a single quote's (`src/core/permits/deadlines.ts`). A row
 * is of no use once its deadline has passed (no later quote can pick it), and the request retention removes it.
 *
 * `permits.owner`: the signer of an accepted permit, so that the permits of a user whose permit deposit reverted
 * can be found (`permits_failed_owner_idx`, the few `failed` rows) and refused for a while.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('permit_deadlines')
    .addColumn('chain_id', 'bigint', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('owner', 'text', (c) => c.notNull())
    // The token's permit nonce as a decimal string (a uint256).
    .addColumn('nonce', 'text', (c) => c.notNull())
    .addColumn('deadline', 'bigint', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('permit_deadlines_pkey', ['chain_id', 'token', 'owner', 'nonce', 'deadline'])
    .execute();
  await db.schema.alterTable('permits').addColumn('owner', 'text').execute();
  await sql`create index permits_failed_owner_idx on permits (owner, updated_at) where status = 'failed'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('permits_failed_owner_idx').execute();
  await db.schema.alterTable('permits').dropColumn('owner').execute();
  await db.schema.dropTable('permit_deadlines').execute();
}
