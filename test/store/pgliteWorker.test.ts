import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isMainThread } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { AbortedTransactionError, sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDatabase, type Database } from '../../src/store/database.js';
import { isUniqueViolation } from '../../src/store/errors.js';
import {
  createPGliteProxy,
  PGliteWorkerError,
  type CreatePGliteProxyOptions,
  type PGliteCheckpoint,
  type PGliteProxy,
} from '../../src/store/pgliteProxy.js';
import { insertRequest, insertRequests } from '../../src/store/requests.repository.js';
import type { Tables } from '../../src/store/tables.js';
import { newRequest } from './requestFixture.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function countRequests(db: Kysely<Tables>): Promise<number> {
  const { n } = await db
    .selectFrom('requests')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(n);
}

describe('PGlite in a worker thread', () => {
  let pglite: PGliteProxy;
  beforeAll(async () => {
    pglite = await createPGliteProxy();
    await pglite.query('create table items (id int primary key, note text not null)');
  });
  afterAll(async () => {
    await pglite?.close();
  });
  beforeEach(async () => {
    await pglite.query('delete from items');
  });

  it('runs off the main thread and is ready once created', () => {
    expect(isMainThread).toBe(true);
    expect(pglite.threadId).toBeGreaterThan(0);
    expect(pglite.ready).toBe(true);
    expect(pglite.closed).toBe(false);
  });

  it('returns what in-process PGlite returns: int8 number or bigint, numeric string, jsonb parsed, Date, bytes', async () => {
    const { rows, fields, affectedRows } = await pglite.query(
      `select 42::int8 as small, $1::int8 as big, 12345678901234567890.5::numeric as num,
              '{"a":[1,"x",null],"b":{"c":true}}'::jsonb as doc, '2024-01-02T03:04:05.678Z'::timestamptz as at,
              '\\x00ff'::bytea as raw, null::text as nothing`,
      [2n ** 62n + 1n],
      { rowMode: 'object' },
    );
    expect(rows).toEqual([
      {
        small: 42,
        big: 2n ** 62n + 1n,
        num: '12345678901234567890.5',
        doc: { a: [1, 'x', null], b: { c: true } },
        at: new Date('2024-01-02T03:04:05.678Z'),
        raw: new Uint8Array([0, 255]),
        nothing: null,
      },
    ]);
    expect(fields.map((field) => field.name)).toEqual(['small', 'big', 'num', 'doc', 'at', 'raw', 'nothing']);
    expect(affectedRows).toBe(0);

    const insert = await pglite.query('insert into items values (1, $1), (2, $1)', ['x']);
    expect(insert.affectedRows).toBe(2);
    const arrays = await pglite.query('select id from items order by id', [], { rowMode: 'array' });
    expect(arrays.rows).toEqual([[1], [2]]);
  });

  it('rebuilds a database error with the fields of PGlite’s DatabaseError (unique violation: 23505)', async () => {
    await pglite.query('insert into items values (1, $1)', ['first']);
    const error = await pglite.query('insert into items values ($1, $2)', [1, 'again']).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({
      message: 'duplicate key value violates unique constraint "items_pkey"',
      code: '23505',
      severity: 'ERROR',
      detail: 'Key (id)=(1) already exists.',
      constraint: 'items_pkey',
      table: 'items',
      schema: 'public',
      query: 'insert into items values ($1, $2)',
      params: [1, 'again'],
    });
    expect(isUniqueViolation(error, 'items_pkey')).toBe(true);
    expect((error as Error).stack).toContain('PGlite worker thread');

    const syntax = await pglite.query('selec 1').catch((e: unknown) => e);
    expect(syntax).toMatchObject({ code: '42601', severity: 'ERROR' });
  });

  it('makes a transaction exclusive: a query issued meanwhile waits and then sees the committed rows', async () => {
    let outsideDone = false;
    let outside: Promise<{ rows: { n: number }[] }> | undefined;
    let secondTransaction: Promise<number> | undefined;
    const result = await pglite.transaction(async (tx) => {
      await tx.query('insert into items values (1, $1)', ['in tx']);
      outside = pglite.query<{ n: number }>('select count(*)::int as n from items').then((r) => {
        outsideDone = true;
        return r;
      });
      secondTransaction = pglite.transaction(async (other) => {
        const { rows } = await other.query<{ n: number }>('select count(*)::int as n from items');
        return rows[0]!.n;
      });
      await sleep(100);
      expect(outsideDone).toBe(false);
      const inside = await tx.query<{ n: number }>('select count(*)::int as n from items');
      expect(inside.rows).toEqual([{ n: 1 }]);
      await tx.query('insert into items values (2, $1)', ['in tx']);
      return 'done';
    });
    expect(result).toBe('done');
    expect((await outside!).rows).toEqual([{ n: 2 }]);
    expect(await secondTransaction!).toBe(2);
  });

  it('forwards pg_notify to listeners at commit, never for a rolled-back transaction, until they stop', async () => {
    const heard: string[] = [];
    const stop = await pglite.listen('items_changed', (payload) => heard.push(payload));
    await pglite.transaction(async (tx) => {
      await tx.query("select pg_notify('items_changed', 'first')");
      await tx.query('select 1');
      // Not before the commit.
      expect(heard).toEqual([]);
    });
    await pglite.transaction(async (tx) => {
      await tx.query("select pg_notify('items_changed', 'never')");
      await tx.rollback();
    });
    await pglite.query("select pg_notify('items_changed', 'second')");
    await pglite.query("select pg_notify('other_channel', 'elsewhere')");
    // Notifications are posted by the worker before the answer that carries them.
    await pglite.query('select 1');
    expect(heard).toEqual(['first', 'second']);
    stop();
    await pglite.query("select pg_notify('items_changed', 'after')");
    await pglite.query('select 1');
    expect(heard).toEqual(['first', 'second']);
  });

  it('rolls back when the callback throws, and on tx.rollback()', async () => {
    const thrown = new Error('changed my mind');
    await expect(
      pglite.transaction(async (tx) => {
        await tx.query('insert into items values (1, $1)', ['gone']);
        throw thrown;
      }),
    ).rejects.toBe(thrown);

    const value = await pglite.transaction(async (tx) => {
      await tx.query('insert into items values (2, $1)', ['gone too']);
      await tx.rollback();
      expect((tx as { closed?: boolean }).closed).toBe(true);
      await expect(tx.query('select 1')).rejects.toThrow(/Transaction is closed/);
      return 7;
    });
    expect(value).toBe(7);
    expect((await pglite.query('select * from items')).rows).toEqual([]);
  });

  it('rejects the commit of a transaction in which a statement failed (25P02) and leaves nothing behind', async () => {
    await pglite.query('insert into items values (1, $1)', ['kept']);
    const error = await pglite
      .transaction(async (tx) => {
        await tx.query('insert into items values (2, $1)', ['lost']);
        await tx.query('insert into items values (1, $1)', ['duplicate']).catch(() => undefined);
      })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: '25P02' });
    expect((await pglite.query('select id from items')).rows).toEqual([{ id: 1 }]);
  });

  it('rejects what cannot cross to the worker, and stays usable', async () => {
    await expect(pglite.query('select $1::text', [() => 1])).rejects.toThrow(/could not be cloned/);
    await expect(pglite.query('select 1', [], { parsers: { 23: Number } })).rejects.toThrow(
      /does not support the query options parsers/,
    );
    expect((await pglite.query('select 1 as one')).rows).toEqual([{ one: 1 }]);
  });
});

