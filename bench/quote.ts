/**
 * `npm run bench`: quotes per second and p50/p99 latency at 1, 16 and 64 closed-loop clients on the embedded
 * devnet, beside a trivial route (`GET /health`) of the same server in the same run, so the table shows what
 * the quote costs over bare HTTP on this machine. A DEX route (ETH on 31337 → LONG on 31338: LONG has no feed
 * and no inventory, so the quote is priced from the pools in memory) runs beside the bridge, and the RPC requests
 * the gateway makes to the chains in each window are counted from `/metrics`: the trivial route's count is the
 * background (heads, watchers, the pool refresh), and what a quote route adds over it is its quote path's. The gateway runs in a child process (`bench/server.ts`) so
 * this process, busy generating load, never shares its event loop.
 *
 *   npm run bench -- [--duration 8] [--warmup 2] [--concurrency 1,16,64] [--route eth|erc20] [--users 1]
 *                    [--skip-dex] [--quote-endpoint "GET /chains"]   (debugging only: measure another route)
 *
 * Any non-200 response is an error: listed with its status and first body, and the exit status is 1.
 */
import { parseArgs } from 'node:util';
import { parseEther, parseUnits, zeroAddress, type Address } from 'viem';
import { machineDescription, positiveNumber, runBench, UsageError } from './cli.js';
import { runLoad, type BenchRequest, type RequestFactory } from './load.js';
import {
  countOf,
  errorReport,
  fixed,
  progressLine,
  ratioTable,
  resultsTable,
  summarize,
  threadTable,
  type ScenarioRow,
  type Summary,
} from './report.js';
import type { BenchServerInfo } from './serverProcess.js';
import { processCpuSeconds, processMemoryMiB, startBenchServer, type BenchServer } from './serverProcess.js';
import { windowCpu } from './windowCpu.js';

/** Issue #14's targets: at 16 clients ≥ 1,800 quotes/s and p99 < 25 ms; at 64 clients p99 < 50 ms. */
const TARGETS: ReadonlyArray<{ concurrency: number; perSecond?: number; p99Ms: number }> = [
  { concurrency: 16, perSecond: 1800, p99Ms: 25 },
  { concurrency: 64, p99Ms: 50 },
];
const ORIGIN_CHAIN_ID = 31337;
const DESTINATION_CHAIN_ID = 31338;
const TRIVIAL: BenchRequest = { method: 'GET', path: '/health' };
/** Distinct amounts per scenario before they repeat: far more than one run sends, so no two bodies are equal. */
const AMOUNT_STEPS = 4_000_000;

interface BenchOptions {
  durationSeconds: number;
  warmupSeconds: number;
  concurrencies: number[];
  route: 'eth' | 'erc20';
  /**
   * How many users the quotes rotate over. 1 (the default): every quote is the funded test account's, so quotes in
   * one block share its balance read (`sameHead`). More: the i-th quote is user i mod n, an unfunded address of its
   * own (a quote shows the user's balance, it does not need one), so up to n quotes in a row read a balance each.
   */
  users: number;
  /** The quote's method and path; only `--quote-endpoint` changes it. */
  quoteEndpoint: { method: BenchRequest['method']; path: string };
  /** True when `--quote-endpoint` replaced the real quote: the target verdict then means nothing. */
  standIn: boolean;
  /** Whether the DEX route runs beside the bridge (`--skip-dex` leaves it out). */
  dex: boolean;
}

/** The DEX route's target: its p50 within this factor of the bridge's at the same concurrency. */
const DEX_P50_FACTOR = 1.3;

const USAGE = `usage: npm run bench -- [--duration <s>] [--warmup <s>] [--concurrency 1,16,64] [--route eth|erc20] [--users 1] [--skip-dex] [--quote-endpoint "GET /chains"]`;

function parseOptions(argv: string[]): BenchOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      duration: { type: 'string', default: '8' },
      warmup: { type: 'string', default: '2' },
      concurrency: { type: 'string', default: '1,16,64' },
      route: { type: 'string', default: 'eth' },
      users: { type: 'string', default: '1' },
      'quote-endpoint': { type: 'string' },
      'skip-dex': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) throw new UsageError('');
  const durationSeconds = positiveNumber('--duration', values.duration);
  const warmupSeconds = positiveNumber('--warmup', values.warmup, true);
  const concurrencies = values.concurrency.split(',').map((part) => positiveNumber('--concurrency', part));
  if (!concurrencies.every(Number.isInteger)) throw new UsageError('--concurrency takes whole numbers, e.g. 1,16,64');
  if (values.route !== 'eth' && values.route !== 'erc20')
    throw new UsageError(`--route must be eth or erc20, got '${values.route}'`);
  const users = positiveNumber('--users', values.users);
  if (!Number.isInteger(users)) throw new UsageError(`--users takes a whole number, got '${values.users}'`);
  const endpoint = values['quote-endpoint'];
  return {
    durationSeconds,
    warmupSeconds,
    concurrencies,
    route: values.route,
    users,
    quoteEndpoint: endpoint === undefined ? { method: 'POST', path: '/quote/v2' } : parseEndpoint(endpoint),
    standIn: endpoint !== undefined,
    dex: !values['skip-dex'] && endpoint === undefined,
  };
}

