import { sql, type Kysely } from 'kysely';

/**
 * `requests_order_id_idx` becomes a hash index. Order ids are keccak hashes, so every quote's insert entered the
 * btree at a random leaf: at 1,000,000 stored requests (`npm run bench:growth`) that leaf was usually not in
 * PostgreSQL's buffers (a read), and after a checkpoint its first change writes the whole page to the WAL that the
 * quote's commit waits on. The order id is only ever looked up by equality (the history's `orderId` filter and its
 * search box, `term`, in a bitmap OR with the other columns), which a hash index answers; it holds a 4-byte hash
 * per row instead of the 66-character id, so at 1,000,000 rows it is 4,098 pages instead of 15,220 (PostgreSQL),
 * and fewer of them are read and written back per insert. (The primary key is the other random-key index a quote
 * enters; it must stay a unique btree.)
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('requests_order_id_idx').execute();
  await sql`create index requests_order_id_idx on requests using hash (order_id)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('requests_order_id_idx').execute();
  await db.schema.createIndex('requests_order_id_idx').on('requests').column('order_id').execute();
}
