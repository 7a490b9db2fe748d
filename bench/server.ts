/**
 * The benchmarks' server process, started by `bench/quote.ts` and `bench/fill.ts`: the embedded devnet (1 s
 * blocks, free ports) and the gateway on a free port, on PostgreSQL when `DATABASE_URL` is set, else on PGlite
 * in `GATEWAY_DATA_DIR`, else on PGlite in a fresh temporary directory removed at the end (`BENCH_PGLITE=memory`:
 * in memory). On disk by default, as a deployment that keeps its requests runs: in memory, PGlite's file system
 * grows its files by copying them whole, and those copies stall every request in flight for tens of
 * milliseconds, which would measure the in-memory file system rather than the gateway. It runs in its own
 * process so the load generator never competes with it for an event loop.
 *
 * Protocol: progress goes to stderr; exactly one JSON line on stdout, a `BenchServerInfo`, once everything
 * answers. SIGTERM, SIGINT or the end of stdin (the parent died) stops the gateway and every anvil node. A
 * `memory` line on stdin is answered with one `{"memory": BenchServerMemory}` line on stdout (after a full
 * collection when node runs with `--expose-gc`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startDevnet, type Devnet } from '../src/chain/devnet.js';
import { configFromEnvironment, type GatewayConfig } from '../src/server/config.js';
import { createServer, type GatewayServer } from '../src/server/createServer.js';
import { devnetChainConfigs } from '../src/server/devnetConfig.js';
import { tuneV8ForServing } from '../src/server/v8Tuning.js';
import { MEMORY_PROBE_COMMAND, type BenchServerInfo, type BenchServerMemory } from './serverProcess.js';

/** The same interval mining as `npm start`, so chain reads behave as they do in a real deployment. */
const BLOCK_TIME_SECONDS = 1;
/**
 * How long the gateway may take to stop before the devnet is stopped anyway: the parent kills this process
 * 15 s after SIGTERM, and the anvil nodes must not outlive it (a solver waiting on a stuck fill can take longer).
 */
const GATEWAY_STOP_TIMEOUT_MS = 10_000;

const progress = (message: string) => process.stderr.write(`[bench server] ${message}\n`);

let devnet: Devnet | null = null;
/** The temporary PGlite directory this process made, removed when it stops. */
let temporaryDataDir: string | null = null;
let server: GatewayServer | null = null;
let stopping = false;

async function stopAll(exitCode: number): Promise<never> {
  if (!stopping) {
    stopping = true;
    const gatewayStopped = server
      ?.stop()
      .catch((error: unknown) => console.error('[bench server] error stopping the gateway:', error));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        console.error(
          `[bench server] the gateway did not stop within ${GATEWAY_STOP_TIMEOUT_MS / 1000} s; stopping the devnet anyway`,
        );
        resolve();
      }, GATEWAY_STOP_TIMEOUT_MS);
    });
    await Promise.race([gatewayStopped, timeout]);
    clearTimeout(timer);
    await devnet?.stop().catch((error: unknown) => console.error('[bench server] error stopping the devnet:', error));
    if (temporaryDataDir !== null) rmSync(temporaryDataDir, { recursive: true, force: true });
  }
  process.exit(exitCode);
}

/** Describes the database without leaking a password from `DATABASE_URL`. */
function describeDatabase(config: Pick<GatewayConfig, 'databaseUrl' | 'dataDir'>): string {
  if (config.databaseUrl) {
    const url = new URL(config.databaseUrl);
    if (url.password) url.password = '***';
    return `PostgreSQL (${url.toString()})`;
  }
  if (!config.dataDir) return 'PGlite (in memory)';
  return config.dataDir === temporaryDataDir
    ? `PGlite on disk (${config.dataDir}, removed at the end)`
    : `PGlite (${config.dataDir})`;
}

/** JSON with bigints as decimal strings, as `writeDevnetDescriptor` writes them. */
const toJson = (value: unknown) =>
  JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));

function reportMemory(): void {
  const collect = globalThis.gc;
  if (collect !== undefined) collect();
  const collected = collect !== undefined;
  const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
  const memory: BenchServerMemory = { rss, heapTotal, heapUsed, external, arrayBuffers, collected };
  process.stdout.write(`${JSON.stringify({ memory })}\n`);
}

async function main(): Promise<void> {
  tuneV8ForServing();
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));
  // A closed stdin means the load generator is gone (even killed with SIGKILL): never outlive it.
  process.stdin.on('end', () => void stopAll(0));
  process.stdin.resume();
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line.trim() === MEMORY_PROBE_COMMAND) reportMemory();
  });

  progress('starting the devnet (three anvil chains)...');
  devnet = await startDevnet({ basePort: 0, blockTime: BLOCK_TIME_SECONDS });
  if (stopping) return;

  // The bench owns port, host and log level; DATABASE_URL, GATEWAY_DATA_DIR and the rest pass through.
  const env: Record<string, string | undefined> = {
    ...process.env,
    PORT: '0',
    HOST: '127.0.0.1',
    GATEWAY_LOG_LEVEL: process.env.GATEWAY_LOG_LEVEL ?? 'warn',
  };
  if (!env.DATABASE_URL && !env.GATEWAY_DATA_DIR && env.BENCH_PGLITE !== 'memory') {
    temporaryDataDir = mkdtempSync(join(tmpdir(), 'gateway-bench-'));
    env.GATEWAY_DATA_DIR = temporaryDataDir;
  }
  const config = configFromEnvironment(env, devnetChainConfigs(devnet.descriptor), devnet.descriptor.solver.privateKey);
  progress(`starting the gateway on ${describeDatabase(config)}...`);
  server = await createServer(config);
  const url = await server.start();
  if (stopping) return;

  const info: BenchServerInfo = {
    url,
    descriptor: devnet.descriptor,
    database: describeDatabase(config),
    pid: process.pid,
    blockTime: devnet.descriptor.chains[0]?.blockTime ?? null,
  };
  process.stdout.write(`${toJson(info)}\n`);
}

main().catch((error: unknown) => {
  console.error('[bench server] failed to start:', error);
  // Never leave anvil children behind when start-up fails half way.
  void stopAll(1);
});
