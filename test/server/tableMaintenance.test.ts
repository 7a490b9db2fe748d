/**
 * A gateway on PGlite (no autovacuum there) analyzes its tables as they grow and vacuums them as rows die, on an
 * interval: the planner of a long-running gateway knows its tables, and the space of deleted rows is used again,
 * without an operator running ANALYZE or VACUUM.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRequests } from '../../src/store/requests.repository.js';
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
  it('a gateway on PGlite analyzes the requests table once it has grown, while it runs', async () => {
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
      lines.some((line) => line.msg === 'analyzed the tables that grew' && line.tables?.includes('requests')),
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
