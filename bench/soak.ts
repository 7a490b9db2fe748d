/**
 * `npm run bench:soak`: load held over time. For `--minutes` (default 10) the gateway takes mixed traffic at once:
 *
 * - quotes (`POST /quote/v2`, native ETH 31337 → 31338, a new amount each) at a steady open-loop rate: by default
 *   half the maximum measured at 16 closed-loop clients just before (`--quote-rate` sets it);
 * - one real bridge deposit every `--deposit-interval` seconds (default 1), quoted with an API key whose webhook
 *   posts to a receiver in this process, then followed on `GET /intents/status/v3` to `success`;
 * - `--subscribers` (default 500) live connections, half graphql-ws `requestStatus` and half the reference's `/ws`:
 *   each new request gets `--per-request` (default 10) of them, opened before its deposit, and the oldest
 *   connections whose request is done are closed so about `--subscribers` stay open.
 *
 * Every `--sample` seconds (default 10) it records the gateway's RSS, its V8 heap (no forced collection), its
 * event-loop lag (p99 and max of the window, from prom-client's default metrics on `/metrics`), the p99 of each
 * route over the window, the database's size (and on PostgreSQL the requests table's live-row count, see `databaseGauge`)
 * and the open subscribers.
 *
 *   npm run bench:soak -- [--minutes 10] [--quote-rate <per s>] [--deposit-interval 1] [--subscribers 500]
 *                         [--per-request 10] [--sample 10] [--max-rss-slope 2] [--timeout 60]
 *
 * It fails (exit status 1) on any failed request (non-200 quote or status, a deposit that does not reach
 * `success`), on a lost, repeated or reordered event (every subscriber sees its request's changes pending,
 * submitted, success once each and in order, after `waiting`; every change gets exactly one signed webhook), or on
 * a growth trend in memory. It looks at the lowest RSS of each whole minute after the first third of the run and
 * after the subscriber pool is full (before that is warm-up: caches, JIT, PGlite's buffers, the connections
 * opening); per-minute lows, because RSS moves in a sawtooth (collections) that a leak raises and a collection does
 * not. It fails when the last third of those minutes sits above the highest low before them by more than
 * `--max-rss-slope` MiB per minute between the two (`lateRise`): a leak keeps raising the level, memory that returns
 * to a level it already held does not. (A least-squares slope, printed for information, read the climb back to the
 * plateau after an early drop as a trend in every quiet run.) With fewer than 5 such minutes (a run under about
 * 9 minutes) it is not judged.
 *
 * PGlite on disk in a temporary directory (its size is what is sampled), or PostgreSQL in a schema of its own
 * when `DATABASE_URL` is set; both removed at the end.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { parseEther, zeroAddress, type Address } from 'viem';
import type { DevnetChain } from '../src/chain/devnet.js';
import { PGLITE_HOLD_MESSAGES } from '../src/server/tableMaintenance.js';
import { machineDescription, positiveInteger, positiveNumber, runBench, UsageError } from './cli.js';
import { createDepositWallet, quoteDeposit, sendDeposit, type DepositWallet } from './fillRequest.js';
import { percentile, runLoad, send, type BenchRequest } from './load.js';
import { fixed, formatTable, summarize } from './report.js';
import { processMemoryMiB, startBenchServer, type BenchServer } from './serverProcess.js';
import {
  createWebhookKey,
  openGraphQLSubscriber,
  openWsSubscriber,
  startWebhookReceiver,
  type Subscriber,
  type WebhookReceiver,
} from './streamClients.js';
import { checkCompleteness, Problems, summarizeWebhooks } from './streamReport.js';

const ORIGIN_CHAIN_ID = 31337;
const DESTINATION_CHAIN_ID = 31338;
const MIN_AMOUNT = parseEther('0.01');
const MAX_AMOUNT = parseEther('0.05');
const AMOUNT_STEPS = 4_000_000n;
/** The open-loop generator's tick: each tick sends the quotes due since the last. */
const TICK_MS = 10;
/** Quotes in flight beyond this are not sent but counted as errors: the gateway is not keeping up. */
const MAX_QUOTES_IN_FLIGHT = 256;
const REQUEST_TIMEOUT_MS = 10_000;
const CONFIRM_TIMEOUT_MS = 20_000;
const STATUS_POLL_MS = 250;
/** After the last deposit is done: how long late events and webhooks may still arrive. */
const GRACE_MS = 5_000;
const FAILED_STATUSES = new Set(['failure', 'refund', 'refunded']);
/** Whole minutes after warm-up the memory trend needs to be judged at all. */
const MIN_TREND_MINUTES = 5;
const EXPECTED = ['pending', 'submitted', 'success'];

