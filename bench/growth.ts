/**
 * `npm run bench:growth`: does the gateway stay as fast with a million stored requests as with none? Runs the
 * quote benchmark (`POST /quote/v2` at 1 and 16 clients), three request listings the explorer sends
 * (`GET /requests/v3?user=…` of the bench's user, the search box's `term=…` with a typical user's address, and the
 * unfiltered newest page) and the listings of the filters on values stored per request (a narrow fill-time window, a
 * narrow origin-block range, large app fees, a refund failure, a feature, and the `amountUsd` sort) twice: against a
 * fresh database, then against one holding `--rows` more requests (default 1,000,000), and prints each figure empty and
 * filled, their ratio, and the verdict "quote p50 within 10%".
 *
 * The quote's p50 moves by ~5% between two gateways started one after the other on the same database, about half
 * the tolerance, so one empty run against one filled run could pass or fail on that alone. `--rounds` (default 3)
 * measures the quotes again in further rounds, each starting a fresh gateway on both databases in turn (filled
 * first in even rounds, so a drift of the machine's speed falls on both sides); the verdict takes the median of the
 * rounds' ratios. Every round's quotes stay in its table, so the "empty" one holds a few ten thousand rows by the
 * last round.
 *
 *   npm run bench:growth -- [--rows 1000000] [--batch 50000] [--users 20000] [--duration 8] [--warmup 2]
 *                           [--concurrency 1,16] [--list-concurrency 1] [--rounds 3] [--explain]
 *
 * The filled database is prepared before its gateway starts (the gateway owns PGlite once it runs): a fresh data
 * directory (PGlite) or schema (PostgreSQL, when `DATABASE_URL` is set), migrated, then filled by `insert … select …
 * from generate_series` in batches, each row a copy of a real quote's row taken from the empty run with a new id,
 * order id and hashes, a terminal status (success, 1 in 20 refund, 1 in 20 failure whose refund failed too: the solver
 * never picks them up), an input value spread over 0 to 1,000 USD, a deposit block rising with `created_at` (one
 * block a second), a fill time of 2 to 62 s on the successes, app fees on 1 row in 10, one of `--users` users (1 row in 1,000 is the benchmark's own user, the one the listing asks
 * for) and a `created_at` spread over the last 90 days. Only `requests` is filled: the history's other tables (events,
 * deposits, outgoing transactions) stay empty. `VACUUM` and `ANALYZE` run after the fill (each timed), as PostgreSQL's
 * autovacuum would (and so that it does not run during the measurements); PGlite has no autovacuum (the gateway
 * analyzes its tables there as they grow, and vacuums nothing). Both gateways run on a fresh
 * devnet. Everything the run made is removed at the end (directories, schemas).
 *
 * `--explain` prints the plan of each listing's query against the filled table (EXPLAIN ANALYZE, as the gateway
 * sends it: the statement logged by the filled run is not available, so the plans are of equivalent SQL).
 *
 * Exit status 1 on any failed request, or when the quote's p50 at any concurrency grows by more than 10%.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql, type RawBuilder } from 'kysely';
import { parseEther, zeroAddress, type Address } from 'viem';
import { createDatabase, type Database } from '../src/store/database.js';
import { machineDescription, positiveInteger, positiveNumber, runBench, UsageError } from './cli.js';
import { runLoad, type BenchRequest, type RequestFactory } from './load.js';
import { countOf, errorReport, fixed, formatTable, progressLine, summarize, type ScenarioRow } from './report.js';
import { processMemoryMiB, startBenchServer, type BenchServer } from './serverProcess.js';
import { windowCpu } from './windowCpu.js';

const ORIGIN_CHAIN_ID = 31337;
const DESTINATION_CHAIN_ID = 31338;
/** The issue's figure: quote p50 on the filled table within 10% of the empty one. */
const QUOTE_P50_TOLERANCE = 0.1;
/** The explorer's page size. */
const PAGE_SIZE = 20;
const DAY_MS = 86_400_000;
const SPREAD_MS = 90 * DAY_MS;
/** One row in this many belongs to the benchmark's user (the one the listings ask for). */
const BENCH_USER_EVERY = 1_000;
const AMOUNT_STEPS = 4_000_000;

