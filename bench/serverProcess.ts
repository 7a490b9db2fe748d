/**
 * The load generator's side of `bench/server.ts`: starts it as a child process, waits for its ready line,
 * keeps its log output from flooding the terminal, reads its CPU time and memory from /proc (and its V8 heap
 * through the stdin probe), and stops it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { benchSchema, type BenchSchema } from './schema.js';
import type { DevnetDescriptor } from '../src/chain/devnet.js';

const SERVER_READY_TIMEOUT_MS = 180_000;
/**
 * Server output lines shown after start-up: a failing route logs a warning per request, and forwarding
 * thousands of them would flood the terminal and load both processes.
 */
const MAX_FORWARDED_LINES = 5;
const MAX_FORWARDED_CHARS = 400;
/** Linux reports process CPU times in USER_HZ ticks, 100 per second on every mainstream architecture. */
const USER_HZ = 100;

/** The line the server prints on stdout when it is ready. */
export interface BenchServerInfo {
  /** Base URL of the gateway, no trailing slash. */
  url: string;
  descriptor: DevnetDescriptor;
  /** Human-readable database in use, credentials removed. */
  database: string;
  /** Process id of the gateway (this process), for reading its RSS and CPU time. */
  pid: number;
  /** Devnet block time in seconds; null = automine. */
  blockTime: number | null;
}

/** What the load generator writes on stdin to ask for a `BenchServerMemory` line. */
export const MEMORY_PROBE_COMMAND = 'memory';

/** `process.memoryUsage()` of the gateway process, in bytes. */
export interface BenchServerMemory {
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** Whether a full collection of the main thread's heap ran just before (node started with `--expose-gc`). */
  collected: boolean;
}

const MEMORY_PROBE_TIMEOUT_MS = 30_000;

export interface BenchServer {
  info: BenchServerInfo;
  /** Server output lines not shown (beyond MAX_FORWARDED_LINES). */
  suppressedLines(): number;
  /**
   * The gateway process's memory as it sees it (`process.memoryUsage()`), after a full collection of the main
   * thread's heap when the server was started with `nodeFlags: ['--expose-gc']`.
   */
  memory(): Promise<BenchServerMemory>;
  /** The PostgreSQL schema of this run (see `benchSchema`): its name, if any, and a note for the header. */
  schema: Pick<BenchSchema, 'schema' | 'note'>;
  /** Stops the gateway and the devnet, waits for the process to exit, and drops the run's own schema. */
  stop(): Promise<void>;
}

export interface StartBenchServerOptions {
  /** Variables added to this process's environment for the server (e.g. `GATEWAY_ADMIN_TOKEN`). */
  env?: Record<string, string>;
  /** Extra node flags of the server process, e.g. `['--expose-gc']` so `memory()` collects first. */
  nodeFlags?: string[];
  /** Names the run's own PostgreSQL schema (`bench_<name>_…`) when `DATABASE_URL` is set. Default `run`. */
  name?: string;
  /**
   * Sees each line of the server's output after it is ready (not the memory probe's answers) before it is
   * forwarded; returning true keeps the line from being forwarded or counted as suppressed.
   */
  onLine?: (line: string) => boolean;
}

/**
 * Node flags for the server process only, from `BENCH_SERVER_NODE_FLAGS` (space-separated), e.g.
 * `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile the gateway under a benchmark's load: node refuses `--cpu-prof`
 * in `NODE_OPTIONS`, and there it would profile the load generator too.
 */
function profilingFlags(): string[] {
  return (process.env.BENCH_SERVER_NODE_FLAGS ?? '').split(' ').filter((flag) => flag !== '');
}

/**
 * Every benchmark's load comes from this one address. The anonymous rate limit (60,000 a minute by default) is
 * below what `bench:soak` sends (half the 16-client maximum, ~1,000 quotes a second on this machine): it refused
 * ~1,400 quotes and status polls at every window's end. It is raised, not switched off, so its counting stays in
 * the measured path. The environment still overrides it.
 */