const ROUTES = {
  quote: 'POST /quote/v2',
  keyedQuote: 'POST /quote/v2 (keyed, deposited)',
  status: 'GET /intents/status/v3',
} as const;
type Route = (typeof ROUTES)[keyof typeof ROUTES];

interface SoakOptions {
  minutes: number;
  /** Quotes per second; null: half the 16-client maximum, measured first. */
  quoteRate: number | null;
  depositIntervalSeconds: number;
  subscribers: number;
  perRequest: number;
  sampleSeconds: number;
  maxRssSlopeMiBPerMinute: number;
  timeoutMs: number;
}

const USAGE =
  'usage: npm run bench:soak -- [--minutes 10] [--quote-rate <per s>] [--deposit-interval 1] [--subscribers 500] [--per-request 10] [--sample 10] [--max-rss-slope 2] [--timeout 60]';

function parseOptions(argv: string[]): SoakOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      minutes: { type: 'string', default: '10' },
      'quote-rate': { type: 'string' },
      'deposit-interval': { type: 'string', default: '1' },
      subscribers: { type: 'string', default: '500' },
      'per-request': { type: 'string', default: '10' },
      sample: { type: 'string', default: '10' },
      'max-rss-slope': { type: 'string', default: '2' },
      timeout: { type: 'string', default: '60' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) throw new UsageError('');
  const rate = values['quote-rate'];
  return {
    minutes: positiveNumber('--minutes', values.minutes),
    quoteRate: rate === undefined ? null : positiveNumber('--quote-rate', rate),
    depositIntervalSeconds: positiveNumber('--deposit-interval', values['deposit-interval']),
    subscribers: positiveInteger('--subscribers', values.subscribers),
    perRequest: positiveInteger('--per-request', values['per-request']),
    sampleSeconds: positiveNumber('--sample', values.sample),
    maxRssSlopeMiBPerMinute: positiveNumber('--max-rss-slope', values['max-rss-slope']),
    timeoutMs: positiveNumber('--timeout', values.timeout) * 1_000,
  };
}

const amountOf = (index: number) =>
  MIN_AMOUNT + ((MAX_AMOUNT - MIN_AMOUNT) * (BigInt(index) % AMOUNT_STEPS)) / AMOUNT_STEPS;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function quoteBody(user: Address, index: number): BenchRequest {
  return {
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
  };
}

/** Latencies and failures per route since the last sample. */
class RouteWindow {
  private latencies = new Map<Route, number[]>();
  private failures = new Map<Route, number>();
  /** Every failure of the run, by kind, with its first detail. */
  readonly errors = new Problems();

  record(route: Route, ms: number): void {
    const list = this.latencies.get(route) ?? [];
    list.push(ms);
    this.latencies.set(route, list);
  }
  fail(route: Route, kind: string, detail: string): void {
    this.failures.set(route, (this.failures.get(route) ?? 0) + 1);
    this.errors.add(`${route}: ${kind}`, detail.slice(0, 300));
  }
  /** p99 and count per route, and the failures, since the last call; starts a new window. */
  take(): Map<Route, { p99: number; count: number; failed: number }> {
    const result = new Map<Route, { p99: number; count: number; failed: number }>();
    for (const route of Object.values(ROUTES)) {
      const values = Float64Array.from(this.latencies.get(route) ?? []).sort();
      result.set(route, { p99: percentile(values, 0.99), count: values.length, failed: this.failures.get(route) ?? 0 });
    }
    this.latencies = new Map();
    this.failures = new Map();
    return result;
  }
}