function parseEndpoint(text: string): BenchOptions['quoteEndpoint'] {
  const match = /^(GET|POST)\s+(\/\S*)$/.exec(text.trim());
  if (!match?.[1] || !match[2])
    throw new UsageError(`--quote-endpoint must look like "GET /chains" or "POST /quote/v2", got '${text}'`);
  return { method: match[1] === 'GET' ? 'GET' : 'POST', path: match[2] };
}

/** The i-th of AMOUNT_STEPS evenly spaced amounts in [min, max). */
const spread = (min: bigint, max: bigint, index: number) =>
  min + ((max - min) * BigInt(index % AMOUNT_STEPS)) / BigInt(AMOUNT_STEPS);

/**
 * Quote bodies for a devnet bridge 31337 → 31338 from a funded test account, EXACT_INPUT: native ETH
 * (0.01–0.05) or USDC (10–50). The amount changes on every request, so nothing can be answered from a cache
 * of identical requests.
 */
function quoteRequests(info: BenchServerInfo, options: BenchOptions): RequestFactory {
  const funded = info.descriptor.accounts[0]?.address;
  if (!funded) throw new Error('the devnet descriptor has no funded test account');
  const userOf = (index: number): Address =>
    options.users === 1 ? funded : `0x${(0xbe0c_0000_0000 + (index % options.users)).toString(16).padStart(40, '0')}`;
  const pair = options.route === 'eth' ? ethPair() : usdcPair(info);
  const { method, path } = options.quoteEndpoint;
  return (index) => {
    if (method === 'GET') return { method, path };
    const body = {
      user: userOf(index),
      originChainId: ORIGIN_CHAIN_ID,
      destinationChainId: DESTINATION_CHAIN_ID,
      originCurrency: pair.origin,
      destinationCurrency: pair.destination,
      amount: spread(pair.min, pair.max, index).toString(),
      tradeType: 'EXACT_INPUT',
    };
    return { method, path, body: JSON.stringify(body) };
  };
}

/** Quote bodies for ETH (0.01–0.05) on 31337 → LONG on 31338, EXACT_INPUT, from the funded test account. */
function dexRequests(info: BenchServerInfo): RequestFactory {
  const funded = info.descriptor.accounts[0]?.address;
  const long = info.descriptor.chains
    .find((chain) => chain.chainId === DESTINATION_CHAIN_ID)
    ?.longTailTokens.find((t) => t.symbol === 'LONG');
  if (!funded || !long) throw new Error('the devnet descriptor has no funded account or no LONG on 31338');
  const { min, max } = ethPair();
  return (index) => ({
    method: 'POST',
    path: '/quote/v2',
    body: JSON.stringify({
      user: funded,
      originChainId: ORIGIN_CHAIN_ID,
      destinationChainId: DESTINATION_CHAIN_ID,
      originCurrency: zeroAddress,
      destinationCurrency: long.address,
      amount: spread(min, max, index).toString(),
      tradeType: 'EXACT_INPUT',
    }),
  });
}

/** The RPC requests the gateway has made to the chains (its `/metrics` histogram counts), all chains together. */
async function rpcRequestCount(url: string): Promise<number | null> {
  try {
    const response = await fetch(`${url}/metrics`);
    if (!response.ok) return null;
    let total = 0;
    for (const line of (await response.text()).split('\n')) {
      if (line.startsWith('gateway_rpc_request_duration_seconds_count')) total += Number(line.split(' ').pop());
    }
    return total;
  } catch {
    return null;
  }
}

interface CurrencyPair {
  origin: Address;
  destination: Address;
  min: bigint;
  max: bigint;
}

const ethPair = (): CurrencyPair => ({
  origin: zeroAddress,
  destination: zeroAddress,
  min: parseEther('0.01'),
  max: parseEther('0.05'),
});

function usdcPair(info: BenchServerInfo): CurrencyPair {
  const usdcOn = (chainId: number) => {
    const token = info.descriptor.chains
      .find((chain) => chain.chainId === chainId)
      ?.tokens.find((t) => t.symbol === 'USDC');
    if (!token) throw new Error(`the devnet has no USDC on chain ${chainId}`);
    return token;
  };
  const origin = usdcOn(ORIGIN_CHAIN_ID);
  return {
    origin: origin.address,
    destination: usdcOn(DESTINATION_CHAIN_ID).address,
    min: parseUnits('10', origin.decimals),
    max: parseUnits('50', origin.decimals),
  };
}

