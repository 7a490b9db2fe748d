/**
 * `npm run bench:stream`: how fast status changes reach their subscribers and webhooks. N concurrent subscribers
 * (default 1,000), half graphql-ws `requestStatus` on `/graphql` and half the reference's `/ws` stream, one
 * subscription per connection, spread over R real native-ETH bridges 31337 → 31338 (default 20) quoted with one
 * API key whose webhook posts to a receiver in this process. The requests are then deposited a few at a time and
 * the solver takes each through waiting → pending → submitted → success. Before them W warm-up requests (default 4),
 * one subscriber of each protocol on each, go the same way: the first status changes after the gateway started pay
 * for what runs once, and their figures are printed beside, not judged (`runWarmup`). For every change and every subscriber,
 * and for the first webhook attempt of every change: receipt − the record's `updatedAt`, as p50/p99/max against
 * the targets (p99 under 25 ms to subscribers, first webhook attempt under 100 ms). Also the gateway's memory
 * (RSS and V8 heap, after a full collection) before and after the connections, per connection, and how long
 * connecting took. The gateway runs in a child process (`bench/server.ts`), as for `npm run bench`; PGlite in
 * memory unless `DATABASE_URL` is set.
 *
 *   npm run bench:stream -- [--subscribers 1000] [--requests 20] [--warmup 4] [--concurrency 4] [--connect-concurrency 50] [--timeout 60]
 *
 * The commit time is not on the wire: `updatedAt` is the gateway's `Date.now()` taken inside the status change's
 * transaction, before its last statements (outbox lock, update, event and webhook rows, notifications) and the
 * commit, so the figures overstate commit → receipt by the rest of that transaction, waits for the outbox lock
 * behind concurrent status changes included. Both processes run on this machine and read the same clock (1 ms
 * resolution). On PostgreSQL a second clock brackets the commit: this process LISTENs on the outbox's channel and
 * notes when each change is visibly committed (`streamCommits.ts`); the report then shows both. The `/ws` event's
 * `publishedAt` and the spread over each change's subscribers show where the time goes.
 *
 * With `DATABASE_URL`, the run gets a schema of its own (`bench_stream_…`, dropped at the end) unless
 * `GATEWAY_DATABASE_SCHEMA` names one: a fresh devnet must not meet an earlier run's cursors and nonces.
 *
 * The run is invalid (exit status 1) when a request does not reach `success`, a subscriber misses, repeats or
 * reorders a change, does not start at `waiting`, or sees a transport error, a graphql-ws subscription does not
 * complete after `success`, or a change has no signed webhook. Missed targets are reported, not failures.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { parseEther } from 'viem';
import type { DevnetChain } from '../src/chain/devnet.js';
import { machineDescription, positiveInteger, positiveNumber, runBench, UsageError } from './cli.js';
import {
  createDepositWallet,
  quoteDeposit,
  sendDeposit,
  type DepositWallet,
  type QuotedDeposit,
} from './fillRequest.js';
import { fixed } from './report.js';
import type { BenchServerInfo } from './serverProcess.js';
import {
  machineCpuSeconds,
  processCpuSeconds,
  processMemoryMiB,
  startBenchServer,
  type BenchServer,
} from './serverProcess.js';
import { observeCommits, type CommitObserver } from './streamCommits.js';
import {
  openGraphQLSubscriber,
  openWsSubscriber,
  createWebhookKey,
  startWebhookReceiver,
  type Protocol,
  type Subscriber,
  type WebhookReceiver,
} from './streamClients.js';
import {
  breakdownTable,
  checkCompleteness,
  commitSeenTable,
  connectTable,
  EXPECTED_CHANGES,
  latencyByStatusTable,
  latencyRows,
  latencyTable,
  memoryPerConnection,
  memoryTable,
  Problems,
  PROTOCOLS,
  summarizeWebhooks,
  verdict,
  warmupTable,
  type MemoryStep,
} from './streamReport.js';

const ORIGIN_CHAIN_ID = 31337;
const DESTINATION_CHAIN_ID = 31338;
const MIN_AMOUNT = parseEther('0.01');
const MAX_AMOUNT = parseEther('0.05');
/** Connections per protocol opened and closed before the baseline, so lazily loaded code is not counted per connection. */
const WARMUP_CONNECTIONS = 5;
/** A subscription not live this long after its socket was started counts as failed. */
const CONFIRM_TIMEOUT_MS = 20_000;
/** How often a request in flight is polled on `GET /intents/status/v3` (the ground truth of "done"). */
const STATUS_POLL_MS = 250;
/** After the last request is done: how long late events and webhooks may still arrive. */
const GRACE_MS = 5_000;
/** File descriptors a process needs beyond one per subscriber (database, RPC, anvil, receiver, node itself). */
const FD_HEADROOM = 256;
const FAILED_STATUSES = new Set(['failure', 'refund', 'refunded']);
/** Sampling interval of this process's event-loop delay; node's histogram includes it, so it is subtracted. */
const LOOP_DELAY_RESOLUTION_MS = 5;

