import { sql, type Kysely } from 'kysely';

/**
 * Two reads that walked a whole table:
 *
 * - A history page looks up the out hashes that are not its requests' own fill or refund (refunds of excess legs)
 *   among every outgoing transaction's hashes (`findOutgoingTxsByHashes`, `hashes ?| array[...]`). A GIN index
 *   answers `?|`; fastupdate off, as for the requests' hash lists (PGlite runs no autovacuum to merge a pending
 *   list), and only a broadcast writes to it.
 * - The retention job deletes never-paid requests: `status = 'waiting' and expires_at < x`. With no index it read
 *   the whole requests table every pass (found at 1,000,000 rows by `npm run bench:growth`). The index is partial:
 *   only requests still waiting are in it, and a request leaves it once paid.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index outgoing_txs_hashes_idx on outgoing_txs using gin (hashes) with (fastupdate = off)`.execute(
    db,
  );
  await sql`create index requests_waiting_expires_idx on requests (expires_at) where status = 'waiting'`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const name of ['requests_waiting_expires_idx', 'outgoing_txs_hashes_idx'])
    await db.schema.dropIndex(name).execute();
}