/** Open-loop quotes at `rate` per second until `stop()`; each response's latency goes to `window`. */
function startQuoteLoad(baseUrl: string, user: Address, rate: number, window: RouteWindow) {
  const url = new URL(baseUrl);
  // An idle connection is closed here after 4 s, before the gateway closes it (GATEWAY_HTTP_KEEP_ALIVE_TIMEOUT_MS,
  // default 10 s): at a low steady rate most pooled sockets sit idle, and one reused just as the server closes it
  // fails with ECONNRESET, the client's race and not the gateway's error.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 4_000 });
  let index = 0;
  let inFlight = 0;
  let due = 0;
  let last = performance.now();
  const pending = new Set<Promise<void>>();
  const timer = setInterval(() => {
    const now = performance.now();
    due += ((now - last) / 1000) * rate;
    last = now;
    for (; due >= 1; due--) {
      if (inFlight >= MAX_QUOTES_IN_FLIGHT) {
        window.fail(ROUTES.quote, 'backlog', `more than ${MAX_QUOTES_IN_FLIGHT} quotes in flight`);
        continue;
      }
      inFlight++;
      const sentAt = performance.now();
      const done = send(agent, url, quoteBody(user, index++), REQUEST_TIMEOUT_MS).then((outcome) => {
        inFlight--;
        if (outcome.errorKind === null) window.record(ROUTES.quote, performance.now() - sentAt);
        else window.fail(ROUTES.quote, outcome.errorKind, outcome.detail);
      });
      pending.add(done);
      void done.finally(() => pending.delete(done));
    }
  }, TICK_MS);
  return {
    sent: () => index,
    async stop() {
      clearInterval(timer);
      await Promise.all(pending);
      agent.destroy();
    },
  };
}

/** A deposited request and its subscribers. */
interface Followed {
  requestId: string | null;
  subscribers: Subscriber[];
  done: boolean;
  failure: string | null;
}

interface SoakContext {
  server: BenchServer;
  origin: DevnetChain;
  wallets: DepositWallet[];
  receiver: WebhookReceiver;
  window: RouteWindow;
  options: SoakOptions;
  /** Every request followed, in order. */
  followed: Followed[];
  /** Open connections, oldest first. */
  open: Subscriber[];
  /** Which request each subscriber follows. */
  owner: Map<Subscriber, Followed>;
}

async function timed<T>(window: RouteWindow, route: Route, action: () => Promise<T>): Promise<T> {
  const startedAt = performance.now();
  const value = await action();
  window.record(route, performance.now() - startedAt);
  return value;
}

/** Closes the oldest connections whose request is done until at most `--subscribers` are open. */
async function retireSubscribers(context: SoakContext): Promise<void> {
  const closing: Promise<void>[] = [];
  while (context.open.length > context.options.subscribers) {
    const oldest = context.open[0];
    if (oldest === undefined || context.owner.get(oldest)?.done !== true) break;
    context.open.shift();
    closing.push(oldest.close());
  }
  await Promise.all(closing);
}

/** Quote with the key, open the subscribers, deposit, and poll the status to `success`. */
async function follow(context: SoakContext, index: number): Promise<void> {
  const { server, window, options } = context;
  const entry: Followed = { requestId: null, subscribers: [], done: false, failure: null };
  context.followed.push(entry);
  try {
    const wallet = context.wallets[index % context.wallets.length]!;
    const deposit = await timed(window, ROUTES.keyedQuote, () =>
      quoteDeposit({
        baseUrl: server.info.url,
        origin: context.origin,
        destinationChainId: DESTINATION_CHAIN_ID,
        wallet,
        amount: amountOf(index),
        apiKey: context.receiver.key,
      }),
    );
    entry.requestId = deposit.requestId;
    const wsBaseUrl = server.info.url.replace(/^http/, 'ws');
    for (let k = 0; k < options.perRequest; k++) {
      const open = k % 2 === 0 ? openGraphQLSubscriber : openWsSubscriber;
      const subscriber = open(wsBaseUrl, context.receiver.key, deposit.requestId, index * options.perRequest + k);
      entry.subscribers.push(subscriber);
      context.open.push(subscriber);
      context.owner.set(subscriber, entry);
    }
    await Promise.all(
      entry.subscribers.map(async (subscriber) => {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error('not live in time')), CONFIRM_TIMEOUT_MS);
        });
        try {
          await Promise.race([subscriber.confirmed, timeout]);
        } catch (error) {
          if (subscriber.problems.length === 0) subscriber.problems.push((error as Error).message);
        } finally {
          clearTimeout(timer);
        }
      }),
    );
    const { hash, sentAt } = await sendDeposit(wallet, deposit);
    const receipt = await wallet.client.waitForTransactionReceipt({
      hash,
      pollingInterval: 100,
      timeout: options.timeoutMs,
    });
    if (receipt.status !== 'success') throw new Error(`deposit ${hash} reverted`);
    const statusUrl = `${server.info.url}/intents/status/v3?requestId=${deposit.requestId}`;
    for (;;) {
      const response = await timed(window, ROUTES.status, () => fetch(statusUrl));
      const body = (await response.json()) as { status?: string };
      if (response.status !== 200 || typeof body.status !== 'string') {
        window.fail(ROUTES.status, `HTTP ${response.status}`, JSON.stringify(body));
        throw new Error(`status HTTP ${response.status}`);
      }
      if (body.status === 'success') break;
      if (FAILED_STATUSES.has(body.status)) throw new Error(`status ${body.status}`);
      if (performance.now() > sentAt + options.timeoutMs)
        throw new Error(`no success within ${options.timeoutMs / 1000} s; last status ${body.status}`);
      await sleep(STATUS_POLL_MS);
    }
  } catch (error) {
    entry.failure = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? 'failed';
  } finally {
    entry.done = true;
  }
}

