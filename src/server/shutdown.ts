import { readFileSync, writeSync } from 'node:fs';

/**
 * How `npm start` stops. The first SIGINT / SIGTERM / SIGHUP stops the gateway in order; the stop has a time
 * limit, after which the process exits anyway; a second signal exits at once. Exiting kills the anvil children
 * (they are killed on the process's `exit`, see src/chain/anvil.ts), so nothing `npm start` started outlives it.
 *
 * The process also stops when its parent goes away: `kill <pid of npm>` ends npm without always passing the
 * signal down (and a killed `tsx` never does), and an orphaned gateway would keep serving with its chains.
 */
export interface InstallShutdownParameters {
  /** Stops everything in order: the server (solver, watchers, database), then the devnet. */
  stop: () => Promise<void>;
  /** Where the progress lines go (stdout). */
  say: (message: string) => void;
  /** Longest orderly stop before the process exits anyway, ms. */
  limitMs: number;
  /** How often the parent is checked, ms. */
  parentPollMs?: number;
}

export const SHUTDOWN_LIMIT_MS = 10_000;

/** A line written before `process.exit`: synchronously, since a write to a pipe may otherwise be lost. */
const sayNow = (message: string): void => {
  writeSync(1, `${message}\n`);
};

export function installShutdown({ stop, say, limitMs, parentPollMs = 1_000 }: InstallShutdownParameters): void {
  let stopping = false;
  const shutdown = (reason: string): void => {
    if (stopping) {
      sayNow(`${reason} again: exiting now without waiting for the stop to finish.`);
      process.exit(130);
    }
    stopping = true;
    say(`\n${reason}: stopping (at most ${Math.round(limitMs / 1000)} s; send the signal again to exit at once)...`);
    const limit = setTimeout(() => {
      sayNow(`The stop did not finish within ${Math.round(limitMs / 1000)} s: exiting anyway.`);
      process.exit(1);
    }, limitMs);
    limit.unref();
    void stop()
      .catch((error: unknown) => console.error('error while stopping:', error))
      .finally(() => process.exit(0));
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => shutdown(signal));

  const parent = process.ppid;
  const ancestors = ancestorsUpToNpm();
  const watch = setInterval(() => {
    const gone = process.ppid !== parent ? parent : ancestors.find((pid) => !isAlive(pid));
    if (gone !== undefined) {
      clearInterval(watch);
      shutdown(`process ${gone} that started the gateway exited`);
    }
  }, parentPollMs);
  watch.unref();
}

/**
 * The processes between this one and the `npm` that started it (npm included), read from /proc: `npm start`
 * runs `sh -c "tsx …"` and tsx runs this script in a child, so npm is two or three levels up. Without npm among
 * the first few ancestors (started by tsx or node directly, or not on Linux) only the parent is watched, so a
 * gateway under a shell or a supervisor never stops because some grandparent went away.
 */
function ancestorsUpToNpm(): number[] {
  const chain: number[] = [];
  let pid = process.ppid;
  for (let depth = 0; depth < 5 && pid > 1; depth++) {
    chain.push(pid);
    const command = readProc(pid, 'cmdline')?.split('\0') ?? [];
    // npm sets its process title ("npm start"), which replaces its argv in /proc/<pid>/cmdline.
    if (command.some((part) => /(^|\/)npm(-cli\.js)?(\s|$)/.test(part))) return chain;
    const stat = readProc(pid, 'stat');
    // Fields after the parenthesised command name: state, ppid, ...
    const ppid = stat === undefined ? NaN : Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!Number.isInteger(ppid)) break;
    pid = ppid;
  }
  return [process.ppid];
}

function readProc(pid: number, file: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
}

/** Whether `pid` still runs: exists and, where /proc tells, is not a zombie waiting to be reaped. */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  const stat = readProc(pid, 'stat');
  return stat === undefined || stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
}
