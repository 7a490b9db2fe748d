/**
 * `npm run bench:idle`: what the gateway costs when nobody uses it. Starts the benchmark server (the embedded
 * devnet with 1 s blocks and the gateway, as `npm start` runs them), lets it settle, then samples the gateway
 * process's CPU time and resident memory over a window (default 30 s) and prints its CPU as a share of one core,
 * its RSS at the end and its peak, and the V8 heap after a full collection. The anvil nodes are not counted.
 * With `--as-npm-start` it runs `npm start` itself, as a user does (free ports, nothing else set), and samples the
 * node process that runs `src/server/main.ts` (no V8 heap line: that process has no memory probe).
 *
 *   npm run bench:idle -- [--seconds 30] [--settle 5] [--as-npm-start]
 */
import { parseArgs } from 'node:util';
import { machineDescription, positiveNumber, runBench, UsageError } from './cli.js';
import { startNpmStart } from './npmStart.js';
import { processCpuSeconds, processMemoryMiB, startBenchServer, type BenchServerMemory } from './serverProcess.js';

const USAGE = 'usage: npm run bench:idle -- [--seconds 30] [--settle 5] [--as-npm-start]';

/** What is measured: the bench server's gateway or `npm start`'s. */
interface Measured {
  pid: number;
  database: string;
  devnet: string;
  memory(): Promise<BenchServerMemory | null>;
  stop(): Promise<void>;
}

async function startMeasured(asNpmStart: boolean): Promise<Measured> {
  if (asNpmStart) {
    console.error('Running npm start (free ports, nothing else set)...');
    const run = await startNpmStart();
    return {
      pid: run.pid,
      database: run.database,
      devnet: 'as npm start runs it (3 anvil chains, DEVNET_BLOCK_TIME or 1 s blocks)',
      memory: () => Promise.resolve(null),
      stop: () => run.stop(),
    };
  }
  console.error('Starting the devnet and the gateway in a child process...');
  const server = await startBenchServer({ name: 'idle', nodeFlags: ['--expose-gc'] });
  return {
    pid: server.info.pid,
    database: server.info.database,
    devnet: `${server.info.descriptor.chains.length} anvil chains, block time ${server.info.blockTime ?? 'automine'} s`,
    memory: () => server.memory(),
    stop: () => server.stop(),
  };
}

const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      seconds: { type: 'string', default: '30' },
      settle: { type: 'string', default: '5' },
      'as-npm-start': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) throw new UsageError('');
  const windowSeconds = positiveNumber('--seconds', values.seconds);
  const settleSeconds = positiveNumber('--settle', values.settle, true);

  const server = await startMeasured(values['as-npm-start']);
  process.once('SIGINT', () => void server.stop().then(() => process.exit(130)));
  try {
    const { pid } = server;
    await new Promise((resolve) => setTimeout(resolve, settleSeconds * 1_000));
    const before = processCpuSeconds(pid);
    const startedAt = performance.now();
    const samples: number[] = [];
    while (performance.now() - startedAt < windowSeconds * 1_000) {
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      const rss = processMemoryMiB(pid)?.rss;
      if (rss !== undefined) samples.push(rss);
    }
    const elapsed = (performance.now() - startedAt) / 1_000;
    const after = processCpuSeconds(pid);
    const memory = processMemoryMiB(pid);
    const heap = await server.memory();
    const cpu = before === null || after === null ? null : ((after - before) / elapsed) * 100;
    console.log(`
Idle benchmark
  machine   ${machineDescription()}
  node      ${process.version}
  process   ${values['as-npm-start'] ? `npm start's node process running src/server/main.ts (pid ${pid})` : `the bench server (pid ${pid})`}
  database  ${server.database}
  devnet    ${server.devnet}
  window    ${elapsed.toFixed(1)} s after ${settleSeconds} s to settle, no client

  gateway CPU     ${cpu === null ? 'n/a (no /proc)' : `${cpu.toFixed(2)}% of one core`}
  gateway RSS     ${memory === null ? 'n/a' : `${memory.rss.toFixed(0)} MiB now, ${Math.min(...samples).toFixed(0)}–${Math.max(...samples).toFixed(0)} MiB over the window, ${memory.peak.toFixed(0)} MiB peak since start`}
  V8 heap         ${heap === null ? 'n/a (no memory probe in npm start)' : `${mib(heap.heapUsed)} MiB used of ${mib(heap.heapTotal)} MiB${heap.collected ? ' after a full collection' : ''}; external ${mib(heap.external)} MiB (array buffers ${mib(heap.arrayBuffers)} MiB)`}
`);
    return 0;
  } finally {
    await server.stop();
  }
}

runBench(main, USAGE);
