import { sql, type Kysely } from 'kysely';

/**
 * Permit deposits (`POST /execute/permits`): a signature accepted for a request is recorded here, in the same
 * transaction as the request's move `waiting -> depositing`, before the gateway sends anything. One row per
 * request (the primary key) is what makes a second signature for it a conflict and the same one a no-op; a
 * restart submits every `accepted` row. The gateway's own deposit transaction is a new `outgoing_txs` kind.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('permits')
    .addColumn('request_id', 'text', (c) => c.primaryKey())
    .addColumn('chain_id', 'bigint', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('signature', 'text', (c) => c.notNull())
    // The approval proxy call that redeems the permit: { to, data, gas }.
    .addColumn('call', 'jsonb', (c) => c.notNull())
    // `accepted` until its deposit is mined: `submitted`, or `failed` (it reverted; the request is waiting again).
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('accepted', 'submitted', 'failed')`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('permits_accepted_idx')
    .on('permits')
    .column('status')
    .where(sql.ref('status'), '=', sql.lit('accepted'))
    .execute();
  await sql`alter table outgoing_txs drop constraint outgoing_txs_kind_check`.execute(db);
  await sql`alter table outgoing_txs add constraint outgoing_txs_kind_check check (kind in ('fill', 'refund', 'settle', 'deposit'))`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table outgoing_txs drop constraint outgoing_txs_kind_check`.execute(db);
  await sql`alter table outgoing_txs add constraint outgoing_txs_kind_check check (kind in ('fill', 'refund', 'settle'))`.execute(
    db,
  );
  await db.schema.dropTable('permits').execute();
}
