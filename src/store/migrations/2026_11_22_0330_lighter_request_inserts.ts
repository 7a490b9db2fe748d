import { sql, type Kysely } from 'kysely';

/**
 * Every quote inserts a `requests` row, so that insert is the quote path's main cost in the database. Most
 * quotes are never deposited and stay `waiting`, and most carry no referrer and no fast fill; indexes that
 * only ever look those rows up by a non-null value, or by a status past `waiting`, need not hold them:
 *
 * - `requests_status_idx` becomes `(status, created_at, id)` for statuses other than `waiting`: it serves the
 *   solver's recovery scan (pending, submitted, failure, newest first) and status filters of the history, and a
 *   new quote no longer touches it. (A history filtered on `waiting` alone walks the created_at index.)
 * - `requests_referrer_idx` and `requests_fast_fill_api_key_idx` keep only rows that have a value.
 *
 * And a row (about 2 KB: the order is in `quote`) is stored as it is up to a full page, instead of being
 * compressed once it passes the default 2 KB TOAST threshold: the CPU of compressing every quote's row cost more
 * than the space it saved.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('requests_status_idx').execute();
  await db.schema
    .createIndex('requests_status_idx')
    .on('requests')
    .columns(['status', 'created_at', 'id'])
    .where(sql.ref('status'), '<>', 'waiting')
    .execute();
  await db.schema.dropIndex('requests_referrer_idx').execute();
  await db.schema
    .createIndex('requests_referrer_idx')
    .on('requests')
    .column('referrer')
    .where(sql.ref('referrer'), 'is not', null)
    .execute();
  await db.schema.dropIndex('requests_fast_fill_api_key_idx').execute();
  await db.schema
    .createIndex('requests_fast_fill_api_key_idx')
    .on('requests')
    .column('fast_fill_api_key_id')
    .where(sql.ref('fast_fill_api_key_id'), 'is not', null)
    .execute();
  await sql`alter table requests set (toast_tuple_target = 8160)`.execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table requests reset (toast_tuple_target)`.execute(db);
  await db.schema.dropIndex('requests_fast_fill_api_key_idx').execute();
  await db.schema.createIndex('requests_fast_fill_api_key_idx').on('requests').column('fast_fill_api_key_id').execute();
  await db.schema.dropIndex('requests_referrer_idx').execute();
  await db.schema.createIndex('requests_referrer_idx').on('requests').column('referrer').execute();
  await db.schema.dropIndex('requests_status_idx').execute();
  await db.schema.createIndex('requests_status_idx').on('requests').column('status').execute();
}
