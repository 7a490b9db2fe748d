import { sql, type Kysely } from 'kysely';

/**
 * The history's search (`term`, the explorer's search box) and hash filters must not read the whole table: with
 * 1,000,000 stored requests (`npm run bench:growth`) a term naming a user with a few requests walked every row.
 * Every column they compare now has an index, each partial so that a new quote (sender and refund address the
 * user's, no transaction yet) adds no entry to any of them and the quote path keeps its cost:
 *
 * - `sender` and `refund_to` only where they differ from `user_address`: the query asks `user_address = t or
 *   (sender = t and sender <> user_address)`, which is the same set of rows, and the planner can use the index;
 * - the deposit and outgoing hash lists only when not empty (a GIN index answers `@>`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index requests_sender_idx on requests (sender) where sender <> user_address`.execute(db);
  await sql`create index requests_refund_to_idx on requests (refund_to) where refund_to <> user_address`.execute(db);
  // fastupdate off: a GIN index otherwise queues new entries in a pending list that every search reads through
  // until a vacuum merges it, and PGlite runs no autovacuum. Only status changes that record a hash write here.
  await sql`create index requests_in_tx_hashes_idx on requests using gin (in_tx_hashes jsonb_path_ops)
            with (fastupdate = off) where in_tx_hashes <> '[]'::jsonb`.execute(db);
  await sql`create index requests_tx_hashes_idx on requests using gin (tx_hashes jsonb_path_ops)
            with (fastupdate = off) where tx_hashes <> '[]'::jsonb`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const name of [
    'requests_tx_hashes_idx',
    'requests_in_tx_hashes_idx',
    'requests_refund_to_idx',
    'requests_sender_idx',
  ])
    await db.schema.dropIndex(name).execute();
}
