import { sql, type Kysely } from 'kysely';

/**
 * - `deposit_address_transfers.status` gains `dust`: a transfer worth less than sweeping it costs (times the
 *   configured margin) is recorded and left at its address; it is swept together with the next transfer there that
 *   makes the sum worth it (`swept`, under that transfer's sweep id), or left. `dust_sweep_id` names the sweep that
 *   took a dust transfer along.
 * - `deposits.carrier`: what the solver's own transaction that carried a deposit was (null when someone else sent
 *   it, or for rows older than the column): `sweep:<deposit address>`, `permit:<owner>` or `call:<target>`
 *   (`src/core/solver/solverCarrier.ts`). Only the first two, for the order's own address or user, make a deposit
 *   sent by the solver the order user's own.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table deposit_address_transfers drop constraint deposit_address_transfers_status_check`.execute(db);
  await sql`alter table deposit_address_transfers add constraint deposit_address_transfers_status_check
    check (status in ('seen', 'confirmed', 'removed', 'unsupported', 'sweeping', 'swept', 'held', 'dust'))`.execute(db);
  await db.schema.alterTable('deposit_address_transfers').addColumn('dust_sweep_id', 'text').execute();
  await db.schema.alterTable('deposits').addColumn('carrier', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('deposits').dropColumn('carrier').execute();
  await db.schema.alterTable('deposit_address_transfers').dropColumn('dust_sweep_id').execute();
  await sql`update deposit_address_transfers set status = 'held' where status = 'dust'`.execute(db);
  await sql`alter table deposit_address_transfers drop constraint deposit_address_transfers_status_check`.execute(db);
  await sql`alter table deposit_address_transfers add constraint deposit_address_transfers_status_check
    check (status in ('seen', 'confirmed', 'removed', 'unsupported', 'sweeping', 'swept', 'held'))`.execute(db);
}
