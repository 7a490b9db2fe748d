/**
 * `npm run bench:fill`: how fast the solver fills. Native-ETH bridges 31337 → 31338 on the embedded devnet
 * (1 s blocks), a few in flight at once from the funded test accounts; for each, the time from the deposit's
 * block to the fill's broadcast and from the deposit's broadcast to `success`, as p50/p99/max beside the
 * block time. The gateway runs in a child process (`bench/server.ts`), as for `npm run bench`.
 *
 *   npm run bench:fill -- [--requests 200] [--concurrency 8] [--warmup 4] [--poll-ms 10] [--timeout 60]
 *
 * A request that fails (quote refused, deposit reverted, refund or failure) or does not reach `success` within
 * the timeout is listed with its first detail, and the exit status is 1.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { parseEther } from 'viem';
import type { DevnetChain } from '../src/chain/devnet.js';
import { devnetChainConfigs } from '../src/server/devnetConfig.js';
import { machineDescription, positiveInteger, positiveNumber, runBench, UsageError } from './cli.js';
import { createDepositWallet, runFillRequest, type DepositWallet, type FillTrace } from './fillRequest.js';
import { failureReport, intervals, intervalTable, REACTION_MS, TARGET, verdict } from './fillReport.js';
import type { BenchServerInfo } from './serverProcess.js';
import { startBlockClock, type BlockClock } from './blockClock.js';
import { createPublicClient, http } from 'viem';
import { machineCpuSeconds, processCpuSeconds, startBenchServer } from './serverProcess.js';

const ORIGIN_CHAIN_ID = 31337;
const DESTINATION_CHAIN_ID = 31338;
const MIN_AMOUNT = parseEther('0.01');
const MAX_AMOUNT = parseEther('0.05');

interface FillOptions {
  requests: number;
  concurrency: number;
  /** Requests run first and left out of the figures (cold caches, first nonce reads). */
  warmup: number;
  pollMs: number;
  timeoutMs: number;
}

const USAGE =
  'usage: npm run bench:fill -- [--requests 200] [--concurrency 8] [--warmup 4] [--poll-ms 10] [--timeout <s, default 60>]';

function parseOptions(argv: string[]): FillOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      requests: { type: 'string', default: '200' },
      concurrency: { type: 'string', default: '8' },
      warmup: { type: 'string', default: '4' },
      'poll-ms': { type: 'string', default: '10' },
      timeout: { type: 'string', default: '60' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) throw new UsageError('');
  const warmup = positiveNumber('--warmup', values.warmup, true);
  if (!Number.isInteger(warmup)) throw new UsageError(`--warmup must be a whole number, got '${values.warmup}'`);
  return {
    requests: positiveInteger('--requests', values.requests),
    concurrency: positiveInteger('--concurrency', values.concurrency),
    warmup,
    pollMs: positiveNumber('--poll-ms', values['poll-ms']),
    timeoutMs: positiveNumber('--timeout', values.timeout) * 1_000,
  };
}

/** Block time of the devnet in ms; null = automine. */
const blockTimeMsOf = (info: BenchServerInfo) => (info.blockTime === null ? null : info.blockTime * 1_000);

function printHeader(info: BenchServerInfo, options: FillOptions, wallets: DepositWallet[]): void {
  const origin = devnetChainConfigs(info.descriptor).find((chain) => chain.id === ORIGIN_CHAIN_ID);
  const blockTime = info.blockTime === null ? 'automine' : `${info.blockTime} s`;
  console.log(`
Fill benchmark
  machine      ${machineDescription()}
  node         ${process.version}
  database     ${info.database}
  devnet       ${info.descriptor.chains.length} anvil chains, block time ${blockTime}; origin confirmations ${origin?.confirmations ?? '?'}
  gateway      ${info.url} (pid ${info.pid})
  route        native ETH ${ORIGIN_CHAIN_ID} → ${DESTINATION_CHAIN_ID}, EXACT_INPUT, 0.01–0.05 ETH
  requests     ${options.requests} measured after ${options.warmup} warm-up, ${options.concurrency} in flight from ${wallets.length} test accounts
  pacing       each request starts after a random 0–1 block time pause (deposits land at random points of a block)
  client polls deposit receipt, then GET /intents/status/v3, every ${options.pollMs} ms; timeout ${options.timeoutMs / 1000} s per request
`);
}

