/**
 * The entry point run as a real child process, for the tests of what `npm start` does (`test/server/start`,
 * `shutdown`, `busyPorts`): spawn it, collect its output, wait for a line, and kill whatever is left after the file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

/** The checkout's root. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** tsx's CLI, to run a TypeScript entry point with this node (`process.execPath`). */
export const tsx = path.join(root, 'node_modules/tsx/dist/cli.mjs');
/** The gateway's entry point, what `npm start` runs. */
export const main = path.join(root, 'src/server/main.ts');

/** A child process and everything it printed so far (stdout and stderr interleaved). */
export interface WatchedProcess {
  child: ChildProcess;
  /** Resolves with the exit status (null when a signal ended it). */
  exited: Promise<number | null>;
  /** Resolves with the first match of `pattern` in the output; throws with the output when the process exits or `ms` passes first. */
  waitFor(pattern: RegExp, ms: number): Promise<RegExpMatchArray>;
  output(): string;
}

/**
 * Registers an `afterAll` that SIGKILLs every process the returned function started and is still running,
 * and returns that `spawnWatched`. Call it once at the top of a test file.
 */
export function useChildProcesses(): (
  command: string,
  args: string[],
  options?: { cwd?: string; env?: Record<string, string> },
) => WatchedProcess {
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  return (command, args, { cwd = root, env = {} } = {}) => {
    const child = spawn(command, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const waitFor = async (pattern: RegExp, ms: number) => {
      const deadline = Date.now() + ms;
      while (Date.now() < deadline) {
        const match = output.match(pattern);
        if (match) return match;
        if (child.exitCode !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error(`did not see ${pattern} in:\n${output}`);
    };
    return { child, exited, waitFor, output: () => output };
  };
}
