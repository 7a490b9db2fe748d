import { sql, type Kysely } from 'kysely';

// Migrations take Kysely<any>: they must keep compiling as the current table types move on.

/** Every status a request can have: the reference's v3 statuses plus `fallback` (named by `failReason`). */
const statuses = ['waiting', 'depositing', 'pending', 'submitted', 'success', 'failure', 'refund', 'fallback'];
const tradeTypes = ['EXACT_INPUT', 'EXPECTED_OUTPUT', 'EXACT_OUTPUT'];

const inList = (values: string[]) => sql.join(values.map((v) => sql.lit(v)));

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('requests')
    // Byte-order collation: ids are hex, and the keyset pagination compares them.
    .addColumn('id', sql`text collate "C"`, (c) => c.primaryKey())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('user_address', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addColumn('refund_to', 'text', (c) => c.notNull())
    .addColumn('sender', 'text', (c) => c.notNull())
    // int8: some EVM chain ids exceed 2^31.
    .addColumn('origin_chain_id', 'bigint', (c) => c.notNull())
    .addColumn('destination_chain_id', 'bigint', (c) => c.notNull())
    .addColumn('origin_currency', 'text', (c) => c.notNull())
    .addColumn('destination_currency', 'text', (c) => c.notNull())
    .addColumn('amount_in', 'numeric(78, 0)', (c) => c.notNull().check(sql`amount_in >= 0`))
    .addColumn('amount_out', 'numeric(78, 0)', (c) => c.notNull().check(sql`amount_out >= 0`))
    .addColumn('min_amount_out', 'numeric(78, 0)', (c) => c.notNull().check(sql`min_amount_out >= 0`))
    .addColumn('trade_type', 'text', (c) => c.notNull())
    // Not constrained: the reference's full set of operations is not published.
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addColumn('referrer', 'text')
    // No foreign key: keys may be revoked or come from configuration, the request must outlive them.
    .addColumn('api_key_id', 'text')
    .addColumn('quote', 'jsonb', (c) => c.notNull())
    .addColumn('fees_quoted', 'jsonb', (c) => c.notNull())
    .addColumn('fees_actual', 'jsonb')
    .addColumn('fail_reason', 'text')
    .addColumn('refund_fail_reason', 'text')
    .addColumn('details', 'jsonb')
    .addColumn('in_tx_hashes', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('tx_hashes', 'jsonb', (c) => c.notNull().defaultTo(sql`'[]'::jsonb`))
    .addColumn('deposit_address', 'text')
    // Unix milliseconds, like the status record's `updatedAt`.
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addCheckConstraint('requests_status_check', sql`status in (${inList(statuses)})`)
    .addCheckConstraint('requests_trade_type_check', sql`trade_type in (${inList(tradeTypes)})`)
    .addCheckConstraint(
      'requests_hashes_are_arrays',
      sql`jsonb_typeof(in_tx_hashes) = 'array' and jsonb_typeof(tx_hashes) = 'array'`,
    )
    .execute();

  // Indexes follow the GET /requests/v3 filters; each ends in the sort key so a filtered page is an index scan.
  await db.schema.createIndex('requests_created_at_idx').on('requests').columns(['created_at', 'id']).execute();
  await db.schema.createIndex('requests_updated_at_idx').on('requests').columns(['updated_at', 'id']).execute();
  await db.schema
    .createIndex('requests_user_created_at_idx')
    .on('requests')
    .columns(['user_address', 'created_at desc', 'id'])
    .execute();
  await db.schema
    .createIndex('requests_origin_chain_created_at_idx')
    .on('requests')
    .columns(['origin_chain_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('requests_destination_chain_created_at_idx')
    .on('requests')
    .columns(['destination_chain_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('requests_api_key_created_at_idx')
    .on('requests')
    .columns(['api_key_id', 'created_at'])
    .where(sql.ref('api_key_id'), 'is not', null)
    .execute();
  await db.schema.createIndex('requests_status_idx').on('requests').column('status').execute();
  await db.schema.createIndex('requests_referrer_idx').on('requests').column('referrer').execute();
  await db.schema.createIndex('requests_order_id_idx').on('requests').column('order_id').execute();
  await db.schema.createIndex('requests_recipient_idx').on('requests').column('recipient').execute();
  await db.schema
    .createIndex('requests_deposit_address_idx')
    .on('requests')
    .column('deposit_address')
    .where(sql.ref('deposit_address'), 'is not', null)
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('requests').execute();
}
