import { sql, type Kysely } from 'kysely';

/**
 * `outgoing_txs.kind` may be `gasless`: a user's EIP-7702 batch the gateway submits for them (`POST /execute`),
 * recorded before it is sent like every other transaction of the solver's key, one live row per request.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table outgoing_txs drop constraint outgoing_txs_kind_check`.execute(db);
  await sql`alter table outgoing_txs add constraint outgoing_txs_kind_check check (kind in ('fill', 'refund', 'settle', 'gasless'))`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table outgoing_txs drop constraint outgoing_txs_kind_check`.execute(db);
  await sql`alter table outgoing_txs add constraint outgoing_txs_kind_check check (kind in ('fill', 'refund', 'settle'))`.execute(
    db,
  );
}