/** Total size of the files under `dir`, in bytes. */
function directoryBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) {
      try {
        total += statSync(join(entry.parentPath, entry.name)).size;
      } catch {
        // A file PGlite removed meanwhile.
      }
    }
  }
  return total;
}

/**
 * The requests table's rows and the database size: PostgreSQL from the schema, PGlite from its directory.
 *
 * The rows are PostgreSQL's live-tuple count for the table (`pg_stat_user_tables.n_live_tup`: every insert is
 * counted when its backend reports its statistics, about once a second), not `count(*)`. A `count(*)` read the
 * whole table every sample: at about 500,000 rows it took over a second with two parallel workers on the
 * benchmark machine's two cores, every 10 s, and the gateway's quotes queued behind it (a 10-minute soak's quote
 * backlog, seen in `pg_stat_activity`).
 */
function databaseGauge(dataDir: string | null, schema: string | undefined) {
  const databaseUrl = process.env.DATABASE_URL || undefined;
  const client = databaseUrl === undefined ? null : new pg.Client({ connectionString: databaseUrl });
  let connected: Promise<unknown> | null = null;
  return {
    async read(): Promise<{ rows: number | null; mib: number | null }> {
      if (dataDir !== null) return { rows: null, mib: directoryBytes(dataDir) / 2 ** 20 };
      if (client === null || schema === undefined) return { rows: null, mib: null };
      connected ??= client.connect();
      await connected;
      const result = await client.query<{ rows: string | null; bytes: string }>(
        `select (select n_live_tup from pg_stat_user_tables where schemaname = $1 and relname = 'requests')::text as rows,
                pg_total_relation_size(format('%I.requests', $1::text))::text as bytes`,
        [schema],
      );
      const row = result.rows[0];
      return {
        rows: row?.rows == null ? null : Number(row.rows),
        mib: row ? Number(row.bytes) / 2 ** 20 : null,
      };
    },
    close: () => client?.end().catch(() => undefined),
  };
}

