/**
 * The kill tests' harness: one devnet per file, and the gateway as a real child process
 * (`node --liftoff-only --import tsx src/server/main.ts --config <file>`) on PGlite in a data directory shared by every run of the
 * file, so a run started with `GATEWAY_CRASH_AT=<point>` SIGKILLs itself at that step (`src/core/faults.ts`) and the
 * next run recovers what it left. Child processes left running are killed and the devnet stopped after the file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect } from 'vitest';
import { startDevnet, type Devnet } from '../../src/chain/devnet.js';
import type { ChainConfig } from '../../src/core/chains/types.js';
import type { CrashPoint } from '../../src/core/faults.js';
import { parseConfigFile } from '../../src/server/configFile.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const main = path.join(root, 'src/server/main.ts');

/** One gateway process. */
export interface GatewayRun {
  /** Resolves with the base URL once the gateway listens; throws with its output when it exits first. */
  ready(): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  /** SIGTERM (a clean stop that lets running work finish), then expects exit status 0. */
  stop(): Promise<void>;
  dead(): boolean;
}

export interface GatewayProcesses {
  /** The file's devnet (set once the file's `beforeAll` hooks run). */
  readonly devnet: Devnet;
  /** Starts the gateway; with `crashAt`, it kills itself at that step. */
  start(crashAt?: CrashPoint): GatewayRun;
  /** How many gateway processes this file started so far. */
  started(): number;
  /** The PGlite data directory every run uses (a test may replace it between runs: a restored backup, a new one). */
  readonly dataDir: string;
}

export interface UseGatewayProcessesParameters {
  /** Names the temporary directory (`gateway-<name>-…`). */
  name: string;
  /** Variables added to every run's environment (intervals, minimums). */
  env?: Record<string, string>;
  /** How long a start may take before `ready` fails. Default 120 s (module loading is slow on a busy machine). */
  readyTimeoutMs?: number;
  /** Sections of the config file beside `chains` (`limits`, `quote`, ...). */
  config?: Record<string, unknown>;
}

/** A config file's chain: the JSON form of a `ChainConfig` (`docs/configuration.md`). */
function chainToFile(chain: ChainConfig) {
  const { explorerQueryParams: _notInTheFile, partialDisableLimit, ...rest } = chain;
  return { ...rest, partialDisableLimit: partialDisableLimit.toString() };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Registers the file's `beforeAll` (devnet, config file) and `afterAll` (kill, stop, remove) hooks. */
export function useGatewayProcesses(parameters: UseGatewayProcessesParameters): GatewayProcesses {
  const readyTimeoutMs = parameters.readyTimeoutMs ?? 120_000;
  const children: ChildProcess[] = [];
  let devnet: Devnet | undefined;
  let dir: string | undefined;
  let configFile = '';

  beforeAll(async () => {
    devnet = await startDevnet({ basePort: 0 });
    dir = await mkdtemp(path.join(tmpdir(), `gateway-${parameters.name}-`));
    configFile = path.join(dir, 'gateway.json');
    const chains = devnetChainConfigs(devnet.descriptor);
    const text = JSON.stringify({ ...parameters.config, chains: chains.map(chainToFile) }, null, 2);
    // The file carries everything the devnet needs (contracts, feeds, confirmations, block time) unchanged.
    expect(parseConfigFile(text, { GATEWAY_SOLVER_PRIVATE_KEY: devnet.descriptor.solver.privateKey }).chains).toEqual(
      chains,
    );
    await writeFile(configFile, text);
  }, 180_000);

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await devnet?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  function start(crashAt?: CrashPoint): GatewayRun {
    if (devnet === undefined || dir === undefined) throw new Error('start() before the devnet was started');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PORT: '0',
      GATEWAY_SOLVER_PRIVATE_KEY: devnet.descriptor.solver.privateKey,
      GATEWAY_DATA_DIR: path.join(dir, 'data'),
      GATEWAY_LOG_LEVEL: 'warn',
      ...parameters.env,
    };
    delete env.GATEWAY_CRASH_AT;
    if (crashAt !== undefined) env.GATEWAY_CRASH_AT = crashAt;
    // `--liftoff-only` as `npm start` runs the gateway (src/server/v8Tuning.ts): without it V8 also compiles PGlite's
    // WASM with its optimizing tier in the background at every start, CPU the other tests on the machine wait for.
    const child = spawn(process.execPath, ['--liftoff-only', '--import', 'tsx', main, '--config', configFile], {
      cwd: root,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('exit', (code, signal) => resolve({ code, signal })),
    );
    const dead = () => child.exitCode !== null || child.signalCode !== null;
    return {
      exited,
      output: () => output,
      async ready() {
        const deadline = Date.now() + readyTimeoutMs;
        while (Date.now() < deadline) {
          const match = /Gateway ready at (http:\/\/\S+)/.exec(output);
          if (match) return match[1]!;
          if (dead()) break;
          await sleep(50);
        }
        throw new Error(`the gateway did not start:\n${output}`);
      },
      dead,
      async stop() {
        if (!dead()) child.kill('SIGTERM');
        const { code } = await exited;
        expect(code, output).toBe(0);
      },
    };
  }

  return {
    get devnet() {
      if (devnet === undefined) throw new Error('the devnet is started by the beforeAll hook');
      return devnet;
    },
    start,
    started: () => children.length,
    get dataDir() {
      if (dir === undefined) throw new Error('the data directory is made by the beforeAll hook');
      return path.join(dir, 'data');
    },
  };
}
