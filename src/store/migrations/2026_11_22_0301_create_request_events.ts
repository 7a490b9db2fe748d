import { sql, type Kysely } from 'kysely';

/**
 * The append-only status history of requests, which is also the outbox: webhook delivery and event fan-out
 * read it after the fact, so a status change and its event are committed together or not at all.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('request_events')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('request_id', 'text', (c) => c.notNull().references('requests.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    // The status record at the moment of the change, in core shape (the transports map it to the wire).
    .addColumn('payload', 'jsonb', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint(
      'request_events_status_check',
      sql`status in ('waiting', 'depositing', 'pending', 'submitted', 'success', 'failure', 'refund', 'fallback')`,
    )
    .execute();

  await db.schema
    .createIndex('request_events_request_id_idx')
    .on('request_events')
    .columns(['request_id', 'id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('request_events').execute();
}
