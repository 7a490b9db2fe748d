/**
 * `bench:idle --as-npm-start`: the gateway exactly as a user runs it, `npm start` in this checkout with nothing
 * set but free ports (`PORT=0`, `DEVNET_BASE_PORT=0`) and a quiet log. The measured process is the node process
 * that runs `src/server/main.ts` (npm runs `sh`, `sh` runs tsx's CLI, and the CLI runs the script in a child
 * node: the deepest process whose command line names the script). Unlike the bench server it has no memory
 * probe, so only /proc is read.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const READY_TIMEOUT_MS = 240_000;
const STOP_TIMEOUT_MS = 20_000;
const SCRIPT = 'src/server/main.ts';

export interface NpmStartRun {
  /** Pid of the node process that runs `src/server/main.ts`. */
  pid: number;
  url: string;
  /** The line `npm start` printed about its database. */
  database: string;
  /** SIGINT to the gateway (as Ctrl-C), then waits for npm to exit (SIGKILL to both after 20 s). */
  stop(): Promise<void>;
}

function readProc(pid: number, file: string): string | null {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return null;
  }
}

/** The descendants of `root` whose command line names the gateway's entry point, deepest last. */
function gatewayProcesses(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const stat = readProc(pid, 'stat');
    if (stat === null) continue;
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  }
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      if ((readProc(child, 'cmdline') ?? '').split('\0').some((part) => part.endsWith(SCRIPT))) found.push(child);
      walk(child);
    }
  };
  walk(root);
  return found;
}

export async function startNpmStart(): Promise<NpmStartRun> {
  const cwd = fileURLToPath(new URL('..', import.meta.url));
  const env = {
    ...process.env,
    PORT: '0',
    DEVNET_BASE_PORT: '0',
    GATEWAY_LOG_LEVEL: process.env.GATEWAY_LOG_LEVEL ?? 'warn',
  };
  const npm = spawn('npm', ['start'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  npm.stdout.on('data', (chunk) => (output += chunk));
  npm.stderr.on('data', (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => npm.once('exit', () => resolve()));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let url: string | undefined;
  while (url === undefined) {
    url = /Gateway ready at (http:\/\/\S+)/.exec(output)?.[1];
    if (url !== undefined) break;
    if (npm.exitCode !== null || Date.now() > deadline)
      throw new Error(`npm start was not ready${npm.exitCode === null ? ' in time' : ''}:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const pid = gatewayProcesses(npm.pid ?? -1).at(-1);
  if (pid === undefined) throw new Error(`no process running ${SCRIPT} under npm (${npm.pid})`);
  const database = /^Database: (.*)$/m.exec(output)?.[1] ?? 'PGlite (in memory: npm start printed no database line)';
  return {
    pid,
    url,
    database,
    async stop() {
      try {
        process.kill(pid, 'SIGINT');
      } catch {
        // already gone
      }
      const timer = setTimeout(() => {
        for (const target of [pid, npm.pid ?? -1])
          try {
            process.kill(target, 'SIGKILL');
          } catch {
            // already gone
          }
      }, STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}
