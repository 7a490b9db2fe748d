import { sql, type Kysely } from 'kysely';

/**
 * A quote's insert entered every index of `requests` its row belongs in, and in most quotes the recipient is the
 * user: `requests_recipient_idx` held the same addresses as the user's index, one more random leaf per quote (at a
 * million requests, a page that is seldom in PGlite's 16 MB pool). It now holds only the rows whose recipient is
 * someone else, as the sender's and the refund address's do (`2026_11_25_0100_search_indexes`); the filters ask for
 * `recipient = a` as `(recipient = a and recipient <> user_address) or (user_address = a and recipient = a)`, the
 * same rows (`recipientIs` in `requestFilters.ts`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('requests_recipient_idx').execute();
  await sql`create index requests_recipient_idx on requests (recipient) where recipient <> user_address`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('requests_recipient_idx').execute();
  await db.schema.createIndex('requests_recipient_idx').on('requests').column('recipient').execute();
}
