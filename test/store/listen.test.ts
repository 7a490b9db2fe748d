/**
 * `listenWithReconnect` (src/store/listen.ts), the LISTEN connection behind the request-event follower and the
 * webhook dispatcher, on the real PostgreSQL: notifications arrive; when the server kills the connection
 * (`pg_terminate_backend`, what a restart or a failover does to it) the error is reported, the listener comes
 * back by itself and says so (the callers' cue to catch up), and notifications after that arrive again; once
 * stopped, nothing arrives and nothing reconnects.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listenWithReconnect } from '../../src/store/listen.js';
import { testDatabaseUrl } from '../helpers/db.js';

let admin: pg.Client;

beforeAll(async () => {
  admin = new pg.Client({ connectionString: testDatabaseUrl });
  await admin.connect();
});
afterAll(async () => {
  await admin?.end();
});

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The backends LISTENing on `channel` (their last statement). */
async function listeners(channel: string): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = current_database() and query = $1',
    [`LISTEN ${channel}`],
  );
  return rows.map((row) => row.pid);
}

describe('listenWithReconnect', () => {
  it('hands on notifications, survives the server killing its connection, and stops for good', async () => {
    const channel = `test_listen_${randomBytes(4).toString('hex')}`;
    const payloads: string[] = [];
    const errors: Array<Error | undefined> = [];
    let listening = 0;
    const stop = await listenWithReconnect({
      databaseUrl: testDatabaseUrl,
      channel,
      onNotification: (payload) => payloads.push(payload),
      onListening: () => void listening++,
      onError: (error) => void errors.push(error),
      retryMs: 100,
    });
    expect(listening).toBe(1);

    await admin.query(`select pg_notify($1, 'first')`, [channel]);
    await until('the first notification', () => payloads.includes('first'));

    const [pid] = await listeners(channel);
    expect(pid).toBeDefined();
    await admin.query('select pg_terminate_backend($1)', [pid]);
    await until('the error report', () => errors.length >= 1);
    await until('the reconnection', () => listening === 2);
    const after = await listeners(channel);
    expect(after).toHaveLength(1);
    expect(after[0]).not.toBe(pid);

    await admin.query(`select pg_notify($1, 'second')`, [channel]);
    await until('the notification after the reconnection', () => payloads.includes('second'));

    await stop();
    await until('the connection to close', async () => (await listeners(channel)).length === 0);
    await admin.query(`select pg_notify($1, 'third')`, [channel]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(payloads).toEqual(['first', 'second']);
    expect(listening).toBe(2);
  });

  it('rejects when the first connection cannot be made, and leaves nothing running', async () => {
    const errors: Array<Error | undefined> = [];
    await expect(
      listenWithReconnect({
        databaseUrl: 'postgres://postgres@127.0.0.1:1/test',
        channel: 'test_listen_unreachable',
        onNotification: () => undefined,
        onError: (error) => void errors.push(error),
        retryMs: 50,
      }),
    ).rejects.toThrow(/ECONNREFUSED|connect/);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(errors).toEqual([]);
  });
});