/**
 * Runs one scenario and records how much CPU the server and this process spent on it: the server's over the
 * measuring window only (and by thread), with the warm-up's beside it.
 */
async function measure(
  server: BenchServer,
  scenario: string,
  request: RequestFactory,
  concurrency: number,
  options: BenchOptions,
): Promise<ScenarioRow> {
  const { pid } = server.info;
  const sample = request(0);
  const serverCpuBefore = processCpuSeconds(pid);
  const clientCpuBefore = process.cpuUsage();
  const startedAt = process.hrtime.bigint();
  const window = windowCpu(pid);
  const rpcBefore = await rpcRequestCount(server.info.url);
  const result = await runLoad({
    baseUrl: server.info.url,
    concurrency,
    warmupSeconds: options.warmupSeconds,
    durationSeconds: options.durationSeconds,
    nextRequest: request,
    onWindow: window.onWindow,
  });
  const elapsed = Number(process.hrtime.bigint() - startedAt) / 1e9;
  const rpcAfter = await rpcRequestCount(server.info.url);
  const serverCpuAfter = processCpuSeconds(pid);
  const clientCpu = process.cpuUsage(clientCpuBefore);
  const serverCpu = window.result();
  return {
    scenario,
    endpoint: `${sample.method} ${sample.path}`,
    result,
    serverCores: serverCpu?.cores ?? null,
    serverThreads: serverCpu?.threads ?? null,
    serverCoresWithWarmup:
      serverCpuAfter === null || serverCpuBefore === null ? null : (serverCpuAfter - serverCpuBefore) / elapsed,
    clientCores: (clientCpu.user + clientCpu.system) / 1e6 / elapsed,
    rpcRequests: rpcBefore === null || rpcAfter === null ? null : rpcAfter - rpcBefore,
    seconds: elapsed,
  };
}

function printHeader(info: BenchServerInfo, options: BenchOptions): void {
  const quote = options.standIn
    ? `${options.quoteEndpoint.method} ${options.quoteEndpoint.path}  (STAND-IN via --quote-endpoint: not the quote)`
    : `${options.quoteEndpoint.method} ${options.quoteEndpoint.path}, ${options.route === 'eth' ? 'ETH 0.01–0.05' : 'USDC 10–50'} ${ORIGIN_CHAIN_ID} → ${DESTINATION_CHAIN_ID}, EXACT_INPUT, amount varies per request, ${options.users === 1 ? 'one funded user (its balance read is shared within a block)' : `${options.users} users in turn (unfunded: a balance read each)`}`;
  console.log(`
Quote benchmark
  machine     ${machineDescription()}
  node        ${process.version}
  database    ${info.database}
  devnet      ${info.descriptor.chains.length} anvil chains, block time ${info.blockTime === null ? 'automine' : `${info.blockTime} s`}
  gateway     ${info.url} (pid ${info.pid})
  quote       ${quote}
  dex         ${options.dex ? `POST /quote/v2, ETH 0.01–0.05 ${ORIGIN_CHAIN_ID} → LONG ${DESTINATION_CHAIN_ID} (no feed, no inventory: priced from the pools in memory)` : 'skipped'}
  trivial     ${TRIVIAL.method} ${TRIVIAL.path}
  clients     ${options.concurrencies.join(', ')} (closed loop, keep-alive, one connection each)
  window      ${options.warmupSeconds} s warm-up, then ${options.durationSeconds} s measured per route and concurrency
`);
}

