import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll } from 'vitest';
import { createDatabase, type Database } from '../../src/store/database.js';

/** The PostgreSQL every storage test also runs against. It must be reachable: tests fail, never skip. */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export type TestDatabaseKind = 'pglite' | 'postgres';

/** For `describe.each`: every storage test runs on both. */
export const testDatabaseKinds: TestDatabaseKind[] = ['pglite', 'postgres'];

/**
 * Open a database of this kind: PGlite in memory, or PostgreSQL in a fresh random schema (so parallel test
 * files never collide). Migrated unless `migrate: false`.
 */
export async function openTestDatabase(kind: TestDatabaseKind, options: { migrate?: boolean } = {}): Promise<Database> {
  let database: Database;
  if (kind === 'pglite') {
    database = await createDatabase({});
  } else {
    const schema = `test_${randomBytes(6).toString('hex')}`;
    try {
      database = await createDatabase({ databaseUrl: testDatabaseUrl, schema });
    } catch (error) {
      throw new Error(
        `PostgreSQL is required by the storage tests and is not reachable at ${testDatabaseUrl} ` +
          `(start it, or point TEST_DATABASE_URL at one): ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
  if (options.migrate !== false) await database.migrate();
  return database;
}

/** Drop the test schema (PostgreSQL) and close. */
export async function disposeTestDatabase(database: Database): Promise<void> {
  try {
    if (database.schema !== undefined) await database.dropSchema();
  } finally {
    await database.close();
  }
}

/**
 * One database for the whole describe block (PGlite takes about 2 s to start), disposed after it.
 * Returns a getter, valid once `beforeAll` has run.
 */
export function useTestDatabase(kind: TestDatabaseKind, options: { migrate?: boolean } = {}): () => Database {
  let database: Database | undefined;
  beforeAll(async () => {
    database = await openTestDatabase(kind, options);
  });
  afterAll(async () => {
    if (database !== undefined) await disposeTestDatabase(database);
  });
  return () => {
    if (database === undefined) throw new Error('The test database is not open (beforeAll failed?)');
    return database;
  };
}

/** Empty every gateway table, so each test starts clean without paying for a new database. */
export async function truncateAll(database: Database): Promise<void> {
  await sql`
    truncate table requests, request_events, chain_cursors, chain_genesis, deposits, outgoing_txs, api_keys, ledger_entries, ledger_reconciliations, settlement_items
    restart identity cascade`.execute(database.db);
}