/** `nodejs_eventloop_lag_p99_seconds` and `_max_seconds` from `/metrics` (reset by prom-client at each scrape). */
async function eventLoopLag(baseUrl: string): Promise<{ p99Ms: number; maxMs: number }> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const gauge = (name: string) => {
    const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.eE+-]+)$`, 'm').exec(text);
    return match?.[1] === undefined ? Number.NaN : Number(match[1]) * 1_000;
  };
  return { p99Ms: gauge('nodejs_eventloop_lag_p99_seconds'), maxMs: gauge('nodejs_eventloop_lag_max_seconds') };
}

interface Sample {
  atSeconds: number;
  rssMiB: number;
  heapMiB: number;
  lagP99Ms: number;
  lagMaxMs: number;
  routes: Map<Route, { p99: number; count: number; failed: number }>;
  tableRows: number | null;
  databaseMiB: number | null;
  open: number;
  deposits: number;
  /** What held every statement on PGlite and ended in this window: table maintenance passes and checkpoints. */
  maintenance: MaintenanceRun[];
}

/** A `VACUUM` or `ANALYZE` pass of the gateway's table maintenance on PGlite, or a checkpoint, from its info log line. */
interface MaintenanceRun {
  kind: keyof typeof PGLITE_HOLD_MESSAGES;
  /** How long its statements held the database (not the wait for a quiet moment before them). */
  ms: number;
}

const MAINTENANCE_MESSAGES = new Map<string, MaintenanceRun['kind']>(
  Object.entries(PGLITE_HOLD_MESSAGES).map(([kind, message]) => [message, kind as MaintenanceRun['kind']]),
);

/**
 * Collects the maintenance runs and checkpoints from the gateway's log (it runs at `info` for the soak) and keeps
 * every other line below `warn` from being forwarded: warnings and errors still reach the terminal.
 */
function maintenanceLog(): { onLine: (line: string) => boolean; take: () => MaintenanceRun[] } {
  let runs: MaintenanceRun[] = [];
  return {
    onLine(line) {
      let entry: { level?: unknown; msg?: unknown; ms?: unknown };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        return false;
      }
      const kind = typeof entry.msg === 'string' ? MAINTENANCE_MESSAGES.get(entry.msg) : undefined;
      if (kind !== undefined) runs.push({ kind, ms: Number(entry.ms) });
      return typeof entry.level === 'number' && entry.level < 40;
    },
    take() {
      const taken = runs;
      runs = [];
      return taken;
    },
  };
}

const MAINTENANCE_LETTERS: Record<MaintenanceRun['kind'], string> = { analyze: 'A', vacuum: 'V', checkpoint: 'C' };

const maintenanceCell = (runs: MaintenanceRun[]): string =>
  runs.length === 0 ? '—' : runs.map((run) => `${MAINTENANCE_LETTERS[run.kind]} ${fixed(run.ms, 0)}`).join(', ');

/**
 * How fast the level of `lows` (per-minute lows, `[minute, MiB]`) rose at the end: the median of the last third's
 * lows against the highest low before them, per minute between the two. A leak keeps raising the level, so the
 * last third sits above everything before it by about its rate times the distance; memory that comes back to a
 * level it already held (the allocator or V8 returned pages, then the load took them again) does not rise at all,
 * where a least-squares line through the dip and the climb back reads as a steep trend.
 */
function lateRise(points: Array<[number, number]>): { rate: number; late: number; earlier: number; minute: number } {
  const lateCount = Math.max(2, Math.ceil(points.length / 3));
  const earlierPoints = points.slice(0, points.length - lateCount);
  const latePoints = points.slice(points.length - lateCount);
  if (earlierPoints.length === 0) return { rate: Number.NaN, late: Number.NaN, earlier: Number.NaN, minute: 0 };
  const sorted = latePoints.map(([, low]) => low).sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const late = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  const [minute, earlier] = earlierPoints.reduce((best, point) => (point[1] >= best[1] ? point : best));
  const lateMinute = (latePoints[0]![0] + latePoints.at(-1)![0]) / 2;
  return { rate: Math.max(0, late - earlier) / (lateMinute - minute), late, earlier, minute };
}

/** Least-squares slope of `y` over `x`. */
function slope(points: Array<[number, number]>): number {
  const n = points.length;
  if (n < 2) return Number.NaN;
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n;
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n;
  let numerator = 0;
  let denominator = 0;
  for (const [x, y] of points) {
    numerator += (x - meanX) * (y - meanY);
    denominator += (x - meanX) ** 2;
  }
  return denominator === 0 ? Number.NaN : numerator / denominator;
}

function samplesTable(samples: Sample[]): string {
  const routeCell = (sample: Sample, route: Route) => {
    const figures = sample.routes.get(route);
    if (!figures) return '—';
    return `${fixed(figures.p99, 1)}${figures.failed > 0 ? ` (${figures.failed} err)` : ''}`;
  };
  return formatTable(
    [
      't s',
      'RSS MiB',
      'heap MiB',
      'lag p99 ms',
      'lag max ms',
      'quotes/s',
      'quote p99',
      'keyed quote p99',
      'status p99',
      'requests rows',
      'db MiB',
      'open subs',
      'deposits',
      'maintenance ms',
    ],
    samples.map((sample, i) => {
      const previous = samples[i - 1];
      const span = sample.atSeconds - (previous?.atSeconds ?? 0);
      return [
        fixed(sample.atSeconds, 0),
        fixed(sample.rssMiB, 0),
        fixed(sample.heapMiB, 0),
        fixed(sample.lagP99Ms, 1),
        fixed(sample.lagMaxMs, 1),
        fixed((sample.routes.get(ROUTES.quote)?.count ?? 0) / span, 0),
        routeCell(sample, ROUTES.quote),
        routeCell(sample, ROUTES.keyedQuote),
        routeCell(sample, ROUTES.status),
        sample.tableRows === null ? 'n/a' : sample.tableRows.toLocaleString('en'),
        sample.databaseMiB === null ? 'n/a' : fixed(sample.databaseMiB, 0),
        String(sample.open),
        String(sample.deposits),
        maintenanceCell(sample.maintenance),
      ];
    }),
  );
}

/** Half the quotes per second 16 closed-loop clients get, measured for a few seconds. */
async function halfOfMaximum(server: BenchServer, user: Address): Promise<number> {
  console.error('Measuring the quote maximum at 16 clients (5 s)...');
  const result = await runLoad({
    baseUrl: server.info.url,
    concurrency: 16,
    warmupSeconds: 2,
    durationSeconds: 5,
    nextRequest: (index) => quoteBody(user, 1_000_000_000 + index),
  });
  const summary = summarize({ scenario: 'quote', endpoint: ROUTES.quote, result, serverCores: null, clientCores: 0 });
  if (summary.errors > 0 || !(summary.perSecond > 0))
    throw new Error(`measuring the quote maximum failed: ${summary.errors} errors`);
  console.error(`  ${summary.perSecond.toFixed(0)} quotes/s at 16 clients`);
  return summary.perSecond / 2;
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const adminToken = randomBytes(24).toString('hex');
  const receiver = await startWebhookReceiver();
  const dataDir = process.env.DATABASE_URL ? null : mkdtempSync(join(tmpdir(), 'gateway-soak-'));
  console.error('Starting the devnet and the gateway in a child process...');
  const maintenance = maintenanceLog();
  const server = await startBenchServer({
    name: 'soak',
    onLine: maintenance.onLine,
    env: {
      // For the table maintenance's and checkpoints' lines (see `maintenanceLog`); other info lines are dropped.
      GATEWAY_LOG_LEVEL: process.env.GATEWAY_LOG_LEVEL ?? 'info',
      GATEWAY_ADMIN_TOKEN: adminToken,
      GATEWAY_WEBHOOKS_ALLOW_PRIVATE: 'true',
      // Every subscriber connects from this one address: the per-address cap (default 50) must hold them all.
      GATEWAY_WS_CONNECTIONS_PER_CLIENT: String(options.subscribers + options.perRequest * 20),
      ...(dataDir === null ? {} : { GATEWAY_DATA_DIR: dataDir }),
    },
  });
  const gauge = databaseGauge(dataDir, server.schema.schema);
  process.once('SIGINT', () => void server.stop().then(() => process.exit(130)));
  const subscribersEver: Subscriber[] = [];
  const context: SoakContext = {
    server,
    origin: server.info.descriptor.chains.find((chain) => chain.chainId === ORIGIN_CHAIN_ID)!,
    wallets: server.info.descriptor.accounts.slice(1).map((account) => {
      const origin = server.info.descriptor.chains.find((chain) => chain.chainId === ORIGIN_CHAIN_ID)!;
      return createDepositWallet(origin, account);
    }),
    receiver,
    window: new RouteWindow(),
    options,
    followed: [],
    open: [],
    owner: new Map(),
  };
  try {
    receiver.key = await createWebhookKey(server.info.url, adminToken, receiver);
    const user = server.info.descriptor.accounts[0]?.address;
    if (!user || context.wallets.length === 0) throw new Error('the devnet descriptor has too few test accounts');
    const rate = options.quoteRate ?? (await halfOfMaximum(server, user));
    console.log(`