/** Prints the tables, errors and verdict; returns the process exit status. */
function printReport(rows: ScenarioRow[], options: BenchOptions, memory: { rss: number; peak: number } | null): number {
  const quote = rows.filter((row) => row.scenario === 'quote').map(summarize);
  const trivial = rows.filter((row) => row.scenario === 'trivial').map(summarize);
  console.log(
    `\n${resultsTable(rows)}\n\nreq/s counts 200 responses only; p50/p99 are over 200 responses; CPU is in cores (100% = one core); server CPU and ms/req are the server's CPU over the measuring window (not the warm-up), per 200 response.\n`,
  );
  console.log(
    `Server CPU per 200 response over the window, ms, by thread (on PGlite the worker is the database):\n${threadTable(rows)}\n`,
  );
  console.log(`${ratioTable(quote, trivial)}\n`);
  if (memory) console.log(`server RSS at the end: ${memory.rss.toFixed(0)} MiB (peak ${memory.peak.toFixed(0)} MiB)`);
  printDexReport(rows, quote);

  for (const target of TARGETS) {
    const atTarget = quote.find((s) => s.concurrency === target.concurrency);
    const goal = `target at ${target.concurrency} clients: ${target.perSecond === undefined ? '' : `≥ ${target.perSecond} quotes/s and `}p99 < ${target.p99Ms} ms`;
    if (!atTarget) {
      console.log(`${goal}: not measured (no ${target.concurrency} in --concurrency)`);
      continue;
    }
    const met =
      atTarget.errors === 0 &&
      (target.perSecond === undefined || atTarget.perSecond >= target.perSecond) &&
      atTarget.p99Ms < target.p99Ms;
    const figures = `${atTarget.perSecond.toFixed(0)} quotes/s, p99 ${Number.isFinite(atTarget.p99Ms) ? atTarget.p99Ms.toFixed(2) : '—'} ms`;
    console.log(
      `${goal}: ${met ? 'MET' : 'NOT MET'} (${figures})${options.standIn ? '  [stand-in route: meaningless]' : ''}`,
    );
  }
  console.log('(the 16-client target is met when three consecutive runs meet it)');

  const failures = errorReport(rows);
  if (failures.length === 0) return 0;
  const total = rows.reduce((sum, row) => sum + countOf(row.result.errors) + countOf(row.result.warmupErrors), 0);
  console.error(
    `\n!!! BENCHMARK INVALID: ${total} request(s) failed (non-200 or network error) !!!\n${failures.join('\n')}\n`,
  );
  return 1;
}

/**
 * The DEX route against the bridge: p50 and p99 side by side, the p50 ratio against its target, and the RPC
 * requests each window made (warm-up included) beside the trivial route's, per thousand 200 responses.
 */
function printDexReport(rows: ScenarioRow[], bridge: Summary[]): void {
  const dex = rows.filter((row) => row.scenario === 'dex');
  if (dex.length === 0) return;
  const lines = dex.map((row) => {
    const d = summarize(row);
    const b = bridge.find((s) => s.concurrency === d.concurrency);
    const ratio = b === undefined ? NaN : d.p50Ms / b.p50Ms;
    const verdict = Number.isFinite(ratio) ? (ratio <= DEX_P50_FACTOR ? 'MET' : 'NOT MET') : '—';
    return `  ${String(d.concurrency).padStart(3)} clients: dex p50 ${fixed(d.p50Ms, 2)} ms, p99 ${fixed(d.p99Ms, 2)} ms; bridge p50 ${b === undefined ? '—' : fixed(b.p50Ms, 2)} ms; ratio ${fixed(ratio, 2)} (target ≤ ${DEX_P50_FACTOR}: ${verdict})`;
  });
  console.log(`DEX route (ETH → LONG) beside the bridge:\n${lines.join('\n')}\n`);
  const rpc = rows.map((row) => {
    const responses = row.result.latenciesMs.length;
    const perThousand =
      row.rpcRequests === null || responses === 0 ? '—' : fixed((row.rpcRequests! * 1000) / responses, 1);
    return `  ${row.scenario.padEnd(8)} ${String(row.result.concurrency).padStart(3)} clients: ${row.rpcRequests ?? '—'} RPC requests in ${fixed(row.seconds ?? NaN, 1)} s (${perThousand} per 1000 responses)`;
  });
  console.log(
    `RPC requests to the chains during each run (warm-up and window; the trivial route's count is the background: heads, watchers, pool refresh):\n${rpc.join('\n')}\n`,
  );
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  console.error('Starting the devnet and the gateway in a child process...');
  const server = await startBenchServer({ name: 'quote' });
  process.once('SIGINT', () => void server.stop().then(() => process.exit(130)));
  try {
    printHeader(server.info, options);
    const scenarios: [string, RequestFactory][] = [
      ['quote', quoteRequests(server.info, options)],
      ...(options.dex ? [['dex', dexRequests(server.info)] as [string, RequestFactory]] : []),
      ['trivial', () => TRIVIAL],
    ];
    const rows: ScenarioRow[] = [];
    for (const concurrency of options.concurrencies) {
      for (const [name, request] of scenarios) {
        const row = await measure(server, name, request, concurrency, options);
        console.error(progressLine(summarize(row)));
        rows.push(row);
      }
    }
    const status = printReport(rows, options, processMemoryMiB(server.info.pid));
    const suppressed = server.suppressedLines();
    if (suppressed > 0)
      console.error(`(${suppressed} more server output lines not shown; GATEWAY_LOG_LEVEL=error hides warnings)`);
    return status;
  } finally {
    await server.stop();
  }
}

runBench(main, USAGE);
