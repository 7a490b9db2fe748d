/**
 * PGlite runs no autovacuum: the gateway analyzes its tables as they change (`analyzeChangedTables`), so the planner
 * knows them. Without statistics the explorer's search (`term`) walked the whole requests table, newest first.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { useTestDatabase } from '../helpers/db.js';
import { applySearchFilters, recipientIs, type SearchRequestFilters } from '../../src/store/requestFilters.js';
import { insertRequests } from '../../src/store/requests.repository.js';
import { analyzeChangedTables, ANALYZE_STATISTICS_TARGET } from '../../src/store/tableStatistics.js';
import { vacuumTables } from '../../src/store/tableVacuum.js';
import { hex32, newRequest } from './requestFixture.js';

const db = useTestDatabase('pglite');

const address = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;

/** `count` requests of as many users, in one statement per thousand. */
async function insertUsersRequests(from: number, count: number): Promise<void> {
  for (let start = from; start < from + count; start += 1_000) {
    const batch = [];
    for (let n = start; n < Math.min(start + 1_000, from + count); n++) {
      const user = address(0x10_0000 + n);
      batch.push(newRequest({ user, sender: user, refundTo: user, recipient: address(0x20_0000 + n), createdAt: n }));
    }
    await insertRequests(db().db, batch);
  }
}

/** The plan of a listing's first page with these filters, newest first. */
async function planOf(filters: SearchRequestFilters): Promise<string> {
  const rows = await applySearchFilters(db().db.selectFrom('requests').selectAll(), filters)
    .orderBy('created_at', 'desc')
    .limit(21)
    .explain();
  return rows.map((row) => String(Object.values(row)[0])).join('\n');
}

/** The plan of the explorer's search for one user's address (`term`), first page. */
const searchPlan = (term: string) => planOf({ term });

/** How many bounds the histogram of a column of `requests` has (the statistics target + 1). */
const histogramBounds = async (column: string) =>
  (
    await sql<{ bounds: number }>`select array_length(histogram_bounds::text::text[], 1) as bounds from pg_stats
      where tablename = 'requests' and attname = ${column}`.execute(db().db)
  ).rows[0]!.bounds;

/** The columns of `requests` that have statistics. */
const columnsWithStatistics = async () =>
  (
    await sql<{ column: string }>`select attname as column from pg_stats where tablename = 'requests'`.execute(db().db)
  ).rows.map((row) => row.column);

const analyzedRows = async () =>
  (await sql<{ rows: number }>`select reltuples::int as rows from pg_class where relname = 'requests'`.execute(db().db))
    .rows[0]!.rows;