/** What the comparisons below need of both PGlite's own `query()` and the proxy. */
interface Queryable {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
  transaction<T>(callback: (tx: { query: Queryable['query']; rollback(): Promise<void> }) => Promise<T>): Promise<T>;
}

describe('the worker’s one-call statements give what PGlite’s query() gives', () => {
  let proxy: PGliteProxy;
  let direct: PGlite;
  beforeAll(async () => {
    [proxy, direct] = await Promise.all([createPGliteProxy(), PGlite.create()]);
  });
  afterAll(async () => {
    await Promise.all([proxy?.close(), direct?.close()]);
  });

  /** Runs `steps` on in-process PGlite and on the proxy, and expects the same outcome from both. */
  async function expectSame(steps: (db: Queryable) => Promise<unknown>): Promise<unknown> {
    const viaQuery = await steps(direct);
    const viaWorker = await steps(proxy);
    expect(viaWorker).toEqual(viaQuery);
    return viaWorker;
  }

  /**
   * A database error's fields, or the message of another error. The worker's statements are named: a message
   * that names the statement ("prepared statement \"gateway_4\" requires 1") is compared without the name.
   */
  const outcome = (work: Promise<unknown>) =>
    work.then(
      (result) => ({ result }),
      (error: Record<string, unknown>) => ({
        ...pick(error, ['code', 'severity', 'position', 'detail', 'constraint', 'table', 'column', 'query']),
        message: String(error.message).replace(/prepared statement "[^"]*"/, 'prepared statement'),
      }),
    );

  it('stores every kind of parameter as the same value', async () => {
    const stored = await expectSame(async (db) => {
      await db.query(
        `create table typed (id serial primary key, n int4, big int8, amount numeric, flag bool, label text,
                             at timestamptz, local timestamp, day date, doc jsonb, raw bytea, nums int8[], words text[])`,
      );
      const insert = `insert into typed (n, big, amount, flag, label, at, local, day, doc, raw, nums, words)
                      values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`;
      const at = new Date('2024-01-02T03:04:05.678Z');
      const rows: unknown[][] = [
        [
          1,
          2n ** 62n + 1n,
          12345678901234567890n,
          true,
          'plain',
          at,
          at,
          at,
          { a: [1, 'x', null], big: 5n },
          new Uint8Array([0, 1, 255]),
          [1n, 2n],
          ['a', 'b"c\\d'],
        ],
        [
          null,
          '7',
          '1.5',
          'yes',
          42,
          1_700_000_000_000,
          '2024-01-02 03:04:05',
          '2024-01-02',
          '{"s":1}',
          null,
          [],
          ['x,y', null],
        ],
        [
          undefined,
          -3,
          0.25,
          'false',
          true,
          '2024-01-02T03:04:05+02:00',
          at,
          at,
          [1, 'two'],
          new Uint8Array(),
          ['3'],
          [],
        ],
        [2, 0n, '-0.5', false, at, at, at, at, '"a JSON string"', new Uint8Array([7]), null, ['é ☃']],
        // Longer than the worker's first Bind buffer (64 KiB) and than the largest it keeps (1 MiB, at three bytes a
        // character reserved), with characters of 2, 3 and 4 UTF-8 bytes.
        [3, 1n, '2', true, `${'é☃🚀'.repeat(12_000)}end`, at, at, at, { long: 'x'.repeat(400_000) }, null, [], ['🚀']],
      ];
      for (const params of rows) await db.query(insert, params);
      const asText = await db.query('select typed::text as row from typed order by id');
      const parsed = await db.query('select * from typed order by id');
      return { asText: asText.rows, parsed: parsed.rows };
    });
    expect((stored as { asText: unknown[] }).asText).toHaveLength(5);
  });

  it('fails as PGlite fails (parse, bind, execute and serializer errors), and the next statement runs', async () => {
    await expectSame(async (db) => {
      await db.query('create table keyed (id int primary key, note text)');
      await db.query('insert into keyed values ($1, $2)', [1, 'first']);
      const failures = [
        await outcome(db.query('selec $1', [1])),
        await outcome(db.query('select $1::int4 as n', ['not a number'])),
        await outcome(db.query('insert into keyed values ($1, $2)', [1, 'again'])),
        await outcome(db.query('select 1/0')),
        await outcome(db.query('select $1::bool as b', [2])),
        await outcome(db.query('select $1::int4 as n', [1, 2])),
      ];
      const after = await db.query('select id, note from keyed where id = $1', [1]);
      return { failures, after: after.rows };
    });
  });

  it('reads parameter types again after a schema change, and after a rollback that undid one', async () => {
    await expectSame(async (db) => {
      const at = new Date('2024-05-06T07:08:09.010Z');
      await db.query('create table changing (id serial primary key, v text, w text)');
      await db.query('insert into changing (v) values ($1)', [at]);
      await db.query('alter table changing alter column v type timestamptz using v::timestamptz');
      // Typed as text, this number would not be a valid timestamptz.
      await db.query('insert into changing (v) values ($1)', [at.getTime()]);
      await db.transaction(async (tx) => {
        await tx.query('alter table changing alter column w type jsonb using to_jsonb(w)');
        await tx.query('insert into changing (w) values ($1)', [at]);
        await tx.rollback();
      });
      // Typed as jsonb, the date would be stored in quotes.
      await db.query('insert into changing (w) values ($1)', [at]);
      return (await db.query('select v::text as v, w from changing order by id')).rows;
    });
  });

  it('closes the statements it prepared once it forgets them: beyond 256 or 128 KiB of text, after a schema change, not after ANALYZE or VACUUM', async () => {
    const prepared = async () =>
      (
        await proxy.query<{ count: number; text: number }>(
          'select count(*)::int as count, coalesce(sum(length(statement)), 0)::int as text from pg_prepared_statements',
        )
      ).rows[0]!;
    for (let i = 0; i < 300; i++) await proxy.query(`select ${i} as n`);
    expect((await prepared()).count).toBeLessThanOrEqual(256);
    const padding = '-'.repeat(40_000);
    for (let i = 0; i < 6; i++) await proxy.query(`select ${i} as n -- ${padding}`);
    // The limit, plus the statement that went over it until the next one is prepared.
    expect((await prepared()).text).toBeLessThanOrEqual(128 * 1024 + 40_100);
    await proxy.query('create table forgetting (id int)');
    await proxy.query('select 1 as one');
    // `select 1 as one` and the count itself.
    expect((await prepared()).count).toBe(2);
    // An ANALYZE changes statistics, not what a statement takes or returns: the statements stay prepared.
    await proxy.query('insert into forgetting select generate_series(1, 100)');
    await proxy.query('analyze forgetting');
    expect((await proxy.query<{ n: number }>('select count(*)::int as n from forgetting')).rows).toEqual([{ n: 100 }]);
    expect((await prepared()).count).toBe(5);
    // A VACUUM changes storage only (the gateway runs one as rows die: tableVacuum.ts).
    await proxy.query('delete from forgetting where id > 50');
    await proxy.query('vacuum forgetting');
    expect((await proxy.query<{ n: number }>('select count(*)::int as n from forgetting')).rows).toEqual([{ n: 50 }]);
    expect((await prepared()).count).toBe(7);
  });

  it('plans an INSERT no value can change once, and every other statement with its own values, whatever came before', async () => {
    await proxy.query('create table planned (id int primary key, status text not null)');
    await proxy.query(`create index planned_waiting on planned (id) where status = 'waiting'`);
    const insert = 'insert into planned (id, status) values ($1, $2)';
    const select = 'select count(*)::int as n from planned where status = $1 and id > $2';
    const insertInTransaction = 'insert into planned (status, id) values ($1, $2)';
    const plans = async (db: Pick<PGliteProxy, 'query'> = proxy) =>
      Object.fromEntries(
        (
          await db.query<{ statement: string; generic: number; custom: number }>(
            'select statement, generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements',
          )
        ).rows.map(({ statement, ...counts }) => [statement, counts]),
      );
    let id = 0;
    for (let i = 0; i < 6; i++) {
      await proxy.query(insert, [++id, 'waiting']);
      await proxy.query(select, ['waiting', 0]);
    }
    // A statement that fails after the mode changed for it: the switch to generic is undone with the insert, the
    // switch to custom holds (a transaction of its own), and the worker knows which.
    await proxy.query(insert, [++id, 'waiting']);
    await expect(proxy.query(select, ['waiting', 'not a number'])).rejects.toMatchObject({ code: '22P02' });
    await proxy.query(insert, [++id, 'waiting']);
    await proxy.query(select, ['waiting', 0]);
    await expect(proxy.query(insert, [1, 'waiting'])).rejects.toMatchObject({ code: '23505' });
    await proxy.query(select, ['waiting', 0]);
    expect(await plans()).toMatchObject({
      [insert]: { generic: 9, custom: 0 },
      [select]: { generic: 0, custom: 8 },
    });
    // Inside a transaction every statement is planned with its values; a rollback undoes what changed inside
    // (and the worker prepares its statements again after one).
    await proxy.query(insert, [++id, 'done']);
    await proxy
      .transaction(async (tx) => {
        await tx.query(insertInTransaction, ['waiting', ++id]);
        await tx.query(select, ['waiting', 0]);
        expect(await plans(tx)).toMatchObject({
          [insert]: { generic: 10, custom: 0 },
          [insertInTransaction]: { generic: 0, custom: 1 },
          [select]: { generic: 0, custom: 9 },
        });
        await tx.rollback();
      })
      .catch(() => undefined);
    await proxy.query(select, ['waiting', 0]);
    expect(await plans()).toMatchObject({ [select]: { generic: 0, custom: 1 } });
    // Each plan of the select is its own: it takes the partial index only when its value lets it.
    const explain = async (status: string) =>
      (await proxy.query<{ 'QUERY PLAN': string }>(`explain ${select}`, [status, 0])).rows
        .map((row) => row['QUERY PLAN'])
        .join('\n');
    await proxy.query(`set enable_seqscan = off`);
    expect(await explain('waiting')).toContain('planned_waiting');
    expect(await explain('done')).not.toContain('planned_waiting');
    await proxy.query(`set enable_seqscan = on`);
    expect((await proxy.query(select, ['waiting', 0])).rows).toEqual([{ n: 8 }]);
    // What cannot run after another statement of its implicit transaction (a VACUUM) still runs after the insert.
    await proxy.query(insert, [++id, 'done']);
    await proxy.query('vacuum planned');
    await proxy.query(insert, [++id, 'done']);
    await proxy.query('analyze planned');
    expect(await plans()).toMatchObject({ [insert]: { generic: 2, custom: 0 } });
  });

  it('keeps the transaction exclusive and aborted after an error inside it', async () => {
    await expectSame(async (db) => {
      await db.query('create table counted (id int primary key)');
      const aborted = await db
        .transaction(async (tx) => {
          await tx.query('insert into counted values ($1)', [1]);
          const duplicate = await outcome(tx.query('insert into counted values ($1)', [1]));
          const next = await outcome(tx.query('select count(*)::int as n from counted'));
          return { duplicate, next };
        })
        .then(
          (inside) => ({ inside }),
          (error: Record<string, unknown>) => pick(error, ['code']),
        );
      return { aborted, rows: (await db.query('select count(*)::int as n from counted')).rows };
    });
  });
});

