/**
 * A gateway on PGlite (no autovacuum there) analyzes its tables as their rows change and vacuums them as rows die, on
 * an interval: the planner of a long-running gateway knows its tables, and the space of deleted rows is used again,
 * without an operator running ANALYZE or VACUUM. Each ANALYZE or VACUUM holds every statement on PGlite, so it waits
 * for a quiet moment.
 */
import { sql } from 'kysely';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTableMaintenance } from '../../src/server/tableMaintenance.js';
import { insertRequests } from '../../src/store/requests.repository.js';
import { useTestDatabase } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { newRequest } from '../store/requestFixture.js';

let gateway: TestGateway;
const lines: Array<{ msg?: string; tables?: string[] }> = [];

beforeAll(async () => {
  gateway = await startTestGateway(
    { logLevel: 'info', logFormat: 'json' },
    {
      server: {
        logDestination: { write: (line: string) => void lines.push(JSON.parse(line)) },
        tableMaintenanceIntervalMs: 100,
        // This file's polls read the database every 50 ms: quieter than that is quiet enough here.
        tableMaintenanceQuiet: { quietMs: 10, maxWaitMs: 1_000 },
      },
    },
  );
});
afterAll(async () => {
  await gateway?.stop();
});

/** Polls `read` until `done` holds, for at most 10 s. */
async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  let value = await read();
  while (!done(value)) {
    if (Date.now() > deadline) throw new Error(`${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    value = await read();
  }
}

describe('table maintenance', () => {
  it('a gateway on PGlite analyzes the requests table once it has rows, while it runs', async () => {
    const { db } = gateway.server.database;
    expect(gateway.server.database.dialect).toBe('pglite');
    for (let batch = 0; batch < 3; batch++)
      await insertRequests(
        db,
        Array.from({ length: 1_000 }, (_, n) => newRequest({ createdAt: batch * 1_000 + n })),
      );
    const analyzed = async () =>
      (await sql<{ rows: number }>`select reltuples::int as rows from pg_class where relname = 'requests'`.execute(db))
        .rows[0]!.rows;
    await waitFor(analyzed, (rows) => rows >= 3_000, 'the requests table was not analyzed');
    expect(
      lines.some((line) => line.msg === 'analyzed the tables whose rows changed' && line.tables?.includes('requests')),
    ).toBe(true);
  });

  it('a gateway on PGlite vacuums the requests table once a fifth of its rows are deleted, while it runs', async () => {
    const { db } = gateway.server.database;
    await sql`delete from requests where created_at < 1000`.execute(db);
    const vacuums = async () =>
      (
        await sql<{ vacuums: number }>`select vacuum_count::int as vacuums from pg_stat_user_tables
          where relname = 'requests'`.execute(db)
      ).rows[0]!.vacuums;
    await waitFor(vacuums, (count) => count > 0, 'the requests table was not vacuumed');
    expect(
      lines.some(
        (line) => line.msg === 'vacuumed the tables with dead rows' && line.tables?.includes('public.requests'),
      ),
    ).toBe(true);
  });
});

describe('table maintenance waits for a quiet moment', () => {
  const testDatabase = useTestDatabase('pglite');
  const log: Array<{ msg?: string; tables?: string[]; waitedMs?: number }> = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void log.push(JSON.parse(line)) });

  /** `count` requests, created at `from` on, a thousand per statement. */
  async function insertMany(from: number, count: number): Promise<void> {
    for (let start = from; start < from + count; start += 1_000)
      await insertRequests(
        testDatabase().db,
        Array.from({ length: Math.min(1_000, from + count - start) }, (_, n) => newRequest({ createdAt: start + n })),
      );
  }

  /** Statements back to back, as under a burst of quotes, until the returned function is called. */
  function keepBusy(): () => Promise<void> {
    let busy = true;
    const running = (async () => {
      while (busy) await sql`select 1`.execute(testDatabase().db);
    })();
    return async () => {
      busy = false;
      await running;
    };
  }

  const analyses = async () =>
    (
      await sql<{ count: number }>`select analyze_count::int as count from pg_stat_user_tables
        where relname = 'requests'`.execute(testDatabase().db)
    ).rows[0]!.count;

  const analysisLine = async () => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const line = log.find((entry) => entry.msg === 'analyzed the tables whose rows changed');
      if (line !== undefined) return line;
      if (Date.now() > deadline) throw new Error(`no analysis: ${JSON.stringify(log)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it('while statements keep coming, an ANALYZE that is due waits up to maxWaitMs; in a quiet moment it runs then', async () => {
    await insertMany(0, 3_000);
    const quiet = { quietMs: 400, maxWaitMs: 1_500 };
    const stopLoad = keepBusy();
    const job = createTableMaintenance({ database: testDatabase(), log: logger, intervalMs: 60_000, quiet })!;
    void job.start();
    // A table's first statistics do not wait: without them the planner guesses.
    const first = await analysisLine();
    expect(first.tables).toEqual(['requests']);
    expect(first.waitedMs).toBe(0);

    // Due again (half as many rows changed as the table had), the load still on.
    log.length = 0;
    await insertMany(3_000, 1_600);
    void job.runNow();
    const busy = await analysisLine();
    await stopLoad();
    expect(busy.tables).toEqual(['requests']);
    expect(busy.waitedMs).toBeGreaterThanOrEqual(quiet.maxWaitMs);

    // Due again; nothing else runs now.
    log.length = 0;
    await insertMany(4_600, 2_400);
    await job.runNow();
    const calm = await analysisLine();
    expect(calm.waitedMs).toBeGreaterThanOrEqual(quiet.quietMs - 50);
    expect(calm.waitedMs).toBeLessThan(quiet.maxWaitMs);
    await job.stop();
  });

  it('a stop ends the wait, and what was due is left for the next pass', async () => {
    log.length = 0;
    await insertMany(10_000, 4_000);
    const before = await analyses();
    const stopLoad = keepBusy();
    const job = createTableMaintenance({
      database: testDatabase(),
      log: logger,
      quiet: { quietMs: 400, maxWaitMs: 60_000 },
    })!;
    const pass = job.start();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Without the stop ending it, the wait would last a minute (longer than the test's time limit).
    await job.stop();
    await pass;
    await stopLoad();
    expect(await analyses()).toBe(before);
    expect(log.filter((line) => line.msg?.startsWith('analyzed'))).toEqual([]);
  });
});
