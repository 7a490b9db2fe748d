import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.js';
import { migrations } from '../../src/store/migrations/index.js';
import { disposeTestDatabase, openTestDatabase, testDatabaseKinds } from '../helpers/db.js';

const gatewayTables = [
  'api_keys',
  'app_fee_claims',
  'chain_cursors',
  'chain_genesis',
  'deposit_address_transfers',
  'deposit_addresses',
  'deposits',
  'execution_reverts',
  'gasless_submissions',
  'ledger_entries',
  'ledger_reconciliations',
  'outgoing_txs',
  'permit_deadlines',
  'permits',
  'rate_limit_counters',
  'request_events',
  'requests',
  'settlement_items',
  'solver_nonces',
  'webhook_deliveries',
];

/** Tables of the current schema (kysely's bookkeeping tables excluded). */
async function tablesOf(database: Database): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select table_name as name from information_schema.tables
    where table_schema = current_schema() and table_name not like 'kysely_%'
    order by table_name`.execute(database.db);
  return rows.map((r) => r.name);
}

describe.each(testDatabaseKinds)('migrations (%s)', (kind) => {
  let database: Database;
  beforeAll(async () => {
    database = await openTestDatabase(kind, { migrate: false });
  });
  afterAll(async () => {
    if (database !== undefined) await disposeTestDatabase(database);
  });

  it('migration names follow YYYY_MM_DD_HHMM_verb_noun and sort in declaration order', () => {
    const names = Object.keys(migrations);
    for (const name of names) expect(name).toMatch(/^\d{4}_\d{2}_\d{2}_\d{4}_[a-z]+(_[a-z]+)+$/);
    expect([...names].sort()).toEqual(names);
  });

  it('migrates up from empty, down to empty, and up again', async () => {
    expect(await tablesOf(database)).toEqual([]);

    await database.migrate();
    expect(await tablesOf(database)).toEqual(gatewayTables);
    await database.migrate(); // idempotent
    expect(await tablesOf(database)).toEqual(gatewayTables);

    await database.migrateDown();
    expect(await tablesOf(database)).toEqual([]);

    await database.migrate();
    expect(await tablesOf(database)).toEqual(gatewayTables);
  });

  it('creates the indexes the history filters use', async () => {
    const { rows } = await sql<{ name: string }>`
      select indexname as name from pg_indexes
      where schemaname = current_schema() and tablename = 'requests' order by indexname`.execute(database.db);
    expect(rows.map((r) => r.name)).toEqual(
      expect.arrayContaining([
        'requests_user_created_at_idx',
        'requests_origin_chain_created_at_idx',
        'requests_destination_chain_created_at_idx',
        'requests_status_idx',
        'requests_referrer_idx',
        'requests_order_id_idx',
        'requests_updated_at_idx',
        // The search (`term`) and hash filters: partial, so a new quote adds no entry (2026_11_25_0100).
        'requests_sender_idx',
        'requests_refund_to_idx',
        'requests_in_tx_hashes_idx',
        'requests_tx_hashes_idx',
        // The retention job's never-paid requests: partial, a request leaves it once paid (2026_11_26_0100).
        'requests_waiting_expires_idx',
      ]),
    );
  });

  it('indexes the order id with a hash index (a random key: a btree took a random leaf per quote, 2026_11_27_0100)', async () => {
    const { rows } = await sql<{ method: string }>`
      select am.amname as method from pg_class c
      join pg_am am on am.oid = c.relam
      join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relname = 'requests_order_id_idx'`.execute(database.db);
    expect(rows.map((r) => r.method)).toEqual(['hash']);
  });

  it('compresses a request row only past 8,160 bytes (a quote row did not compress, 2026_11_28_0100)', async () => {
    const { rows } = await sql<{ options: string[] | null }>`
      select c.reloptions as options from pg_class c
      join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relname = 'requests'`.execute(database.db);
    expect(rows.map((r) => r.options)).toEqual([['toast_tuple_target=8160']]);
  });

  it('indexes the outgoing transactions by hash (a history page looks several up at once)', async () => {
    const { rows } = await sql<{ name: string }>`
      select indexname as name from pg_indexes
      where schemaname = current_schema() and tablename = 'outgoing_txs' order by indexname`.execute(database.db);
    expect(rows.map((r) => r.name)).toContain('outgoing_txs_hashes_idx');
  });
});