const benchDefaults = { GATEWAY_RATE_LIMIT_ANONYMOUS_PER_MINUTE: '100000000' };

/** Starts `bench/server.ts` in a child node process and waits for its ready line. */
export async function startBenchServer(options: StartBenchServerOptions = {}): Promise<BenchServer> {
  const script = fileURLToPath(new URL('./server.ts', import.meta.url));
  // A caller that names the schema owns it (bench:growth's stores): none of this run's own to create or drop. Both
  // names are made from the same millisecond clock, so one made in the same millisecond was the same schema, and
  // the server's stop dropped the caller's table.
  const given = options.env?.GATEWAY_DATABASE_SCHEMA;
  const runSchema: BenchSchema =
    given === undefined
      ? benchSchema(options.name ?? 'run')
      : { env: {}, schema: given, note: `, schema ${given}`, drop: async () => undefined };
  // Node itself (not the tsx CLI, which adds a wrapper process) so the child's pid is the gateway's.
  const child = spawn(
    process.execPath,
    [
      // As `npm start` runs the gateway (see `tuneV8ForServing`); `BENCH_SERVER_NODE_FLAGS=--no-liftoff-only` undoes it.
      '--liftoff-only',
      ...(options.nodeFlags ?? []),
      ...profilingFlags(),
      '--import',
      import.meta.resolve('tsx'),
      script,
    ],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...benchDefaults, ...process.env, ...runSchema.env, ...options.env },
    },
  );
  let stopping = false;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', (code, signal) => {
    if (stopping) return;
    console.error(`\nThe bench server exited unexpectedly (${signal ?? `status ${code}`}).`);
    process.exit(1);
  });
  const memoryAnswers: Array<(memory: BenchServerMemory) => void> = [];
  const output = forwardOutput(child, (memory) => memoryAnswers.shift()?.(memory), options.onLine);
  const info = await output.ready;
  const stop = async () => {
    stopping = true;
    child.kill('SIGTERM');
    const killTimer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(killTimer);
    await runSchema.drop();
  };
  const memory = () =>
    new Promise<BenchServerMemory>((resolve, reject) => {
      const answer = (value: BenchServerMemory) => {
        clearTimeout(timer);
        resolve(value);
      };
      const timer = setTimeout(() => {
        // A late answer must not be taken for the next probe's.
        memoryAnswers.splice(memoryAnswers.indexOf(answer), 1, () => undefined);
        reject(
          new Error(`the bench server did not answer the memory probe within ${MEMORY_PROBE_TIMEOUT_MS / 1000} s`),
        );
      }, MEMORY_PROBE_TIMEOUT_MS);
      memoryAnswers.push(answer);
      child.stdin?.write(`${MEMORY_PROBE_COMMAND}\n`);
    });
  return {
    info,
    schema: { schema: runSchema.schema, note: runSchema.note },
    stop,
    memory,
    suppressedLines: () => output.suppressed,
  };
}

/**
 * Reads the child's stdout: `ready` resolves with the first line shaped like `BenchServerInfo`; answers of the
 * memory probe go to `onMemory`; other lines go to `onLine` once ready, and those it does not keep (gateway
 * warnings) go to stderr, the first few of them, and the rest are only counted.
 */