function pick(source: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => source[key] !== undefined).map((key) => [key, source[key]]));
}

describe('createDatabase on PGlite (kysely through the worker)', () => {
  let database: Database;
  beforeAll(async () => {
    database = await createDatabase({});
    await database.migrate();
  });
  afterAll(async () => {
    await database?.close();
  });

  it('keeps the unique violation the store relies on', async () => {
    const request = newRequest();
    await insertRequest(database.db, request);
    const error = await insertRequest(database.db, { ...request, orderId: newRequest().orderId }).catch(
      (e: unknown) => e,
    );
    expect(isUniqueViolation(error, 'requests_pkey')).toBe(true);
  });

  it('plans the quote’s insert once, one row or a batch (values or one jsonb document)', async () => {
    for (let i = 0; i < 3; i++) await insertRequests(database.db, [newRequest()]);
    for (let i = 0; i < 3; i++)
      await insertRequests(
        database.db,
        Array.from({ length: 12 }, () => newRequest()),
      );
    const { rows } = await sql<{ statement: string; generic: number; custom: number }>`
      select statement, generic_plans::int as generic, custom_plans::int as custom from pg_prepared_statements
      where statement like 'insert into requests %'`.execute(database.db);
    expect(rows.map((row) => row.statement.includes('jsonb_populate_recordset')).sort()).toEqual([false, true]);
    for (const row of rows) expect(row).toMatchObject({ generic: 3, custom: 0 });
  });

  it('serialises a kysely transaction with other queries, and rolls back on error', async () => {
    const before = await countRequests(database.db);
    let seen: number | undefined;
    await database.db.transaction().execute(async (trx) => {
      await insertRequest(trx, newRequest());
      void countRequests(database.db).then((n) => (seen = n));
      await sleep(50);
      expect(seen).toBeUndefined();
    });
    await sleep(0);
    await expect.poll(() => seen).toBe(before + 1);

    await expect(
      database.db.transaction().execute(async (trx) => {
        await insertRequest(trx, newRequest());
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await countRequests(database.db)).toBe(before + 1);

    const aborted = await database.db
      .transaction()
      .execute(async (trx) => {
        await sql`select 1/0`.execute(trx).catch(() => undefined);
      })
      .catch((e: unknown) => e);
    expect(aborted).toBeInstanceOf(AbortedTransactionError);
  });
});

/** A temporary directory for the enclosing `describe`, made before its tests and removed after them. */
function scratchDirectory(prefix: string): () => string {
  let directory: string | undefined;
  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), prefix));
  });
  afterAll(async () => {
    if (directory !== undefined) await rm(directory, { recursive: true, force: true });
  });
  return () => {
    if (directory === undefined) throw new Error('scratchDirectory: used outside its describe block');
    return directory;
  };
}

