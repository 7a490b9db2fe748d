import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { createDatabase, type CreateDatabaseOptions } from '../../src/store/database.js';
import { DATA_DIR_LOCK_FILE, DataDirInUseError } from '../../src/store/dataDirLock.js';
import { getRequest, insertRequest } from '../../src/store/requests.repository.js';
import { testDatabaseKinds, testDatabaseUrl } from '../helpers/db.js';
import { newRequest } from './requestFixture.js';

describe('createDatabase options', () => {
  it('rejects a schema name that is not a plain identifier, and mixing both backends', async () => {
    await expect(createDatabase({ schema: 'x"; drop table requests; --' })).rejects.toThrow(/Invalid schema name/);
    await expect(createDatabase({ databaseUrl: testDatabaseUrl, dataDir: '/tmp/x' })).rejects.toThrow(/not both/);
  });
});

describe.each(testDatabaseKinds)('persistence (%s)', (kind) => {
  it('keeps committed data in its schema across close and reopen, and drops it on request', async () => {
    const schema = `test_${randomBytes(6).toString('hex')}`;
    const dataDir = kind === 'pglite' ? await mkdtemp(join(tmpdir(), 'gateway-pglite-')) : undefined;
    const options: CreateDatabaseOptions =
      kind === 'pglite' ? { dataDir: dataDir!, schema } : { databaseUrl: testDatabaseUrl, schema };
    try {
      const first = await createDatabase(options);
      expect(first.dialect).toBe(kind);
      await first.migrate();
      const request = await insertRequest(first.db, newRequest({ amountIn: 2n ** 255n }));
      await first.close();
      await first.close(); // idempotent

      const second = await createDatabase(options);
      try {
        await second.migrate(); // nothing pending
        expect(await getRequest(second.db, request.id)).toEqual(request);
        const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(second.db);
        expect(rows[0]?.schema).toBe(schema);
        await second.dropSchema();
        const after = await sql<{ n: number }>`
          select count(*)::int as n from information_schema.schemata where schema_name = ${schema}`.execute(second.db);
        expect(after.rows[0]?.n).toBe(0);
      } finally {
        await second.close();
      }
    } finally {
      if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('one process per PGlite data directory', () => {
  it('refuses a second open while the first is open, takes over the lock of a process that died, and frees it at close', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'gateway-pglite-'));
    try {
      const first = await createDatabase({ dataDir });
      try {
        const second = createDatabase({ dataDir });
        await expect(second).rejects.toBeInstanceOf(DataDirInUseError);
        await expect(second).rejects.toThrow(`in use by process ${process.pid}`);
        await first.migrate();
        await insertRequest(first.db, newRequest({}));
      } finally {
        await first.close();
      }
      // A lock left by a process that is gone (a crash): a child that exited, so its pid is free.
      const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
      await writeFile(
        join(dataDir, DATA_DIR_LOCK_FILE),
        JSON.stringify({ pid: Number(dead.stdout.toString()), hostname: hostname(), since: 'then' }),
      );
      const reopened = await createDatabase({ dataDir });
      try {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from requests`.execute(reopened.db);
        expect(rows[0]?.n).toBe(1);
      } finally {
        await reopened.close();
      }
      await expect(readFile(join(dataDir, DATA_DIR_LOCK_FILE))).rejects.toThrow(/ENOENT/);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('followerDb (pglite)', () => {
  it('reads beside the queue of db, after an open transaction ends, never inside it', async () => {
    const database = await createDatabase({});
    try {
      expect(database.followerDb).not.toBe(database.db);
      await sql`create table lane (x int)`.execute(database.db);

      // Three slow queries queued on db: the follower's read does not wait for the last two.
      const order: string[] = [];
      const queued = [1, 2, 3].map(() => sql`select pg_sleep(0.1)`.execute(database.db).then(() => order.push('db')));
      const read = sql`select 1`.execute(database.followerDb).then(() => order.push('follower'));
      await Promise.all([...queued, read]);
      expect(order.indexOf('follower')).toBeLessThanOrEqual(1);

      // A read issued during a transaction runs after it: it sees neither the rolled-back row nor runs first.
      let ended = false;
      let during: Promise<{ n: number; afterEnd: boolean }> | undefined;
      await database.db
        .transaction()
        .execute(async (trx) => {
          await sql`insert into lane values (1)`.execute(trx);
          during = sql<{ n: number }>`select count(*)::int as n from lane`
            .execute(database.followerDb)
            .then(({ rows }) => ({ n: rows[0]!.n, afterEnd: ended }));
          await sql`select pg_sleep(0.05)`.execute(trx);
          throw new Error('roll back');
        })
        .catch(() => undefined);
      ended = true;
      expect(await during).toEqual({ n: 0, afterEnd: true });
    } finally {
      await database.close();
    }
  });
});