describe('table statistics on PGlite', () => {
  it('analyzes a table once half as many rows as it held changed since its last analysis, and the search then uses its indexes', async () => {
    expect(db().dialect).toBe('pglite');
    await analyzeChangedTables(db().db);
    await insertUsersRequests(0, 20_000);
    const term = address(0x10_0000 + 12_345);
    const before = await searchPlan(term);

    expect(await analyzeChangedTables(db().db)).toContain('requests');
    expect(await analyzedRows()).toBe(20_000);
    const after = await searchPlan(term);
    // Before: the newest first, every row filtered until a page is full (all of them for a rare term). After: the
    // indexes of the searched columns, OR'd, then the few rows they name sorted.
    expect(before, before).toMatch(/Index Scan Backward using requests_created_at_idx/);
    expect(before, before).not.toMatch(/BitmapOr/);
    expect(after, after).toMatch(/BitmapOr/);
    // From a small sample (`ANALYZE_STATISTICS_TARGET`): a histogram of 10 buckets where the default makes 100.
    expect(await histogramBounds('created_at')).toBe(ANALYZE_STATISTICS_TARGET + 1);
    // The quote's JSON document is not sampled (no filter reads it); the hashes the search filters on are.
    const sampled = await columnsWithStatistics();
    expect(sampled).toEqual(expect.arrayContaining(['user_address', 'in_tx_hashes', 'tx_hashes']));
    expect(sampled).not.toContain('quote');

    // Nothing changed: nothing to do. A tenth more rows: not yet. Half as many as it had: again.
    expect(await analyzeChangedTables(db().db)).toEqual([]);
    await insertUsersRequests(20_000, 2_000);
    expect(await analyzeChangedTables(db().db)).not.toContain('requests');
    await insertUsersRequests(22_000, 8_100);
    expect(await analyzeChangedTables(db().db)).toContain('requests');
    expect(await analyzedRows()).toBe(30_100);

    // Growing by a fifth is no longer a reason (it was: an analysis holds every statement on PGlite).
    await insertUsersRequests(30_100, 7_000);
    expect(await analyzeChangedTables(db().db)).not.toContain('requests');

    // A table the retention keeps at one size, its deleted rows' space used again: analyzed once enough of its rows
    // were replaced, though it has no more pages than the vacuum recorded.
    await sql`delete from requests where created_at < 8_000`.execute(db().db);
    expect(await vacuumTables(db().db)).toContain('public.requests');
    await insertUsersRequests(37_100, 8_000);
    expect(await analyzeChangedTables(db().db)).toContain('requests');
    expect(await analyzedRows()).toBe(37_100);
  });

  it('finds a recipient who is not the user by the partial recipient index, and one who is by the user index', async () => {
    // 37,100 requests above, each for a recipient other than its user; now requests of users paying themselves.
    const indexBytes = async () =>
      (await sql<{ bytes: string }>`select pg_relation_size('requests_recipient_idx') as bytes`.execute(db().db))
        .rows[0]!.bytes;
    const before = await indexBytes();
    for (let start = 0; start < 5_000; start += 1_000)
      await insertRequests(
        db().db,
        Array.from({ length: 1_000 }, (_, n) => {
          const user = address(0x30_0000 + start + n);
          return newRequest({ user, sender: user, refundTo: user, recipient: user, createdAt: 200_000 + start + n });
        }),
      );
    await analyzeChangedTables(db().db);
    const other = address(0x20_0000 + 12_345);
    const self = address(0x30_0000 + 1_234);
    // The history's `recipient` filter (listRequests), as the search filters' plans are taken.
    const recipientPlan = async (recipient: string) =>
      (
        await db()
          .db.selectFrom('requests')
          .selectAll()
          .where((eb) => recipientIs(eb, recipient))
          .orderBy('created_at', 'desc')
          .limit(21)
          .explain()
      )
        .map((row) => String(Object.values(row)[0]))
        .join('\n');
    for (const plan of [
      await searchPlan(other),
      await planOf({ userOrRecipient: other }),
      await recipientPlan(other),
    ]) {
      expect(plan, plan).toMatch(/requests_recipient_idx/);
      expect(plan, plan).not.toMatch(/Index Scan Backward using requests_created_at_idx/);
    }
    const usersOf = async (where: SearchRequestFilters) =>
      (await applySearchFilters(db().db.selectFrom('requests').select('user_address'), where).execute()).map(
        (row) => row.user_address,
      );
    expect(await usersOf({ term: other })).toEqual([address(0x10_0000 + 12_345)]);
    expect(await usersOf({ userOrRecipient: other })).toEqual([address(0x10_0000 + 12_345)]);
    expect(await usersOf({ term: self })).toEqual([self]);
    expect(await usersOf({ userOrRecipient: self })).toEqual([self]);
    for (const [recipient, user] of [
      [other, address(0x10_0000 + 12_345)],
      [self, self],
    ]) {
      const rows = await db()
        .db.selectFrom('requests')
        .select('user_address')
        .where((eb) => recipientIs(eb, recipient!))
        .execute();
      expect(rows.map((row) => row.user_address)).toEqual([user]);
    }
    // Only the requests for someone else are in the recipient index: 5,000 users paying themselves added no entry
    // (with the full index they took 41 pages more, ~67 bytes each).
    expect(await indexBytes()).toBe(before);
  });

  it('finds a hash by its GIN index, not by walking the newest, with the small sample of those analyses', async () => {
    // Requests that reached the end, each with its deposit and fill hashes, on top of the 37,100 above.
    for (let start = 0; start < 30_000; start += 1_000)
      await insertRequests(
        db().db,
        Array.from({ length: 1_000 }, (_, n) =>
          newRequest({
            status: 'success',
            createdAt: 100_000 + start + n,
            inTxHashes: [hex32(0xa0_0000_0000 + start + n)],
            txHashes: [hex32(0xb0_0000_0000 + start + n)],
          }),
        ),
      );
    expect(await analyzeChangedTables(db().db)).toContain('requests');
    const hash = hex32(0xa0_0000_0000 + 12_345);
    for (const filters of [{ txHash: hash }, { depositTxHash: hash }, { term: hash }]) {
      const plan = await planOf(filters);
      // A containment estimate from a histogram of 11 values is 1% of the table, and the newest-first walk then
      // looked cheaper than the index (90 ms at 60,000 requests, 2.5 s at a million: bench:growth).
      expect(plan, plan).not.toMatch(/Index Scan Backward using requests_created_at_idx/);
      expect(plan, plan).toMatch(/requests_in_tx_hashes_idx/);
      const rows = await applySearchFilters(db().db.selectFrom('requests').selectAll(), filters).execute();
      expect(rows.map((row) => row.in_tx_hashes)).toEqual([[hash]]);
    }
  });
});
