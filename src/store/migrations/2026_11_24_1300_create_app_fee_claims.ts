import { sql, type Kysely } from 'kysely';

/**
 * App-fee claims: a wallet's request to be paid its accrued app fees on one chain and currency. A claim is
 * created `authorizing` (the wallet has a message to sign), becomes `pending` once the wallet's signature is
 * verified (it then holds its USD value out of the wallet's available balance), and `success` or `failed` when its
 * payout transaction (`outgoing_txs` kind `claim`, keyed by the claim id) is mined. The ledger's entries are
 * written with the `success`, in the same transaction.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('app_fee_claims')
    // The claim id, a random bytes32: the `requestId` of the signature step's post body.
    .addColumn('id', 'text', (c) => c.primaryKey())
    // Order of creation, for listings and their continuation.
    .addColumn('seq', 'bigserial', (c) => c.notNull().unique())
    .addColumn('wallet', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('chain_id', 'bigint', (c) => c.notNull())
    .addColumn('currency', 'text', (c) => c.notNull())
    // What the claim takes from the wallet's balance, micro-USD, and the claim fee kept from it.
    .addColumn('usd_micros', 'numeric(78, 0)', (c) => c.notNull())
    .addColumn('fee_usd_micros', 'numeric(78, 0)', (c) => c.notNull())
    // What the recipient is paid, smallest units of `currency` on `chain_id`.
    .addColumn('amount', 'numeric(78, 0)', (c) => c.notNull())
    // The 32-byte hash the wallet signs (EIP-191).
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('authorizing', 'pending', 'success', 'failed')`),
    )
    .addColumn('tx_hash', 'text')
    // Unix ms after which an unsigned claim can no longer be authorized.
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('app_fee_claims_wallet_idx').on('app_fee_claims').columns(['wallet', 'seq']).execute();
  await db.schema
    .createIndex('app_fee_claims_pending_idx')
    .on('app_fee_claims')
    .column('status')
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  // A claim's payout is an outgoing transaction of its own kind.
  await sql`alter table outgoing_txs drop constraint outgoing_txs_kind_check`.execute(db);
  await sql`alter table outgoing_txs add constraint outgoing_txs_kind_check check (kind in ('fill', 'refund', 'settle', 'deposit', 'gasless', 'sweep', 'claim'))`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table outgoing_txs drop constraint outgoing_txs_kind_check`.execute(db);
  await sql`alter table outgoing_txs add constraint outgoing_txs_kind_check check (kind in ('fill', 'refund', 'settle', 'deposit', 'gasless', 'sweep'))`.execute(
    db,
  );
  await db.schema.dropTable('app_fee_claims').execute();
}
