import { sql, type Kysely } from 'kysely';

/**
 * Transactions the solver sends (fills, refunds, settlements), recorded before they are broadcast. A gas bump
 * keeps its row and appends to `hashes`; a row is `replaced` only when another row supersedes it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('outgoing_txs')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('chain_id', 'bigint', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('signer', 'text', (c) => c.notNull())
    // Null until the per-chain sender assigns one.
    .addColumn('nonce', 'bigint', (c) => c.check(sql`nonce >= 0`))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('hashes', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('outgoing_txs_kind_check', sql`kind in ('fill', 'refund', 'settle')`)
    .addCheckConstraint(
      'outgoing_txs_status_check',
      sql`status in ('prepared', 'broadcast', 'confirmed', 'failed', 'replaced')`,
    )
    .execute();

  // Never two fills (or two refunds) for one request: a second live row is a constraint violation, so even
  // two solver instances racing on the same request cannot both record one.
  await db.schema
    .createIndex('outgoing_txs_request_kind_key')
    .on('outgoing_txs')
    .columns(['request_id', 'kind'])
    .unique()
    .where(sql.ref('status'), '<>', sql.lit('replaced'))
    .execute();
  // Two live transactions of one signer never share a nonce.
  await db.schema
    .createIndex('outgoing_txs_signer_nonce_key')
    .on('outgoing_txs')
    .columns(['chain_id', 'signer', 'nonce'])
    .unique()
    .where(sql<boolean>`nonce is not null and status <> 'replaced'`)
    .execute();
  await db.schema
    .createIndex('outgoing_txs_chain_status_idx')
    .on('outgoing_txs')
    .columns(['chain_id', 'status'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('outgoing_txs').execute();
}