interface GrowthOptions {
  rows: number;
  batch: number;
  users: number;
  durationSeconds: number;
  warmupSeconds: number;
  concurrencies: number[];
  listConcurrency: number;
  rounds: number;
  explain: boolean;
}

const USAGE =
  'usage: npm run bench:growth -- [--rows 1000000] [--batch 50000] [--users 20000] [--duration 8] [--warmup 2] [--concurrency 1,16] [--list-concurrency 1] [--rounds 3] [--explain]';

function parseOptions(argv: string[]): GrowthOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      rows: { type: 'string', default: '1000000' },
      batch: { type: 'string', default: '50000' },
      users: { type: 'string', default: '20000' },
      duration: { type: 'string', default: '8' },
      warmup: { type: 'string', default: '2' },
      concurrency: { type: 'string', default: '1,16' },
      'list-concurrency': { type: 'string', default: '1' },
      rounds: { type: 'string', default: '3' },
      explain: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) throw new UsageError('');
  return {
    rows: positiveInteger('--rows', values.rows),
    batch: positiveInteger('--batch', values.batch),
    users: positiveInteger('--users', values.users),
    durationSeconds: positiveNumber('--duration', values.duration),
    warmupSeconds: positiveNumber('--warmup', values.warmup, true),
    concurrencies: values.concurrency.split(',').map((part) => positiveInteger('--concurrency', part)),
    listConcurrency: positiveInteger('--list-concurrency', values['list-concurrency']),
    rounds: positiveInteger('--rounds', values.rounds),
    explain: values.explain,
  };
}

/** Where one phase's gateway keeps its data: a PGlite directory or a PostgreSQL schema, made for this run. */
interface Store {
  /** Environment of the bench server for this store. */
  env: Record<string, string>;
  open(): Promise<Database>;
  /** Removes the directory or drops the schema. */
  remove(): Promise<void>;
}