interface StreamOptions {
  subscribers: number;
  requests: number;
  /** Requests taken through before the measured ones (`runWarmup`). */
  warmup: number;
  /** Deposits in flight at once. */
  concurrency: number;
  /** Connections being opened at once. */
  connectConcurrency: number;
  /** Per request, from the deposit's broadcast to `success`. */
  timeoutMs: number;
}

const USAGE =
  'usage: npm run bench:stream -- [--subscribers 1000] [--requests 20] [--warmup 4] [--concurrency 4] [--connect-concurrency 50] [--timeout <s, default 60>]';

function parseOptions(argv: string[]): StreamOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      subscribers: { type: 'string', default: '1000' },
      requests: { type: 'string', default: '20' },
      warmup: { type: 'string', default: '4' },
      concurrency: { type: 'string', default: '4' },
      'connect-concurrency': { type: 'string', default: '50' },
      timeout: { type: 'string', default: '60' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) throw new UsageError('');
  const subscribers = positiveInteger('--subscribers', values.subscribers);
  if (subscribers < 2) throw new UsageError('--subscribers must be at least 2 (one per protocol)');
  const warmup = positiveNumber('--warmup', values.warmup, true);
  if (!Number.isInteger(warmup)) throw new UsageError(`--warmup must be a whole number, got '${values.warmup}'`);
  return {
    subscribers,
    requests: positiveInteger('--requests', values.requests),
    warmup,
    concurrency: positiveInteger('--concurrency', values.concurrency),
    connectConcurrency: positiveInteger('--connect-concurrency', values['connect-concurrency']),
    timeoutMs: positiveNumber('--timeout', values.timeout) * 1_000,
  };
}

/** The soft "Max open files" of a process, from /proc; null when it cannot be read, Infinity when unlimited. */
function openFilesLimit(pid: number | 'self'): number | null {
  try {
    const match = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync(`/proc/${pid}/limits`, 'utf8'));
    if (!match?.[1]) return null;
    return match[1] === 'unlimited' ? Number.POSITIVE_INFINITY : Number(match[1]);
  } catch {
    return null;
  }
}

/** One line on the descriptor limits of both processes; `ok` false when one is below what the run needs. */
function fileDescriptorCheck(subscribers: number, gatewayPid: number): { line: string; ok: boolean } {
  const needed = subscribers + FD_HEADROOM;
  const here = openFilesLimit('self');
  const gateway = openFilesLimit(gatewayPid);
  const shown = (limit: number | null) => (limit === null ? 'unknown' : String(limit));
  const ok = (here === null || here >= needed) && (gateway === null || gateway >= needed);
  const verdictText = ok
    ? 'OK'
    : `TOO LOW: raise it (e.g. \`ulimit -n ${needed * 2}\`) or lower --subscribers, else connections will fail`;
  return {
    line: `soft limit ${shown(here)} here, ${shown(gateway)} in the gateway; about ${needed} needed by each → ${verdictText}`,
    ok,
  };
}

