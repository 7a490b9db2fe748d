import { sql, type Kysely } from 'kysely';

/**
 * Webhook deliveries: one row per (status change, key with an enabled webhook), inserted in the transaction of
 * the status change, so a delivery is never lost nor invented. The row is also the delivery log: `log` keeps
 * every attempt. `api_keys.webhook_secret` holds the key's HMAC secret (the API key itself, sealed with the
 * server's webhook encryption key), since the key is otherwise stored only as a hash.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('webhook_secret', 'text').execute();
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'bigserial', (c) => c.primaryKey())
    .addColumn('api_key_id', 'text', (c) => c.notNull().references('api_keys.id').onDelete('cascade'))
    .addColumn('request_id', 'text', (c) => c.notNull().references('requests.id'))
    // The status record that is posted is the event's payload (the snapshot at the change).
    .addColumn('event_id', 'bigint', (c) => c.notNull().references('request_events.id'))
    .addColumn('replay_of', 'bigint', (c) => c.references('webhook_deliveries.id'))
    .addColumn('status', 'text', (c) => c.notNull().defaultTo('pending'))
    // Attempts started so far; also the fencing token of the current attempt's lease.
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    // When pending: the next attempt is due then (while an attempt runs, the end of its lease).
    .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
    .addColumn('log', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('finished_at', 'bigint')
    .addCheckConstraint(
      'webhook_deliveries_status_check',
      sql`status in ('pending', 'delivered', 'failed', 'cancelled')`,
    )
    .execute();
  // The dispatcher's scan: due pending deliveries only.
  await db.schema
    .createIndex('webhook_deliveries_due_idx')
    .on('webhook_deliveries')
    .column('next_attempt_at')
    .where(sql.ref('status'), '=', 'pending')
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_api_key_idx')
    .on('webhook_deliveries')
    .columns(['api_key_id', 'id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('webhook_deliveries').execute();
  await db.schema.alterTable('api_keys').dropColumn('webhook_secret').execute();
}