function forwardOutput(
  child: ChildProcess,
  onMemory: (memory: BenchServerMemory) => void,
  onLine: ((line: string) => boolean) | undefined,
): { ready: Promise<BenchServerInfo>; readonly suppressed: number } {
  const state = { forwarded: 0, suppressed: 0 };
  const ready = new Promise<BenchServerInfo>((resolve, reject) => {
    if (!child.stdout) return reject(new Error('the bench server has no stdout'));
    let isReady = false;
    const timer = setTimeout(
      () => reject(new Error(`the bench server was not ready within ${SERVER_READY_TIMEOUT_MS / 1000} s`)),
      SERVER_READY_TIMEOUT_MS,
    );
    createInterface({ input: child.stdout }).on('line', (line) => {
      const info = isReady ? null : parseServerInfo(line);
      if (info) {
        isReady = true;
        clearTimeout(timer);
        return resolve(info);
      }
      const memory = isReady ? parseMemoryAnswer(line) : null;
      if (memory) return onMemory(memory);
      if (isReady && onLine?.(line) === true) return;
      if (state.forwarded >= MAX_FORWARDED_LINES) return void state.suppressed++;
      state.forwarded++;
      const shown = line.length > MAX_FORWARDED_CHARS ? `${line.slice(0, MAX_FORWARDED_CHARS)}…` : line;
      process.stderr.write(`[bench server] ${shown}\n`);
    });
  });
  return {
    ready,
    get suppressed() {
      return state.suppressed;
    },
  };
}

function parseServerInfo(line: string): BenchServerInfo | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) return null;
  const candidate = value as Partial<Record<keyof BenchServerInfo, unknown>>;
  const shaped =
    typeof candidate.url === 'string' && typeof candidate.descriptor === 'object' && typeof candidate.pid === 'number';
  return shaped ? (value as BenchServerInfo) : null;
}

function parseMemoryAnswer(line: string): BenchServerMemory | null {
  if (!line.startsWith('{"memory":')) return null;
  try {
    const { memory } = JSON.parse(line) as { memory: BenchServerMemory };
    return typeof memory?.rss === 'number' && typeof memory.heapUsed === 'number' ? memory : null;
  } catch {
    return null;
  }
}

/** User plus system CPU seconds of a process, all threads; null off Linux. */
export function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may contain spaces); utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / USER_HZ;
  } catch {
    return null;
  }
}

/** Resident and peak resident memory in MiB from /proc; null off Linux. */
export function processMemoryMiB(pid: number): { rss: number; peak: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rss: kib('VmRSS') / 1024, peak: kib('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** Busy and total CPU seconds of the whole machine, all cores, since boot (from /proc/stat); null off Linux. */
export function machineCpuSeconds(): { busy: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    // cpu  user nice system idle iowait irq softirq steal ...: idle and iowait are the idle time.
    const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number);
    const total = ticks.reduce((sum, value) => sum + value, 0);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    return { busy: (total - idle) / USER_HZ, total: total / USER_HZ };
  } catch {
    return null;
  }
}

/** CPU seconds of the gateway process's threads, by kind (see `threadCpuSeconds`). */
export interface ThreadCpu {
  /** The main thread: HTTP, the quote, kysely. */
  main: number;
  /** Node worker threads (`WorkerThread`): on PGlite, the database's worker. */
  worker: number;
  /** V8's helper threads (`V8Worker`): parallel scavenges, concurrent marking, optimizing compiles. */
  v8: number;
  /** Everything else (libuv's pool, node's platform and inspector threads). */
  other: number;
}

/**
 * CPU seconds per kind of thread of a process, from each thread's `/proc/<pid>/task/<tid>/schedstat` (time on
 * a CPU, in nanoseconds); null off Linux. A thread that ended between two samples drops out of the later one,
 * so a difference is only meaningful for threads that live through it (all of the gateway's do).
 */
export function threadCpuSeconds(pid: number): ThreadCpu | null {
  const cpu: ThreadCpu = { main: 0, worker: 0, v8: 0, other: 0 };
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return null;
  }
  for (const tid of tids) {
    let seconds: number;
    let name: string;
    try {
      seconds = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ', 1)[0]) / 1e9;
      name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
    } catch {
      continue; // ended meanwhile
    }
    const kind: keyof ThreadCpu =
      tid === String(pid) ? 'main' : name === 'WorkerThread' ? 'worker' : name.startsWith('V8') ? 'v8' : 'other';
    cpu[kind] += seconds;
  }
  return cpu;
}