interface QuotedRequest {
  index: number;
  wallet: DepositWallet;
  deposit: QuotedDeposit;
  /** Null when it reached `success`. */
  failure: string | null;
}

/** Quotes every request with the key (so its webhook is called), round-robin over the test accounts. */
async function quoteAll(
  info: BenchServerInfo,
  origin: DevnetChain,
  wallets: DepositWallet[],
  apiKey: string,
  count: number,
): Promise<QuotedRequest[]> {
  const quoted: QuotedRequest[] = [];
  for (let index = 0; index < count; index++) {
    const wallet = wallets[index % wallets.length]!;
    const amount = MIN_AMOUNT + ((MAX_AMOUNT - MIN_AMOUNT) * BigInt(index)) / BigInt(count);
    const deposit = await quoteDeposit({
      baseUrl: info.url,
      origin,
      destinationChainId: DESTINATION_CHAIN_ID,
      wallet,
      amount,
      apiKey,
    });
    quoted.push({ index, wallet, deposit, failure: null });
  }
  return quoted;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

type Opener = (wsBaseUrl: string, apiKey: string, requestId: string, index: number) => Subscriber;
const OPENERS: Record<Protocol, Opener> = { 'graphql-ws': openGraphQLSubscriber, '/ws': openWsSubscriber };

/**
 * Opens `count` subscribers of one protocol, `concurrency` at a time, subscriber k on request `firstIndex + k`
 * modulo the requests; resolves when each is live or has failed, with the wall time it took.
 */
async function openMany(
  protocol: Protocol,
  count: number,
  firstIndex: number,
  requestIds: string[],
  context: { wsBaseUrl: string; apiKey: string; concurrency: number },
): Promise<{ subscribers: Subscriber[]; wallSeconds: number }> {
  const subscribers: Subscriber[] = [];
  let next = 0;
  const startedAt = performance.now();
  const worker = async () => {
    for (let k = next++; k < count; k = next++) {
      const index = firstIndex + k;
      const subscriber = OPENERS[protocol](
        context.wsBaseUrl,
        context.apiKey,
        requestIds[index % requestIds.length]!,
        index,
      );
      subscribers.push(subscriber);
      try {
        await withTimeout(subscriber.confirmed, CONFIRM_TIMEOUT_MS, `not live within ${CONFIRM_TIMEOUT_MS / 1000} s`);
      } catch (error) {
        if (subscriber.problems.length === 0) subscriber.problems.push((error as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(context.concurrency, count) }, worker));
  subscribers.sort((a, b) => a.index - b.index);
  return { subscribers, wallSeconds: (performance.now() - startedAt) / 1000 };
}

/** Deposits one quoted request and polls its status until `success`, a failed status or the timeout. */
async function driveRequest(info: BenchServerInfo, request: QuotedRequest, timeoutMs: number): Promise<void> {
  const { hash, sentAt } = await sendDeposit(request.wallet, request.deposit);
  const deadline = sentAt + timeoutMs;
  const receipt = await request.wallet.client.waitForTransactionReceipt({
    hash,
    pollingInterval: 100,
    timeout: timeoutMs,
  });
  if (receipt.status !== 'success') throw new Error(`deposit ${hash} reverted`);
  const statusUrl = `${info.url}/intents/status/v3?requestId=${request.deposit.requestId}`;
  for (;;) {
    const response = await fetch(statusUrl);
    const body = (await response.json()) as { status?: string };
    if (response.status !== 200 || typeof body.status !== 'string')
      throw new Error(`status HTTP ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
    if (body.status === 'success') return;
    if (FAILED_STATUSES.has(body.status)) throw new Error(`status ${body.status}`);
    if (performance.now() > deadline)
      throw new Error(`no success within ${timeoutMs / 1000} s of the deposit; last status ${body.status}`);
    await sleep(STATUS_POLL_MS);
  }
}

/** Runs the deposits, `concurrency` in flight, each after a random 0–1 block pause (deposits land anywhere in a block). */
async function driveAll(info: BenchServerInfo, requests: QuotedRequest[], options: StreamOptions): Promise<void> {
  const pauseMs = (info.blockTime ?? 0) * 1_000;
  let next = 0;
  let done = 0;
  const startedAt = performance.now();
  const worker = async () => {
    for (let index = next++; index < requests.length; index = next++) {
      const request = requests[index]!;
      await sleep(Math.random() * pauseMs);
      try {
        await driveRequest(info, request, options.timeoutMs);
      } catch (error) {
        // viem's messages run over several lines (docs link, version): the first says what happened.
        request.failure = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
      }
      done++;
      if (done % 5 === 0 || done === requests.length) {
        const failed = requests.filter((r) => r.failure !== null).length;
        console.error(
          `  ${done}/${requests.length} requests done, ${failed} failed, ${((performance.now() - startedAt) / 1000).toFixed(0)} s`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, requests.length) }, worker));
}

/** Waits until every observer has everything it should get, or GRACE_MS. */
async function awaitObservers(
  subscribers: Subscriber[],
  receiver: WebhookReceiver,
  requestIds: string[],
): Promise<void> {
  const deadline = performance.now() + GRACE_MS;
  const complete = () => {
    const webhooks = new Set(receiver.received.map((r) => `${r.requestId} ${r.status}`));
    return (
      subscribers.every((s) => s.changes.length >= EXPECTED_CHANGES.length && s.completed !== false) &&
      requestIds.every((id) => EXPECTED_CHANGES.every((status) => webhooks.has(`${id.toLowerCase()} ${status}`)))
    );
  };
  while (!complete() && performance.now() < deadline) await sleep(50);
  // Anything that would arrive twice or late arrives now rather than after the report.
  await sleep(200);
}

function printHeader(
  info: BenchServerInfo,
  options: StreamOptions,
  counts: Record<Protocol, number>,
  receiver: WebhookReceiver,
  fd: string,
  schema: string,
): void {
  const perRequest = (count: number) => (count / options.requests).toFixed(count % options.requests === 0 ? 0 : 1);
  console.log(`
Stream benchmark
  machine      ${machineDescription()}
  node         ${process.version}
  database     ${info.database}${schema}
  devnet       ${info.descriptor.chains.length} anvil chains, block time ${info.blockTime === null ? 'automine' : `${info.blockTime} s`}
  gateway      ${info.url} (pid ${info.pid})
  subscribers  ${options.subscribers}: ${counts['graphql-ws']} graphql-ws \`requestStatus\` on /graphql + ${counts['/ws']} reference /ws, one subscription per connection,
               ${perRequest(counts['graphql-ws'])} + ${perRequest(counts['/ws'])} per request, the API key on each; opened ${options.connectConcurrency} at a time
  requests     ${options.requests} native-ETH bridges ${ORIGIN_CHAIN_ID} → ${DESTINATION_CHAIN_ID}, quoted with one API key whose webhook posts to ${receiver.url};
               ${options.concurrency} deposits in flight, each after a random 0–1 block pause; timeout ${options.timeoutMs / 1000} s per request
  warm-up      ${options.warmup} request(s) like these before them, one subscriber of each protocol on each: reported, not judged
  open files   ${fd}
`);
}

const percent = (value: number | null) => (value === null ? 'n/a' : `${Math.round(value * 100)}%`);

/** The connections, opened protocol by protocol with a memory reading before and after each batch. */
interface Connections {
  subscribers: Subscriber[];
  steps: MemoryStep[];
  wallSeconds: Map<Protocol, number>;
}

async function openSubscribers(
  server: BenchServer,
  requestIds: string[],
  apiKey: string,
  counts: Record<Protocol, number>,
  options: StreamOptions,
): Promise<Connections> {
  const connect = {
    wsBaseUrl: server.info.url.replace(/^http/, 'ws'),
    apiKey,
    concurrency: options.connectConcurrency,
  };
  // Warm-up: the first connections of each kind load and compile code the later ones share.
  for (const protocol of PROTOCOLS) {
    const warm = await openMany(protocol, WARMUP_CONNECTIONS, 0, requestIds, connect);
    await Promise.all(warm.subscribers.map((s) => s.close()));
  }
  await sleep(500);

  const connections: Connections = {
    subscribers: [],
    steps: [{ label: 'before the subscribers', memory: await server.memory(), added: 0 }],
    wallSeconds: new Map(),
  };
  let firstIndex = 0;
  for (const protocol of PROTOCOLS) {
    console.error(`Opening ${counts[protocol]} ${protocol} subscribers...`);
    const opened = await openMany(protocol, counts[protocol], firstIndex, requestIds, connect);
    firstIndex += counts[protocol];
    connections.subscribers.push(...opened.subscribers);
    connections.wallSeconds.set(protocol, opened.wallSeconds);
    connections.steps.push({
      label: `+ ${counts[protocol]} ${protocol}`,
      memory: await server.memory(),
      added: counts[protocol],
    });
  }
  return connections;
}

function printConnections({ subscribers, steps, wallSeconds }: Connections): void {
  const perConnection = memoryPerConnection(steps);
  const collected = steps.every((step) => step.memory.collected);
  console.log(`${connectTable(subscribers, wallSeconds)}

${memoryTable(steps)}

memory per connection, all ${perConnection.connections}: ${fixed(perConnection.rssKiB, 1)} KiB RSS, ${fixed(perConnection.heapKiB, 1)} KiB V8 heap (live objects${collected ? ', read after a full collection' : '; NO collection: includes garbage'})
(RSS is the whole gateway process, PGlite's worker included, and moves in allocator-sized steps; the heap is
the main thread's, where sockets and subscriptions live)
`);
}

/** What the deposit phase cost: CPU of both processes and of the machine, this process's event-loop delay. */
interface RunLoad {
  elapsedSeconds: number;
  serverCores: number | null;
  clientCores: number;
  /** Busy fraction of the whole machine. */
  machineBusy: number | null;
  /** This process's event-loop delay beyond the sampling interval, ms. */
  loopDelay: { p50: number; p99: number; max: number };
}

/**
 * Takes this process's one-off pauses before the measurement rather than during it, where each would delay every
 * receipt behind it: the first signature (the curve's precomputed tables, tens of ms) and a full collection of
 * what opening 1,000 connections left behind (a 130 ms pause was seen in the middle of a run). The receipts are
 * stamped on this process's event loop, so its pauses would be measured as the gateway's latency.
 */
async function settleClient(requests: QuotedRequest[]): Promise<void> {
  const first = requests[0]?.wallet.wallet;
  if (first !== undefined) await first.signMessage({ account: first.account, message: 'warm-up' });
  v8.setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** Deposits every request and waits for the observers; measures what that cost meanwhile. */
async function runDeposits(
  info: BenchServerInfo,
  requests: QuotedRequest[],
  subscribers: Subscriber[],
  receiver: WebhookReceiver,
  options: StreamOptions,
): Promise<RunLoad> {
  console.error(`Depositing ${requests.length} requests, ${options.concurrency} in flight...`);
  await settleClient(requests);
  const serverBefore = processCpuSeconds(info.pid);
  const clientBefore = process.cpuUsage();
  const machineBefore = machineCpuSeconds();
  const histogram = monitorEventLoopDelay({ resolution: LOOP_DELAY_RESOLUTION_MS });
  histogram.enable();
  const startedAt = performance.now();
  await driveAll(info, requests, options);
  const elapsedSeconds = (performance.now() - startedAt) / 1000;
  await awaitObservers(
    subscribers,
    receiver,
    requests.map((request) => request.deposit.requestId),
  );
  const measuredSeconds = (performance.now() - startedAt) / 1000;
  histogram.disable();
  const serverAfter = processCpuSeconds(info.pid);
  const clientUsed = process.cpuUsage(clientBefore);
  const machineAfter = machineCpuSeconds();
  // Node's histogram holds the intervals between ticks: the delay is what exceeds the sampling interval.
  const beyond = (nanoseconds: number) => Math.max(0, nanoseconds / 1e6 - LOOP_DELAY_RESOLUTION_MS);
  return {
    elapsedSeconds,
    serverCores: serverBefore === null || serverAfter === null ? null : (serverAfter - serverBefore) / measuredSeconds,
    clientCores: (clientUsed.user + clientUsed.system) / 1e6 / measuredSeconds,
    machineBusy:
      machineBefore === null || machineAfter === null
        ? null
        : (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total),
    loopDelay: {
      p50: beyond(histogram.percentile(50)),
      p99: beyond(histogram.percentile(99)),
      max: beyond(histogram.max),
    },
  };
}

/** The warm-up requests and their subscribers, done before the measured ones (`runWarmup`). */
interface Warmup {
  requests: QuotedRequest[];
  subscribers: Subscriber[];
}

/**
 * Takes the warm-up requests through before the measured ones, with one subscriber of each protocol on each, and
 * waits for every change and webhook. The first status changes after the gateway started pay for what runs once:
 * each status-change statement prepared and planned for the first time, the catalog entries of the tables it
 * writes read, PGlite's WebAssembly compiled as its code paths are first taken, the fan-out's JavaScript optimized.
 * Measured with the rest, the first block's changes alone made the run's p99 (42–50 ms to their subscribers, where
 * every later change of the run reached all of its subscribers within 24 ms): the p99 of 60 changes is their
 * slowest, and the issue's target is the fan-out's. Their figures are printed beside the verdict (`warmupTable`).
 */
async function runWarmup(
  server: BenchServer,
  requests: QuotedRequest[],
  apiKey: string,
  receiver: WebhookReceiver,
  options: StreamOptions,
): Promise<Warmup> {
  if (requests.length === 0) return { requests, subscribers: [] };
  console.error(`Warm-up: ${requests.length} requests, one subscriber of each protocol on each...`);
  const requestIds = requests.map((request) => request.deposit.requestId.toLowerCase());
  const connect = {
    wsBaseUrl: server.info.url.replace(/^http/, 'ws'),
    apiKey,
    concurrency: options.connectConcurrency,
  };
  const subscribers: Subscriber[] = [];
  for (const protocol of PROTOCOLS)
    subscribers.push(...(await openMany(protocol, requests.length, 0, requestIds, connect)).subscribers);
  await driveAll(server.info, requests, options);
  await awaitObservers(subscribers, receiver, requestIds);
  await Promise.all(subscribers.map((subscriber) => subscriber.close()));
  return { requests, subscribers };
}

/** Adds a problem for each request that did not reach `success`. */
function checkRequests(requests: QuotedRequest[], problems: Problems): void {
  for (const request of requests)
    if (request.failure !== null)
      problems.add(
        'request did not reach success',
        `#${request.index} ${request.deposit.requestId}: ${request.failure}`,
      );
}

/** Prints the tables, the checks and the verdict; returns the exit status. */
function printReport(
  info: BenchServerInfo,
  requests: QuotedRequest[],
  subscribers: Subscriber[],
  receiver: WebhookReceiver,
  load: RunLoad,
  commits: CommitObserver | null,
  warmup: Warmup,
): number {
  const requestIds = requests.map((request) => request.deposit.requestId.toLowerCase());
  const warmupIds = new Set(warmup.requests.map((request) => request.deposit.requestId.toLowerCase()));
  // Judged apart: a warm-up request's webhook is neither missing from nor unknown to the measured ones.
  const webhooks = summarizeWebhooks(receiver.received.filter((receipt) => !warmupIds.has(receipt.requestId)));
  const warmupWebhooks = summarizeWebhooks(receiver.received.filter((receipt) => warmupIds.has(receipt.requestId)));
  const problems = new Problems();
  checkRequests(warmup.requests, problems);
  checkCompleteness(warmup.subscribers, [...warmupIds], warmupWebhooks, [], problems);
  checkRequests(requests, problems);
  checkCompleteness(subscribers, requestIds, webhooks, receiver.malformed, problems);
  const rows = latencyRows(subscribers, requestIds, webhooks);

  const succeeded = requests.filter((request) => request.failure === null).length;
  const cores = os.availableParallelism();
  const others =
    load.machineBusy === null || load.serverCores === null
      ? null
      : load.machineBusy * cores - load.serverCores - load.clientCores;
  const rss = processMemoryMiB(info.pid);
  console.log(`${requests.length} requests: ${succeeded} reached success; deposits ran for ${load.elapsedSeconds.toFixed(0)} s
CPU meanwhile: gateway ${percent(load.serverCores)} and this client ${percent(load.clientCores)} of one core; the machine ${percent(load.machineBusy)} busy over its ${cores} cores, so
every other process (the devnet's anvil nodes, and anything else running here) ${percent(others)} of one core; load average ${os.loadavg()[0]?.toFixed(1)} at the end
this process's event-loop delay meanwhile: p50 ${fixed(load.loopDelay.p50, 1)} ms, p99 ${fixed(load.loopDelay.p99, 1)} ms, max ${fixed(load.loopDelay.max, 1)} ms (a receipt is late by as much when its frame waits behind it)
gateway RSS at the end ${rss === null ? 'n/a' : `${rss.rss.toFixed(0)} MiB (peak ${rss.peak.toFixed(0)} MiB)`}
`);
  console.log(`${latencyTable(rows)}

${latencyByStatusTable(rows)}

${breakdownTable(subscribers)}

Latency = receipt − \`updatedAt\` of the status record in the message. Receipt: this process's Date.now() when
the websocket frame or the webhook POST's headers were handled. \`updatedAt\`: the gateway's Date.now() taken in
the status change's transaction before its last statements and the commit, so the figures OVERSTATE commit →
receipt by the rest of that transaction (waits for the outbox lock behind concurrent changes included). One
machine, one clock, 1 ms resolution. p99 is nearest-rank: with few samples (webhooks: 3 per request) it is the
maximum or close to it.
`);
  if (commits !== null) {
    console.log(`${commitSeenTable(subscribers, requestIds, webhooks, commits.seenAt)}

"Commit seen": this process LISTENs on \`request_events\` and, at each notification of schema ${commits.schema},
reads the new events; when that read returns they are committed, so it is an upper bound of the commit (a
millisecond or two late, more when this process is busy). The commit lies between \`updatedAt\` and it: the
main table overstates commit → receipt by at most the first row, these rows understate it.${commits.errors.length > 0 ? `\n(the commit clock had ${commits.errors.length} read error(s), first: ${commits.errors[0]})` : ''}
`);
  }

  const clean = subscribers.filter(
    (s) =>
      s.problems.length === 0 &&
      s.initial?.status === 'waiting' &&
      s.changes.map((c) => c.status).join() === EXPECTED_CHANGES.join(),
  ).length;
  const graphql = subscribers.filter((s) => s.protocol === 'graphql-ws');
  const firstAttempts = [...webhooks.first.values()].reduce((sum, byStatus) => sum + byStatus.size, 0);
  console.log(`Completeness: ${clean} of ${subscribers.length} subscribers got waiting, then ${EXPECTED_CHANGES.join(', ')}, each once and in order;
${graphql.filter((s) => s.completed === true).length} of ${graphql.length} graphql-ws subscriptions completed after success; webhooks: ${firstAttempts} first attempts for ${requests.length * EXPECTED_CHANGES.length} status changes,
${webhooks.repeats} later attempts (the receiver answers 200 at once, so normally 0); ${webhooks.outOfOrder} request(s) whose webhooks arrived in another
order than the changes (reported, not an error: the dispatcher posts up to 16 deliveries at once, with no order
within a request, and each carries its updatedAt)
`);
  if (warmup.requests.length > 0)
    console.log(`${warmupTable(latencyRows(warmup.subscribers, [...warmupIds], warmupWebhooks))}

The warm-up: the first ${warmup.requests.length} requests after the gateway started, one subscriber of each protocol on each, taken
through before the measured ones (\`--warmup\`). Not in the verdict: they pay for what runs once (statements
prepared and planned, PGlite's WebAssembly compiled as its paths are first taken, the fan-out's code optimized).
`);
  console.log(verdict(rows).join('\n'));
  if (problems.count === 0) return 0;
  console.error(`\n!!! BENCHMARK INVALID: ${problems.count} problem(s) !!!\n${problems.lines().join('\n')}\n`);
  return 1;
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  const adminToken = randomBytes(24).toString('hex');
  const databaseUrl = process.env.DATABASE_URL || undefined;
  const receiver = await startWebhookReceiver();
  console.error('Starting the devnet and the gateway in a child process...');
  const server = await startBenchServer({
    env: {
      GATEWAY_ADMIN_TOKEN: adminToken,
      GATEWAY_WEBHOOKS_ALLOW_PRIVATE: 'true',
      // Every subscriber connects from 127.0.0.1: lift the per-address cap (default 50) above the run's count.
      GATEWAY_WS_CONNECTIONS_PER_CLIENT: String(options.subscribers + 10),
    },
    name: 'stream',
    // A full collection before each memory reading: the heap figures are live objects, not garbage.
    nodeFlags: ['--expose-gc'],
  });
  process.once('SIGINT', () => void server.stop().then(() => process.exit(130)));
  let subscribers: Subscriber[] = [];
  let commits: CommitObserver | null = null;
  try {
    const { info } = server;
    const origin = info.descriptor.chains.find((chain) => chain.chainId === ORIGIN_CHAIN_ID);
    if (!origin) throw new Error(`the devnet has no chain ${ORIGIN_CHAIN_ID}`);
    if (info.descriptor.accounts.length === 0) throw new Error('the devnet descriptor has no funded test account');
    const wallets = info.descriptor.accounts.map((account) => createDepositWallet(origin, account));
    const fd = fileDescriptorCheck(options.subscribers, info.pid);

    receiver.key = await createWebhookKey(info.url, adminToken, receiver);
    const quoted = await quoteAll(info, origin, wallets, receiver.key, options.warmup + options.requests);
    const requests = quoted.slice(options.warmup);
    const requestIds = requests.map((request) => request.deposit.requestId.toLowerCase());
    const counts: Record<Protocol, number> = {
      'graphql-ws': Math.ceil(options.subscribers / 2),
      '/ws': Math.floor(options.subscribers / 2),
    };
    printHeader(info, options, counts, receiver, fd.line, server.schema.note);
    if (!fd.ok) console.error(`!!! open files ${fd.line}`);
    const warmup = await runWarmup(server, quoted.slice(0, options.warmup), receiver.key, receiver, options);

    const connections = await openSubscribers(server, requestIds, receiver.key, counts, options);
    subscribers = connections.subscribers;
    printConnections(connections);

    if (databaseUrl !== undefined) commits = await observeCommits(databaseUrl, server.schema.schema);
    const load = await runDeposits(info, requests, subscribers, receiver, options);
    const status = printReport(info, requests, subscribers, receiver, load, commits, warmup);
    const suppressed = server.suppressedLines();
    if (suppressed > 0)
      console.error(`(${suppressed} more server output lines not shown; GATEWAY_LOG_LEVEL=error hides warnings)`);
    return status;
  } finally {
    await commits?.close();
    await Promise.all(subscribers.map((subscriber) => subscriber.close().catch(() => undefined)));
    await receiver.close();
    await server.stop();
  }
}

runBench(main, USAGE);
