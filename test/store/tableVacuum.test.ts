/**
 * PGlite runs no autovacuum: the gateway vacuums its tables (`vacuumTables`), so the space of deleted and updated
 * rows is used again and the database is frozen before its transaction ids run out.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/db.js';
import { insertRequests } from '../../src/store/requests.repository.js';
import { vacuumTables } from '../../src/store/tableVacuum.js';
import { newRequest } from './requestFixture.js';

const db = useTestDatabase('pglite');

let created = 0;
/** `count` requests of ~2 KB each (a quote's size), the newest last. */
async function insertQuotes(count: number): Promise<void> {
  const quote = { details: { operation: 'bridge', steps: 'x'.repeat(2_000) } };
  for (let start = 0; start < count; start += 500) {
    const batch = Array.from({ length: Math.min(500, count - start) }, () =>
      newRequest({ createdAt: ++created, quote }),
    );
    await insertRequests(db().db, batch);
  }
}

/** The oldest `count` requests deleted, as the retention job deletes the quotes never paid. */
const deleteOldest = (count: number) =>
  sql`delete from requests where created_at <= (select min(created_at) + ${count - 1} from requests)`.execute(db().db);

const pages = async () =>
  Number(
    (await sql<{ pages: string }>`select pg_relation_size('requests') / 8192 as pages`.execute(db().db)).rows[0]!.pages,
  );

const oldestTransactionAge = async () =>
  (
    await sql<{
      age: number;
    }>`select age(datfrozenxid) as age from pg_database where datname = current_database()`.execute(db().db)
  ).rows[0]!.age;

describe('vacuum on PGlite', () => {
  it('vacuums a table once a fifth of its rows are dead, so the space of deleted requests is used again', async () => {
    expect(db().dialect).toBe('pglite');
    await insertQuotes(3_000);
    // The migrations left dead rows in the catalog; nothing is due after this.
    await vacuumTables(db().db);
    expect(await vacuumTables(db().db)).toEqual([]);
    const full = await pages();

    // A third of the rows deleted: over 50 + a fifth of 3,000. The pages stay; their space is recorded as free.
    await deleteOldest(1_000);
    expect(await vacuumTables(db().db)).toContain('public.requests');
    expect(await pages()).toBe(full);
    // New quotes fill that space instead of growing the table (without the vacuum: a third more pages).
    await insertQuotes(1_000);
    expect(await pages()).toBe(full);

    // 100 dead rows of 3,000: not yet worth a pass over the table and its indexes.
    await deleteOldest(100);
    expect(await vacuumTables(db().db)).not.toContain('public.requests');
  });

  it('freezes every table, the catalog too, once its oldest unfrozen transaction is older than vacuum_freeze_table_age', async () => {
    const before = await oldestTransactionAge();
    expect(before).toBeGreaterThan(10);
    // Ages of millions scaled down to none: every table is due, and its `VACUUM` freezes every row.
    await sql`select set_config('vacuum_freeze_table_age', '0', false), set_config('vacuum_freeze_min_age', '0', false)`.execute(
      db().db,
    );
    try {
      const vacuumed = await vacuumTables(db().db);
      expect(vacuumed).toEqual(expect.arrayContaining(['pg_catalog.pg_class', 'public.requests', 'public.deposits']));
      expect(await oldestTransactionAge()).toBeLessThan(before);
    } finally {
      await sql`select set_config('vacuum_freeze_table_age', '150000000', false), set_config('vacuum_freeze_min_age', '50000000', false)`.execute(
        db().db,
      );
    }
  });
});