describe('PGlite worker lifecycle', () => {
  const scratch = scratchDirectory('gateway-pglite-worker-');

  /** A stand-in worker script: says it is ready, then does `onMessage` with the first request. */
  async function standIn(name: string, onMessage: string): Promise<URL> {
    const file = join(scratch(), `${name}.mjs`);
    await writeFile(
      file,
      `import { parentPort } from 'node:worker_threads';
       parentPort.postMessage({ id: 0, ok: true });
       parentPort.on('message', () => { ${onMessage} });`,
    );
    return pathToFileURL(file);
  }

  it('keeps data in dataDir across close and reopen, and rejects queries after close clearly', async () => {
    const dataDir = join(scratch(), 'data');
    const first = await createPGliteProxy({ dataDir });
    await first.query('create table kept (id int8 primary key, doc jsonb)');
    await first.transaction(async (tx) => {
      await tx.query('insert into kept values ($1, $2)', [2n ** 60n, '{"k":[1]}']);
    });
    // Sent before close: it still completes.
    const last = first.query('insert into kept values (1, null)');
    await first.close();
    await last;
    await first.close(); // idempotent
    expect(first.closed).toBe(true);
    await expect(first.query('select 1')).rejects.toThrow(PGliteWorkerError);
    await expect(first.query('select 1')).rejects.toThrow('PGlite is closed');
    await expect(first.transaction(async () => 1)).rejects.toThrow('PGlite is closed');

    const second = await createPGliteProxy({ dataDir });
    try {
      const { rows } = await second.query('select id, doc from kept order by id');
      expect(rows).toEqual([
        { id: 1, doc: null },
        { id: 2n ** 60n, doc: { k: [1] } },
      ]);
    } finally {
      await second.close();
    }
  });

  it('rejects creation with PGlite’s own error when it cannot start', async () => {
    const file = join(scratch(), 'not-a-directory');
    await writeFile(file, 'x');
    await expect(createPGliteProxy({ dataDir: join(file, 'data') })).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('rejects pending and later queries when the worker exits, instead of hanging', async () => {
    const proxy = await createPGliteProxy({ workerScript: await standIn('exits', 'process.exit(7);') });
    await expect(proxy.query('select 1')).rejects.toThrow(/PGlite worker thread exited unexpectedly \(exit code 7\)/);
    expect(proxy.closed).toBe(true);
    await expect(proxy.query('select 1')).rejects.toThrow(PGliteWorkerError);
    await proxy.close();
  });

  it('rejects a transaction when the worker fails inside it', async () => {
    const proxy = await createPGliteProxy({ workerScript: await standIn('throws', "throw new Error('boom');") });
    await expect(proxy.transaction(async () => 1)).rejects.toThrow(/PGlite worker thread failed: boom/);
    await expect(proxy.query('select 1')).rejects.toThrow(/boom/);
    await proxy.close();
  });
});

describe('PGlite checkpoints (single-user PostgreSQL has no checkpointer of its own)', () => {
  const scratch = scratchDirectory('gateway-pglite-checkpoint-');

  interface Position {
    checkpointLsn: string;
    /** The WAL segment file of the last checkpoint's redo point. */
    redoFile: string;
    /** WAL bytes written since that redo point. */
    sinceRedo: number;
  }

  async function position(proxy: PGliteProxy): Promise<Position> {
    const { rows } = await proxy.query<Position>(
      `select checkpoint_lsn::text as "checkpointLsn", pg_walfile_name(redo_lsn) as "redoFile",
              pg_wal_lsn_diff(pg_current_wal_insert_lsn(), redo_lsn)::float8 as "sinceRedo"
         from pg_control_checkpoint()`,
    );
    return rows[0]!;
  }

  /** Writes about 2 KB of WAL per row (random hex does not compress); returns the WAL bytes written. */
  async function writeWal(proxy: PGliteProxy, rows: number): Promise<number> {
    const {
      rows: [start],
    } = await proxy.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn');
    await proxy.query(
      `insert into filler (v) select string_agg(md5(random()::text), '') from generate_series(1, 60), generate_series(1, ${rows}) g group by g`,
    );
    const {
      rows: [written],
    } = await proxy.query<{ bytes: number }>(
      'select pg_wal_lsn_diff(pg_current_wal_insert_lsn(), $1::pg_lsn)::float8 as bytes',
      [start!.lsn],
    );
    return written!.bytes;
  }

  /** A PGlite in `scratch()/<name>`, or in memory when `name` is null. */
  async function open(
    name: string | null,
    checkpoint: CreatePGliteProxyOptions['checkpoint'],
  ): Promise<{ proxy: PGliteProxy; dataDir: string; reported: PGliteCheckpoint[] }> {
    const dataDir = join(scratch(), name ?? 'unused');
    const reported: PGliteCheckpoint[] = [];
    const onCheckpoint = (done: PGliteCheckpoint) => reported.push(done);
    const proxy = await createPGliteProxy(
      name === null ? { checkpoint, onCheckpoint } : { dataDir, checkpoint, onCheckpoint },
    );
    await proxy.query('create table filler (id serial primary key, v text not null)');
    return { proxy, dataDir, reported };
  }

  async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
    for (let waited = 0; waited < 10_000; waited += 25) {
      if (await check()) return;
      await sleep(25);
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  it('checkpoints once the WAL since the last checkpoint reaches the limit, and the older segments go', async () => {
    const { proxy, dataDir, reported } = await open('volume', {
      pollMs: 20,
      walBytes: 4 * 1024 * 1024,
      intervalMs: 3_600_000,
    });
    try {
      const before = await position(proxy);
      expect(await writeWal(proxy, 10_000)).toBeGreaterThan(16 * 1024 * 1024);
      await waitFor(async () => (await position(proxy)).checkpointLsn !== before.checkpointLsn, 'a checkpoint');
      const after = await position(proxy);
      expect(after.sinceRedo).toBeLessThan(4 * 1024 * 1024);
      // Each is reported, for the server's log: why it ran, the WAL it covered, how long it held the database.
      await waitFor(async () => reported.length > 0, 'the checkpoint reported');
      expect(reported[0]).toEqual({ reason: 'wal', walBytes: expect.any(Number), ms: expect.any(Number) });
      expect(reported[0]!.walBytes).toBeGreaterThanOrEqual(4 * 1024 * 1024);
      // The segment the old redo point was in is recycled or removed: pg_wal no longer keeps everything.
      expect(after.redoFile).not.toBe(before.redoFile);
      expect(await readdir(join(dataDir, 'pg_wal'))).not.toContain(before.redoFile);
    } finally {
      await proxy.close();
    }
  });

  it('checkpoints after the interval when something was written, and never for an idle database (in memory too)', async () => {
    const { proxy, reported } = await open(null, { pollMs: 20, walBytes: 2 ** 40, intervalMs: 300 });
    try {
      // The position is read before the write: the checkpoint may follow the write within one 20 ms poll.
      const before = await position(proxy);
      await writeWal(proxy, 20);
      await waitFor(async () => (await position(proxy)).checkpointLsn !== before.checkpointLsn, 'a timed checkpoint');
      await waitFor(async () => reported.length > 0, 'the checkpoint reported');
      expect(reported[0]).toMatchObject({ reason: 'time' });
      // On a loaded machine the writes can outlast the interval, so a first checkpoint may come between them and a
      // second for the writes after it: idle is from one interval and a few polls after the last write.
      await sleep(400);
      const idle = await position(proxy);
      await sleep(1_000);
      expect((await position(proxy)).checkpointLsn).toBe(idle.checkpointLsn);
    } finally {
      await proxy.close();
    }
  });

  it('leaves the WAL alone below both limits (PGlite itself never checkpoints)', async () => {
    const { proxy, dataDir } = await open('below', { pollMs: 20, walBytes: 2 ** 40, intervalMs: 3_600_000 });
    try {
      const before = await position(proxy);
      expect(await writeWal(proxy, 10_000)).toBeGreaterThan(16 * 1024 * 1024);
      await sleep(200);
      const after = await position(proxy);
      expect(after.checkpointLsn).toBe(before.checkpointLsn);
      expect(await readdir(join(dataDir, 'pg_wal'))).toContain(before.redoFile);
    } finally {
      await proxy.close();
    }
  });
});
