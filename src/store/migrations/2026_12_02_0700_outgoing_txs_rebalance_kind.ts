import { sql, type Kysely } from 'kysely';

/** The solver's own inventory moves (approvals, swaps of a surplus back through the pools) are outgoing transactions. */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table outgoing_txs drop constraint outgoing_txs_kind_check`.execute(db);
  await sql`alter table outgoing_txs add constraint outgoing_txs_kind_check check (kind in ('fill', 'refund', 'settle', 'deposit', 'gasless', 'sweep', 'claim', 'rebalance'))`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table outgoing_txs drop constraint outgoing_txs_kind_check`.execute(db);
  await sql`alter table outgoing_txs add constraint outgoing_txs_kind_check check (kind in ('fill', 'refund', 'settle', 'deposit', 'gasless', 'sweep', 'claim'))`.execute(
    db,
  );
}