function newStore(label: string): Store {
  const databaseUrl = process.env.DATABASE_URL || undefined;
  if (databaseUrl === undefined) {
    const dataDir = mkdtempSync(join(tmpdir(), `gateway-growth-${label}-`));
    return {
      env: { GATEWAY_DATA_DIR: dataDir },
      // The gateway reads GATEWAY_PGLITE_SHARED_BUFFERS from the environment it inherits; the bench's own opens
      // (the fill, `--explain`) use the same pool size.
      open: () =>
        createDatabase({ dataDir, pgliteSharedBuffers: process.env.GATEWAY_PGLITE_SHARED_BUFFERS || undefined }),
      remove: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const schema = `bench_growth_${label}_${Date.now().toString(36)}_${process.pid}`;
  return {
    env: { GATEWAY_DATABASE_SCHEMA: schema },
    open: () => createDatabase({ databaseUrl, schema }),
    async remove() {
      const database = await createDatabase({ databaseUrl, schema });
      try {
        await database.dropSchema();
      } finally {
        await database.close();
      }
    },
  };
}

/** The i-th of AMOUNT_STEPS evenly spaced amounts in [0.01, 0.05) ETH. */
const amountOf = (index: number) =>
  parseEther('0.01') + (parseEther('0.04') * BigInt(index % AMOUNT_STEPS)) / BigInt(AMOUNT_STEPS);

function quoteRequests(user: Address): RequestFactory {
  return (index) => ({
    method: 'POST',
    path: '/quote/v2',
    body: JSON.stringify({
      user,
      originChainId: ORIGIN_CHAIN_ID,
      destinationChainId: DESTINATION_CHAIN_ID,
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: amountOf(index).toString(),
      tradeType: 'EXACT_INPUT',
    }),
  });
}

/** The deposit block of a filled row created at `createdAt` (ms): one block a second since the spread began. */
const blockAt = (createdAt: number, now: number) => Math.floor((createdAt - (now - SPREAD_MS)) / 1000);

/**
 * The filter listings over values stored per request, each narrow enough that walking the newest rows would read
 * most of the table to fill a page: a one-second fill-time window (1 success in 60), an origin-block range of ten
 * minutes a month back, app fees over 990 USD (1 row in 1,000), a refund failure (1 row in 20), a feature (1 row
 * in 10), and the whole table sorted by `amountUsd`.
 */
function filterListings(now: number): Array<[string, BenchRequest]> {
  const list = (query: string): BenchRequest => ({ method: 'GET', path: `/requests/v3?limit=${PAGE_SIZE}&${query}` });
  const fromBlock = blockAt(now - 30 * DAY_MS, now);
  return [
    ['list fillTime', list('fillTimeMin=30&fillTimeMax=30.999')],
    ['list blocks', list(`startBlock=${fromBlock}&endBlock=${fromBlock + 600}`)],
    ['list appFees', list('appFeesAmountUsdMin=990')],
    ['list refundFail', list('refundFailReason=MANUAL_REFUND_REQUIRED')],
    ['list features', list('features=app_fees')],
    ['list amountUsd', list('sortBy=amountUsd&sortDirection=desc')],
  ];
}

/** The WHERE (and ORDER BY, when not the newest first) the store sends for each of `filterListings`. */
function filterQueries(now: number): Array<[string, string, string?]> {
  const fromBlock = blockAt(now - 30 * DAY_MS, now);
  return [
    ['list fillTime', 'fill_time_ms >= 30000 and fill_time_ms <= 30999'],
    ['list blocks', `origin_block >= ${fromBlock} and origin_block <= ${fromBlock + 600}`],
    ['list appFees', 'app_fees_usd_micros >= 990000000::numeric'],
    ['list refundFail', `refund_fail_reason = 'MANUAL_REFUND_REQUIRED'`],
    ['list features', 'app_fees_usd_micros is not null'],
    ['list amountUsd', '', 'volume_usd_micros desc, id desc'],
  ];
}

/** A user of the filled rows (not the bench's): a few dozen requests spread over the 90 days. */
const typicalUser = (users: number) => `0x${(65536 + (users >> 1) + 1).toString(16).padStart(40, '0')}`;

/** Another user of the filled rows, as many requests as `typicalUser`. */
const otherUser = (users: number) => `0x${(65536 + (users >> 1) + 2).toString(16).padStart(40, '0')}`;

/**
 * A typical `filters`: two users' requests, the second's without its refunds (two OR-ed groups, each on the user's
 * index, one with a negation), URL-encoded.
 */
const groupsOf = (users: number) =>
  encodeURIComponent(
    JSON.stringify([{ user: typicalUser(users) }, { user: otherUser(users), 'not:status': 'refund' }]),
  );

/**
 * The listings measured, as the explorer sends them: the bench user's history (its newest rows are its own quotes
 * of this run), the search box (`term`) with a typical user's address (rows only in the filled table, spread
 * over 90 days), and the unfiltered newest page (the explorer's home).
 */
function listings(user: Address, options: GrowthOptions): Array<[string, BenchRequest]> {
  return [
    ['list user', { method: 'GET', path: `/requests/v3?limit=${PAGE_SIZE}&user=${user.toLowerCase()}` }],
    ['list term', { method: 'GET', path: `/requests/v3?limit=${PAGE_SIZE}&term=${typicalUser(options.users)}` }],
    ['list newest', { method: 'GET', path: `/requests/v3?limit=${PAGE_SIZE}` }],
    ['list groups', { method: 'GET', path: `/requests/v3?limit=${PAGE_SIZE}&filters=${groupsOf(options.users)}` }],
    ...filterListings(Date.now()),
  ];
}

interface PhaseResult {
  rows: ScenarioRow[];
  /** Rows in `requests` when the phase's measurements ended. */
  tableRows: number | null;
  rssMiB: number | null;
}

async function measure(
  server: BenchServer,
  scenario: string,
  request: RequestFactory,
  concurrency: number,
  options: GrowthOptions,
): Promise<ScenarioRow> {
  const sample = request(0);
  const clientBefore = process.cpuUsage();
  const startedAt = process.hrtime.bigint();
  const window = windowCpu(server.info.pid);
  const result = await runLoad({
    baseUrl: server.info.url,
    concurrency,
    warmupSeconds: options.warmupSeconds,
    durationSeconds: options.durationSeconds,
    nextRequest: request,
    onWindow: window.onWindow,
  });
  const elapsed = Number(process.hrtime.bigint() - startedAt) / 1e9;
  const clientCpu = process.cpuUsage(clientBefore);
  const row: ScenarioRow = {
    scenario,
    endpoint: `${sample.method} ${sample.path}`,
    result,
    serverCores: window.result()?.cores ?? null,
    clientCores: (clientCpu.user + clientCpu.system) / 1e6 / elapsed,
  };
  console.error(progressLine(summarize(row)));
  return row;
}

/**
 * Starts a gateway on `store`, runs the quotes then (unless `quotesOnly`, the later rounds) the listings, so the
 * user has its quotes, and stops it.
 */
async function runPhase(label: string, store: Store, options: GrowthOptions, quotesOnly = false): Promise<PhaseResult> {
  console.error(`\n[${label}] starting the devnet and the gateway...`);
  const server = await startBenchServer({ name: `growth_${label.replace(/\W+/g, '_')}`, env: store.env });
  const stopOnInterrupt = () => void server.stop().then(() => process.exit(130));
  process.once('SIGINT', stopOnInterrupt);
  try {
    console.error(`[${label}] gateway on ${server.info.database}`);
    const user = server.info.descriptor.accounts[0]?.address;
    if (!user) throw new Error('the devnet descriptor has no funded test account');
    const rows: ScenarioRow[] = [];
    for (const concurrency of options.concurrencies)
      rows.push(await measure(server, 'quote', quoteRequests(user), concurrency, options));
    if (!quotesOnly)
      for (const [name, request] of listings(user, options))
        rows.push(await measure(server, name, () => request, options.listConcurrency, options));
    return { rows, tableRows: null, rssMiB: processMemoryMiB(server.info.pid)?.rss ?? null };
  } finally {
    process.removeListener('SIGINT', stopOnInterrupt);
    await server.stop();
  }
}

async function countRequests(store: Store): Promise<number> {
  const database = await store.open();
  try {
    const { rows } = await sql<{ n: string }>`select count(*)::text as n from requests`.execute(database.db);
    return Number(rows[0]?.n ?? Number.NaN);
  } finally {
    await database.close();
  }
}

/** The newest row of the empty run (a real quote of the bench user), as JSON text. */
async function templateRow(store: Store): Promise<string> {
  const database = await store.open();
  try {
    const { rows } = await sql<{ row: string }>`
      select row_to_json(r)::text as row from requests r order by created_at desc limit 1`.execute(database.db);
    const row = rows[0]?.row;
    if (row === undefined) throw new Error('the empty run left no request to copy');
    return row;
  } finally {
    await database.close();
  }
}

/** Migrates a fresh store and fills `requests` with `options.rows` terminal requests copied from `template`. */
async function fillStore(store: Store, template: string, options: GrowthOptions): Promise<void> {
  const database = await store.open();
  const { db } = database;
  try {
    await database.migrate();
    const templateId = '0xgrowth-template';
    await sql`insert into requests select * from json_populate_record(null::requests, ${template}::json)`.execute(db);
    await sql`update requests set id = ${templateId} where id <> ${templateId}`.execute(db);
    const columns = await sql<{ name: string }>`
      select column_name as name from information_schema.columns
      where table_name = 'requests' and table_schema = current_schema() order by ordinal_position`.execute(db);
    const now = Date.now();
    // Every column is the template's unless named here; `s.g` is the row number, `s.c` its created_at.
    const hex64 = (salt: string) => `'0x' || md5('${salt}' || s.g) || md5('${salt}2' || s.g)`;
    const address = `case when s.g % ${BENCH_USER_EVERY} = 0 then t.user_address else '0x' || lpad(to_hex(65536 + s.g % ${options.users}), 40, '0') end`;
    const overrides: Record<string, string> = {
      id: hex64('id'),
      order_id: hex64('order'),
      status: `case s.g % 20 when 0 then 'refund' when 1 then 'failure' else 'success' end`,
      // A failure is final only when its refund failed too; otherwise the solver's recovery would try to refund it
      // at the next start (and find no deposit recorded).
      fail_reason: `case s.g % 20 when 0 then 'ORDER_EXPIRED' when 1 then 'TRANSACTION_REVERTED' else null end`,
      refund_fail_reason: `case s.g % 20 when 1 then 'MANUAL_REFUND_REQUIRED' else null end`,
      volume_usd_micros: `((s.g::bigint * 48271) % 1000000007)::numeric`,
      origin_block: `(s.c - ${now - SPREAD_MS}) / 1000`,
      fill_time_ms: `case when s.g % 20 > 1 then 2000 + (s.g::bigint * 7919) % 60000 else null end`,
      app_fees_usd_micros: `case when s.g % 10 = 0 then ((s.g::bigint * 104729) % 1000000007)::numeric else null end`,
      user_address: address,
      sender: address,
      recipient: address,
      refund_to: address,
      in_tx_hashes: `jsonb_build_array(${hex64('in')})`,
      tx_hashes: `jsonb_build_array(${hex64('out')})`,
      created_at: 's.c',
      updated_at: 's.c + 2000',
      expires_at: 's.c + (t.expires_at - t.created_at)',
    };
    const names = columns.rows.map((column) => column.name);
    const missing = Object.keys(overrides).filter((name) => !names.includes(name));
    if (missing.length > 0) throw new Error(`requests has no column(s) ${missing.join(', ')}: update bench/growth.ts`);
    const selectList = names.map((name) => overrides[name] ?? `t.${name}`).join(', ');
    const startedAt = performance.now();
    for (let from = 1; from <= options.rows; from += options.batch) {
      const to = Math.min(options.rows, from + options.batch - 1);
      await sql
        .raw(
          `insert into requests (${names.join(', ')})
           select ${selectList}
           from requests t,
                (select g, ${now} - (random() * ${SPREAD_MS})::bigint as c from generate_series(${from}, ${to}) g) s
           where t.id = '${templateId}'`,
        )
        .execute(db);
      const seconds = (performance.now() - startedAt) / 1000;
      console.error(
        `  filled ${to.toLocaleString('en')} / ${options.rows.toLocaleString('en')} rows, ${seconds.toFixed(0)} s (${(to / seconds).toFixed(0)} rows/s)`,
      );
    }
    await sql`delete from requests where id = ${templateId}`.execute(db);
    // Timed: on PGlite each holds every other statement for as long (the gateway analyzes its grown tables itself,
    // `analyzeChangedTables`; nothing vacuums them).
    const timed = async (label: string, statement: RawBuilder<unknown>) => {
      const started = performance.now();
      await statement.execute(db);
      console.error(`  ${label}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
    };
    // VACUUM too: on PostgreSQL, autovacuum would otherwise visit the freshly inserted table during the measurements.
    await timed('vacuum', sql`vacuum requests`);
    await timed('analyze', sql`analyze requests`);
    // A checkpoint too: on PostgreSQL the fill leaves gigabytes of dirty pages, which the checkpointer would write
    // back (spread over `checkpoint_completion_target` of its interval) during the measurements.
    await timed('checkpoint', sql`checkpoint`);
  } finally {
    await database.close();
  }
}

/** EXPLAIN ANALYZE of SQL equivalent to each listing's first page, against the filled store. */
async function explainListings(store: Store, user: string, options: GrowthOptions): Promise<void> {
  const database = await store.open();
  try {
    const lower = user.toLowerCase();
    const typical = typicalUser(options.users);
    const queries: Array<[string, string]> = [
      [
        'list user',
        `select * from requests where user_address = '${lower}' order by created_at desc, id desc limit ${PAGE_SIZE + 1}`,
      ],
      [
        'list term',
        `select * from requests where (id = '${typical}' or order_id = '${typical}' or user_address = '${typical}' or (sender = '${typical}' and sender <> user_address) or recipient = '${typical}' or (refund_to = '${typical}' and refund_to <> user_address) or deposit_address = '${typical}' or (in_tx_hashes @> '["${typical}"]'::jsonb and in_tx_hashes <> '[]'::jsonb) or (tx_hashes @> '["${typical}"]'::jsonb and tx_hashes <> '[]'::jsonb)) order by created_at desc, id desc limit ${PAGE_SIZE + 1}`,
      ],
      ['list newest', `select * from requests order by created_at desc, id desc limit ${PAGE_SIZE + 1}`],
      [
        'list groups',
        `select * from requests where (user_address in ('${typical}') or (user_address in ('${otherUser(options.users)}') and (status in ('refund')) is not true)) order by created_at desc, id desc limit ${PAGE_SIZE + 1}`,
      ],
      ...filterQueries(Date.now()).map(([name, where, order]): [string, string] => [
        name,
        `select * from requests ${where === '' ? '' : `where ${where}`} order by ${order ?? 'created_at desc, id desc'} limit ${PAGE_SIZE + 1}`,
      ]),
    ];
    for (const [name, query] of queries) {
      const { rows } = await sql<{ 'QUERY PLAN': string }>`explain analyze ${sql.raw(query)}`.execute(database.db);
      console.log(`\n${name}:\n${rows.map((row) => `  ${row['QUERY PLAN']}`).join('\n')}`);
    }
  } finally {
    await database.close();
  }
}

/**
 * Inserts before the measured ones: the pool fills with the pages the inserts touch, as a running gateway's has
 * (20,000 random keys touch ~3/4 of the primary key's leaves at 1M rows; fewer left a large pool cold).
 */
const INSERT_WARMUP = 20_000;
const INSERT_MEASURED = 500;

/**
 * The quote's one write against the filled table, counted rather than timed: `EXPLAIN (ANALYZE, BUFFERS)` of
 * inserts of the template row under new ids, averaged per insert. "Read" blocks missed the buffer pool and came
 * from the filesystem (on PGlite, through its WASM filesystem layer); "written" ones were dirty pages evicted to
 * make room. Both grow with the table once its indexes outgrow the pool.
 */
async function explainQuoteInserts(store: Store, template: string): Promise<void> {
  const database = await store.open();
  try {
    const insert = () => {
      const id = `0x${randomBytes(32).toString('hex')}`;
      const orderId = `0x${randomBytes(32).toString('hex')}`;
      return sql`insert into requests select * from json_populate_record(null::requests,
        (${template}::jsonb || jsonb_build_object('id', ${id}::text, 'order_id', ${orderId}::text))::json)`;
    };
    for (let i = 0; i < INSERT_WARMUP; i++) await insert().execute(database.db);
    const totals = { hit: 0, read: 0, dirtied: 0, written: 0, ms: 0 };
    for (let i = 0; i < INSERT_MEASURED; i++) {
      const { rows } = await sql<{
        'QUERY PLAN': unknown;
      }>`explain (analyze, buffers, format json) ${insert()}`.execute(database.db);
      const plan = rows[0]?.['QUERY PLAN'];
      const [top] = (typeof plan === 'string' ? JSON.parse(plan) : plan) as Array<{
        Plan: Record<string, number>;
        'Execution Time': number;
      }>;
      totals.hit += top!.Plan['Shared Hit Blocks'] ?? 0;
      totals.read += top!.Plan['Shared Read Blocks'] ?? 0;
      totals.dirtied += top!.Plan['Shared Dirtied Blocks'] ?? 0;
      totals.written += top!.Plan['Shared Written Blocks'] ?? 0;
      totals.ms += top!['Execution Time'];
    }
    const per = (value: number) => fixed(value / INSERT_MEASURED, 2);
    const { rows: size } = await sql<{ buffers: string; indexes: string; pkey: string }>`
      select current_setting('shared_buffers') as buffers,
             pg_size_pretty(pg_indexes_size('requests')) as indexes,
             pg_size_pretty(pg_relation_size('requests_pkey')) as pkey`.execute(database.db);
    console.log(
      `\nquote insert into the filled table (shared_buffers ${size[0]?.buffers}; its indexes ${size[0]?.indexes}, of which the primary key ${size[0]?.pkey}; ${INSERT_MEASURED} inserts after ${INSERT_WARMUP.toLocaleString('en')}), per insert: blocks hit ${per(totals.hit)}, read ${per(totals.read)}, dirtied ${per(totals.dirtied)}, written ${per(totals.written)}; execution ${per(totals.ms)} ms`,
    );
  } finally {
    await database.close();
  }
}

function comparisonTable(empty: PhaseResult, filled: PhaseResult): string {
  const body: string[][] = [];
  for (const emptyRow of empty.rows) {
    const e = summarize(emptyRow);
    const filledRow = filled.rows.find(
      (row) => row.scenario === emptyRow.scenario && row.result.concurrency === emptyRow.result.concurrency,
    );
    if (!filledRow) continue;
    const f = summarize(filledRow);
    const label = `${e.scenario} at ${e.concurrency}`;
    body.push([`${label}: p50 ms`, fixed(e.p50Ms, 2), fixed(f.p50Ms, 2), fixed(f.p50Ms / e.p50Ms, 2)]);
    body.push([`${label}: p99 ms`, fixed(e.p99Ms, 2), fixed(f.p99Ms, 2), fixed(f.p99Ms / e.p99Ms, 2)]);
    body.push([`${label}: req/s`, fixed(e.perSecond, 0), fixed(f.perSecond, 0), fixed(f.perSecond / e.perSecond, 2)]);
  }
  const count = (value: number | null) => (value === null ? 'n/a' : value.toLocaleString('en'));
  body.push(['requests rows at the end', count(empty.tableRows), count(filled.tableRows), '']);
  body.push(['gateway RSS MiB at the end', fixed(empty.rssMiB ?? NaN, 0), fixed(filled.rssMiB ?? NaN, 0), '']);
  return formatTable(['figure', 'empty', 'filled', 'ratio'], body);
}

/** Per concurrency, each round's quote p50 empty and filled and their ratio; the verdict is on the median ratio. */
function quoteVerdicts(
  rounds: ReadonlyArray<{ empty: PhaseResult; filled: PhaseResult }>,
  concurrencies: readonly number[],
): { table: string; lines: string[]; met: boolean } {
  const body: string[][] = [];
  const lines: string[] = [];
  let met = true;
  for (const concurrency of concurrencies) {
    const pick = (result: PhaseResult) =>
      result.rows.map(summarize).find((s) => s.scenario === 'quote' && s.concurrency === concurrency);
    const ratios: number[] = [];
    rounds.forEach((round, index) => {
      const e = pick(round.empty);
      const f = pick(round.filled);
      if (!e || !f) return;
      ratios.push(f.p50Ms / e.p50Ms);
      body.push([
        String(index + 1),
        String(concurrency),
        fixed(e.p50Ms, 2),
        fixed(f.p50Ms, 2),
        fixed(f.p50Ms / e.p50Ms, 2),
      ]);
    });
    if (ratios.length === 0) continue;
    const median = medianOf(ratios);
    const within = median <= 1 + QUOTE_P50_TOLERANCE;
    if (!within) met = false;
    lines.push(
      `quote p50 within 10% at ${concurrency} client(s): ${within ? 'MET' : 'NOT MET'} (median ratio ×${fixed(median, 2)} over ${ratios.length} round(s): ${ratios.map((ratio) => `×${fixed(ratio, 2)}`).join(', ')})`,
    );
  }
  return { table: formatTable(['round', 'clients', 'empty p50 ms', 'filled p50 ms', 'ratio'], body), lines, met };
}

function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const database = process.env.DATABASE_URL ? 'PostgreSQL (DATABASE_URL), a schema per phase' : 'PGlite on disk';
  console.log(`
Growth benchmark
  machine     ${machineDescription()}
  node        ${process.version}
  database    ${database}, dropped at the end
  filled      ${options.rows.toLocaleString('en')} terminal requests over ${options.users.toLocaleString('en')} users (1 in ${BENCH_USER_EVERY} the bench user's), created over 90 days
  quote       POST /quote/v2, ETH 0.01–0.05 ${ORIGIN_CHAIN_ID} → ${DESTINATION_CHAIN_ID}, at ${options.concurrencies.join(', ')} clients
  listings    GET /requests/v3?limit=${PAGE_SIZE} by user (the bench's), by term (the explorer's search; a typical user ${typicalUser(options.users)}), and unfiltered, at ${options.listConcurrency} client(s)
  window      ${options.warmupSeconds} s warm-up, then ${options.durationSeconds} s measured per figure
  rounds      ${options.rounds} (the quotes measured again on both databases in each round after the first)
`);
  const empty = newStore('empty');
  const filled = newStore('filled');
  const stores = { empty, filled };
  try {
    const emptyResult = await runPhase('empty', empty, options);
    console.error(`\n[filled] filling a fresh database with ${options.rows.toLocaleString('en')} requests...`);
    const template = await templateRow(empty);
    await fillStore(filled, template, options);
    const filledResult = await runPhase('filled', filled, options);
    const rounds: Array<{ empty: PhaseResult; filled: PhaseResult }> = [{ empty: emptyResult, filled: filledResult }];
    for (let round = 2; round <= options.rounds; round += 1) {
      // Filled first in even rounds: a drift of the machine's speed over the run weighs on both sides alike.
      const order = round % 2 === 0 ? (['filled', 'empty'] as const) : (['empty', 'filled'] as const);
      const results = {} as Record<'empty' | 'filled', PhaseResult>;
      for (const side of order) results[side] = await runPhase(`${side}, round ${round}`, stores[side], options, true);
      rounds.push(results);
    }
    emptyResult.tableRows = await countRequests(empty);
    filledResult.tableRows = await countRequests(filled);
    if (options.explain) {
      const user = (JSON.parse(template) as { user_address: string }).user_address;
      await explainListings(filled, user, options);
      await explainQuoteInserts(filled, template);
    }

    const rows = rounds.flatMap((round) => [...round.empty.rows, ...round.filled.rows]);
    console.log(`\n${comparisonTable(emptyResult, filledResult)}\n`);
    console.log(
      'Both phases run the quotes first, then the listings: the bench user has its quotes (status waiting) in both, and in the filled table 1 row in 1,000 besides. The rows above are the first round; the requests rows are counted after the last.',
    );
    const verdicts = quoteVerdicts(rounds, options.concurrencies);
    console.log(`\n${verdicts.table}\n`);
    for (const line of verdicts.lines) console.log(line);
    const status = verdicts.met ? 0 : 1;
    const failures = errorReport(rows);
    if (failures.length > 0) {
      const total = rows.reduce((sum, row) => sum + countOf(row.result.errors) + countOf(row.result.warmupErrors), 0);
      console.error(`\n!!! BENCHMARK INVALID: ${total} request(s) failed !!!\n${failures.join('\n')}\n`);
      return 1;
    }
    return status;
  } finally {
    await empty.remove().catch((error: unknown) => console.error('(could not remove the empty store)', error));
    await filled.remove().catch((error: unknown) => console.error('(could not remove the filled store)', error));
  }
}

runBench(main, USAGE);