/** Runs warm-up plus measured requests with `concurrency` clients; returns the traces in request order. */
async function runAll(
  info: BenchServerInfo,
  origin: DevnetChain,
  options: FillOptions,
  wallets: DepositWallet[],
): Promise<FillTrace[]> {
  const total = options.warmup + options.requests;
  const pauseMs = blockTimeMsOf(info) ?? 0;
  const traces: FillTrace[] = [];
  let next = 0;
  let done = 0;
  let failed = 0;
  const startedAt = performance.now();

  const client = async (clientIndex: number) => {
    const wallet = wallets[clientIndex % wallets.length]!;
    for (let index = next++; index < total; index = next++) {
      await new Promise((resolve) => setTimeout(resolve, Math.random() * pauseMs));
      const amount = MIN_AMOUNT + ((MAX_AMOUNT - MIN_AMOUNT) * BigInt(index)) / BigInt(total);
      const trace = await runFillRequest(index, {
        baseUrl: info.url,
        origin,
        destinationChainId: DESTINATION_CHAIN_ID,
        wallet,
        amount,
        pollMs: options.pollMs,
        timeoutMs: options.timeoutMs,
      });
      traces[index] = trace;
      done++;
      if (trace.failure !== null) failed++;
      if (done % 25 === 0 || done === total) {
        console.error(
          `  ${done}/${total} requests done, ${failed} failed, ${((performance.now() - startedAt) / 1000).toFixed(0)} s`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, (_, k) => client(k)));
  return traces;
}

const percent = (value: number | null) => (value === null ? 'n/a' : `${Math.round(value * 100)}%`);

/** CPU used during the run: the two processes in cores (1 = one core busy), null when it cannot be read. */
interface RunCpu {
  server: number | null;
  client: number;
  /** Busy fraction of the whole machine (every process: the anvil nodes, and anything else running). */
  machine: number | null;
  cores: number;
}

/** Prints the table, the notes and the verdict; returns the exit status. */
function printReport(
  info: BenchServerInfo,
  options: FillOptions,
  traces: FillTrace[],
  elapsedSeconds: number,
  cpu: RunCpu,
): number {
  const measured = traces.slice(options.warmup);
  const rows = intervals(measured);
  const blockTimeMs = blockTimeMsOf(info);
  const succeeded = measured.filter((trace) => trace.failure === null).length;
  const pendingMissed = rows.find((row) => row.name.startsWith('observed'))?.missing ?? 0;
  const perBlock = blockTimeMs === null ? 'n/a' : ((traces.length / elapsedSeconds) * (blockTimeMs / 1000)).toFixed(1);

  console.log(`block time ${blockTimeMs === null ? 'automine' : `${blockTimeMs} ms`} (both chains)\n`);
  console.log(intervalTable(rows, blockTimeMs));
  const late = measured.flatMap((trace) => (trace.blocks === undefined ? [] : [trace.blocks.blocksLate]));
  const onFloor = late.filter((blocks) => blocks === 0).length;
  console.log(`
fills in the floor's block (the first destination block ≥ ${REACTION_MS} ms after their deposit's block, ${REACTION_MS} ms = the targets' mined → observed + observed → broadcast): ${onFloor} of ${late.length}; later by 1: ${late.filter((b) => b === 1).length}, by 2 or more: ${late.filter((b) => b >= 2).length}; in an earlier block (faster than the floor assumes): ${late.filter((b) => b < 0).length}
${measured.length} measured requests: ${succeeded} succeeded, ${measured.length - succeeded} failed or timed out; ${traces.length} run in ${elapsedSeconds.toFixed(0)} s (${(traces.length / elapsedSeconds).toFixed(2)}/s)
\`pending\` skipped by the status poll: ${pendingMissed} of ${succeeded} (each lasted less than one poll, so the observed → broadcast row, over the rest, leans slow)
load: ${options.concurrency} in flight, ${perBlock} deposits per origin block on average (fills of one block queue on one destination sender)
CPU during the run: gateway ${percent(cpu.server)} and this client ${percent(cpu.client)} of one core; the machine ${percent(cpu.machine)} busy over its ${cpu.cores} cores, load average ${os.loadavg()[0]?.toFixed(1)} at the end
(the client's ${options.pollMs} ms polls cost both processes CPU, and other processes on this machine count: both are part of what is measured)

Clocks: "client" intervals are this process's monotonic clock; "server" is the gateway's \`updatedAt\` (Unix ms);
"server − client wall" compares \`updatedAt\` with this process's wall clock at the receipt (same machine).
"Observed" is the request's move to \`pending\`, recorded when the solver claims the confirmed deposit; "fill
broadcast" is the move to \`submitted\`, recorded once the node has accepted the fill.
`);
  console.log(verdict(rows, blockTimeMs).join('\n'));
  if (succeeded > 0 && pendingMissed === succeeded)
    console.log(`  (no \`pending\` was seen: try --poll-ms 2; target ${TARGET.observedToBroadcastP50Ms} ms)`);

  const failures = failureReport(traces);
  if (failures.length === 0) return 0;
  const warmupFailed = traces.slice(0, options.warmup).filter((trace) => trace.failure !== null).length;
  console.error(
    `\n!!! BENCHMARK INVALID: ${measured.length - succeeded} measured and ${warmupFailed} warm-up request(s) failed or timed out !!!\n${failures.join('\n')}\n`,
  );
  return 1;
}

/**
 * Puts on each successful trace when its deposit block, the next destination block after it, the first destination
 * block at least `REACTION_MS` after it (the floor) and its fill's block arrived. Read after the run, so the receipts' RPC calls do not load the measured span.
 */
async function addBlockTimes(
  traces: FillTrace[],
  clocks: { origin: BlockClock; destination: BlockClock },
  destinationRpcUrl: string,
): Promise<void> {
  const client = createPublicClient({ transport: http(destinationRpcUrl) });
  for (const trace of traces) {
    if (trace.failure !== null || trace.depositBlock === null || trace.fillTxHash === null) continue;
    const originAt = clocks.origin.arrivalOf(trace.depositBlock);
    if (originAt === undefined) continue;
    const next = clocks.destination.firstAfter(originAt);
    const first = clocks.destination.firstAfter(originAt + REACTION_MS);
    const fillBlock = (await client.getTransactionReceipt({ hash: trace.fillTxHash })).blockNumber;
    const fillAt = clocks.destination.arrivalOf(fillBlock);
    if (next === undefined || first === undefined || fillAt === undefined) continue;
    trace.blocks = {
      originAt,
      nextDestinationAt: next.at,
      firstDestinationAt: first.at,
      fillAt,
      blocksLate: Number(fillBlock - first.number),
    };
  }
}

async function main(): Promise<number> {
  const options = parseOptions(process.argv.slice(2));
  console.error('Starting the devnet and the gateway in a child process...');
  const server = await startBenchServer({ name: 'fill' });
  process.once('SIGINT', () => void server.stop().then(() => process.exit(130)));
  try {
    const { info } = server;
    const origin = info.descriptor.chains.find((chain) => chain.chainId === ORIGIN_CHAIN_ID);
    if (!origin) throw new Error(`the devnet has no chain ${ORIGIN_CHAIN_ID}`);
    if (info.descriptor.accounts.length === 0) throw new Error('the devnet descriptor has no funded test account');
    const wallets = info.descriptor.accounts.map((account) => createDepositWallet(origin, account));
    printHeader(info, options, wallets);

    const destination = info.descriptor.chains.find((chain) => chain.chainId === DESTINATION_CHAIN_ID);
    if (!destination) throw new Error(`the devnet has no chain ${DESTINATION_CHAIN_ID}`);
    const clocks = {
      origin: await startBlockClock(origin.chainId, origin.wsUrl),
      destination: await startBlockClock(destination.chainId, destination.wsUrl),
    };

    const serverBefore = processCpuSeconds(info.pid);
    const clientBefore = process.cpuUsage();
    const machineBefore = machineCpuSeconds();
    const startedAt = performance.now();
    const traces = await runAll(info, origin, options, wallets);
    const elapsedSeconds = (performance.now() - startedAt) / 1000;
    const serverAfter = processCpuSeconds(info.pid);
    const clientUsed = process.cpuUsage(clientBefore);
    const machineAfter = machineCpuSeconds();
    const cpu: RunCpu = {
      server: serverBefore === null || serverAfter === null ? null : (serverAfter - serverBefore) / elapsedSeconds,
      client: (clientUsed.user + clientUsed.system) / 1e6 / elapsedSeconds,
      machine:
        machineBefore === null || machineAfter === null
          ? null
          : (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total),
      cores: os.availableParallelism(),
    };

    await Promise.all([clocks.origin.stop(), clocks.destination.stop()]);
    await addBlockTimes(traces, clocks, destination.rpcUrl);
    const status = printReport(info, options, traces, elapsedSeconds, cpu);
    const suppressed = server.suppressedLines();
    if (suppressed > 0)
      console.error(`(${suppressed} more server output lines not shown; GATEWAY_LOG_LEVEL=error hides warnings)`);
    return status;
  } finally {
    await server.stop();
  }
}

runBench(main, USAGE);