Soak benchmark
  machine      ${machineDescription()}
  node         ${process.version}
  database     ${server.info.database}${server.schema.note}
  devnet       ${server.info.descriptor.chains.length} anvil chains, block time ${server.info.blockTime ?? 'automine'} s
  duration     ${options.minutes} min, a sample every ${options.sampleSeconds} s
  quotes       ${rate.toFixed(0)}/s open loop${options.quoteRate === null ? ' (half the 16-client maximum just measured)' : ''}, ${ROUTES.quote}
  deposits     one every ${options.depositIntervalSeconds} s, native ETH ${ORIGIN_CHAIN_ID} → ${DESTINATION_CHAIN_ID}, from ${context.wallets.length} accounts, webhook to ${receiver.url}
  subscribers  ${options.perRequest} per request (half graphql-ws, half /ws), about ${options.subscribers} kept open
  memory trend fails above ${options.maxRssSlopeMiBPerMinute} MiB/min of RSS after the first third and a full subscriber pool
`);

    window0(context.window);
    maintenance.take();
    const startedAt = performance.now();
    const endAt = startedAt + options.minutes * 60_000;
    const quotes = startQuoteLoad(server.info.url, user, rate, context.window);
    const following: Promise<void>[] = [];
    let depositIndex = 0;
    const depositTimer = setInterval(() => {
      following.push(follow(context, depositIndex++));
      void retireSubscribers(context);
    }, options.depositIntervalSeconds * 1_000);
    const samples: Sample[] = [];
    while (performance.now() < endAt) {
      await sleep(Math.min(options.sampleSeconds * 1_000, endAt - performance.now()));
      const [memory, lag, database] = await Promise.all([server.memory(), eventLoopLag(server.info.url), gauge.read()]);
      const sample: Sample = {
        atSeconds: (performance.now() - startedAt) / 1_000,
        rssMiB: processMemoryMiB(server.info.pid)?.rss ?? memory.rss / 2 ** 20,
        heapMiB: memory.heapUsed / 2 ** 20,
        lagP99Ms: lag.p99Ms,
        lagMaxMs: lag.maxMs,
        routes: context.window.take(),
        tableRows: database.rows,
        databaseMiB: database.mib,
        open: context.open.length,
        deposits: context.followed.filter((entry) => entry.done).length,
        maintenance: maintenance.take(),
      };
      samples.push(sample);
      console.error(
        `  ${fixed(sample.atSeconds, 0)} s: RSS ${fixed(sample.rssMiB, 0)} MiB, heap ${fixed(sample.heapMiB, 0)} MiB, lag p99 ${fixed(sample.lagP99Ms, 1)} ms, quote p99 ${fixed(sample.routes.get(ROUTES.quote)?.p99 ?? NaN, 1)} ms, ${sample.open} subscribers open, ${sample.deposits} deposits done${sample.maintenance.length === 0 ? '' : `, maintenance ${maintenanceCell(sample.maintenance)} ms`}`,
      );
    }
    clearInterval(depositTimer);
    console.error('Stopping the load; waiting for the deposits in flight...');
    await quotes.stop();
    await Promise.all(following);
    const observersDeadline = performance.now() + GRACE_MS;
    const requestIds = context.followed.flatMap((entry) => (entry.requestId === null ? [] : [entry.requestId]));
    const expectedWebhooks = requestIds.length * EXPECTED.length;
    while (performance.now() < observersDeadline && receiver.received.length < expectedWebhooks) await sleep(50);
    // Anything that would arrive twice arrives now rather than after the report.
    await sleep(1_000);
    for (const entry of context.followed) subscribersEver.push(...entry.subscribers);
    await Promise.all(context.open.map((subscriber) => subscriber.close()));

    return report(samples, context, subscribersEver, requestIds, quotes.sent(), options);
  } finally {
    await gauge.close();
    await receiver.close();
    await server.stop();
    if (dataDir !== null) rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Drops whatever the key creation and the maximum measurement left in the window. */
function window0(window: RouteWindow): void {
  window.take();
}

function report(
  samples: Sample[],
  context: SoakContext,
  subscribers: Subscriber[],
  requestIds: string[],
  quotesSent: number,
  options: SoakOptions,
): number {
  console.log(`${samplesTable(samples)}\n`);
  console.log(
    "RSS is the whole gateway process (with PGlite, its worker included); heap is V8 heap used, no forced collection; lag is the event-loop delay p99/max over the window (prom-client); route columns are p99 ms over the window; maintenance is each table maintenance pass that ended in the window (PGlite only: A = ANALYZE, V = VACUUM, C = checkpoint), its statements' ms (they hold every other statement while they run).\n",
  );
  const problems = context.window.errors;
  for (const entry of context.followed)
    if (entry.failure !== null) problems.add('deposit did not reach success', `${entry.requestId}: ${entry.failure}`);
  const webhooks = summarizeWebhooks(context.receiver.received);
  checkCompleteness(subscribers, requestIds, webhooks, context.receiver.malformed, problems);
  if (webhooks.repeats > 0) problems.add('webhook: delivered more than once', `${webhooks.repeats} repeated POST(s)`);
  if (webhooks.outOfOrder > 0)
    problems.add('webhook: out of order', `${webhooks.outOfOrder} request(s) got their webhooks out of order`);

  // Warm-up is the first third of the run, or longer if the subscriber pool was still filling (each connection
  // holds memory on purpose): the trend is judged only once the load is complete.
  const poolFull = samples.findIndex((sample) => sample.open >= options.subscribers);
  const tail = samples.slice(Math.max(Math.floor(samples.length / 3), poolFull === -1 ? samples.length : poolFull));
  // RSS and heap move in a sawtooth (collections, the allocator returning pages): the trend is fitted to the
  // lowest reading of each whole minute after warm-up, which a leak raises and a collection does not.
  const lows = (pick: (sample: Sample) => number): Array<[number, number]> => {
    const byMinute = new Map<number, number>();
    const first = tail[0]?.atSeconds ?? 0;
    for (const sample of tail) {
      const minute = Math.floor((sample.atSeconds - first) / 60);
      byMinute.set(minute, Math.min(byMinute.get(minute) ?? Number.POSITIVE_INFINITY, pick(sample)));
    }
    // The last minute is usually partial: its low is of fewer samples, so it is left out.
    const complete = [...byMinute].filter(([minute]) => (minute + 1) * 60 <= (tail.at(-1)?.atSeconds ?? 0) - first);
    return complete.map(([minute, low]) => [minute, low]);
  };
  const rssLows = lows((sample) => sample.rssMiB);
  const judged = rssLows.length >= MIN_TREND_MINUTES;
  const rssRise = lateRise(rssLows);
  const rssSlope = slope(rssLows);
  const heapSlope = slope(lows((sample) => sample.heapMiB));
  if (judged && rssRise.rate > options.maxRssSlopeMiBPerMinute)
    problems.add(
      'memory: RSS grows',
      `${fixed(rssRise.rate, 2)} MiB/min: the last third's per-minute lows at ${fixed(rssRise.late, 0)} MiB, above the highest earlier low (${fixed(rssRise.earlier, 0)} MiB) (limit ${options.maxRssSlopeMiBPerMinute})`,
    );

  const deposits = context.followed.length;
  const succeeded = context.followed.filter((entry) => entry.failure === null).length;
  console.log(`quotes sent           ${quotesSent.toLocaleString('en')}
deposits              ${succeeded} of ${deposits} reached success
subscriptions         ${subscribers.length} opened over the run, each checked (waiting, then pending, submitted, success once each, in order)
webhooks              ${context.receiver.received.length} received for ${requestIds.length} requests × ${EXPECTED.length} changes; ${webhooks.repeats} repeated
memory trend          RSS rise ${fixed(rssRise.rate, 2)} MiB/min (the last third's median low ${fixed(rssRise.late, 0)} MiB against the highest earlier low ${fixed(rssRise.earlier, 0)} MiB; limit ${options.maxRssSlopeMiBPerMinute} MiB/min), over the lows of ${rssLows.length} whole minute(s) after the first third of the run and once ${options.subscribers} subscribers were open; least-squares slopes, for information: RSS ${fixed(rssSlope, 2)} MiB/min, heap ${fixed(heapSlope, 2)} MiB/min${judged ? '' : ` — fewer than ${MIN_TREND_MINUTES} such minutes: NOT JUDGED (run longer)`}
`);
  if (problems.count === 0) {
    console.log(
      `verdict: PASSED (no error, no lost or repeated event, ${judged ? 'no memory growth trend' : 'memory trend not judged'})`,
    );
    return 0;
  }
  console.log(`verdict: FAILED, ${problems.count} problem(s):\n${problems.lines().join('\n')}`);
  return 1;
}

runBench(main, USAGE);
