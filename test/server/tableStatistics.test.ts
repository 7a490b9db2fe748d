/**
 * A gateway on PGlite (no autovacuum there) analyzes its tables as they grow, on an interval: the planner of a
 * long-running gateway knows its tables without an operator running ANALYZE.
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
        tableStatisticsIntervalMs: 100,
      },
    },
  );
});
afterAll(async () => {
  await gateway?.stop();
});

describe('table statistics', () => {
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
    const deadline = Date.now() + 10_000;
    while ((await analyzed()) < 3_000) {
      if (Date.now() > deadline) throw new Error(`the requests table was not analyzed: ${await analyzed()} rows`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(
      lines.some((line) => line.msg === 'analyzed the tables that grew' && line.tables?.includes('requests')),
    ).toBe(true);
  });
});
