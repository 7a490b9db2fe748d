/**
 * Issue #20 item 3, Ctrl-C can hang. As the user did it, with real processes:
 * - `kill <pid of npm>` (SIGTERM to the process `npm start` started) stops the gateway and all three chains;
 * - while a stop hangs, a second SIGINT exits at once, and a single signal exits after the time limit;
 * - a gateway whose parent dies stops instead of serving on as an orphan.
 * The hanging stop is a script around the real `installShutdown` (a real gateway cannot be made to hang its stop
 * on demand); `npm start` is the real package script in this checkout.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root, tsx, useChildProcesses } from '../helpers/childProcess.js';

const run = useChildProcesses();
const dirs: string[] = [];

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
/** Polls `check` until it holds or `ms` passes; returns whether it held (a deadline, not a timing assertion). */
async function eventually(check: () => Promise<boolean> | boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return check();
}
const answers = async (url: string, init?: RequestInit) =>
  fetch(url, init).then(
    () => true,
    () => false,
  );
const rpcAnswers = (rpcUrl: string) =>
  answers(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}',
  });

async function scratch(prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

describe('npm start and signals', () => {
  it('kill <pid of npm> stops the gateway and every chain', async () => {
    // The real `npm start` in this checkout (its .devnet/devnet.json is rewritten, as by any `npm start`).
    const npm = run('npm', ['start'], {
      env: { PORT: '0', DEVNET_BASE_PORT: '0', DEVNET_BLOCK_TIME: '1', GATEWAY_LOG_LEVEL: 'warn' },
    });
    const [, url] = await npm.waitFor(/Gateway ready at (http:\/\/\S+)/, 240_000);
    const rpcUrls = [...npm.output().matchAll(/deploying contracts on \d+ \((http:\/\/[^)]+)\)/g)].map(
      (match) => match[1]!,
    );
    expect(rpcUrls).toHaveLength(3);
    expect(await answers(`${url}/health`)).toBe(true);

    npm.child.kill('SIGTERM');
    await npm.exited;
    expect(
      await eventually(async () => !(await answers(`${url}/health`)), 30_000),
      `the gateway still serves after npm exited:\n${npm.output()}`,
    ).toBe(true);
    for (const rpcUrl of rpcUrls) {
      expect(
        await eventually(async () => !(await rpcAnswers(rpcUrl)), 30_000),
        `the chain at ${rpcUrl} still runs`,
      ).toBe(true);
    }
  }, 360_000);
});

describe('installShutdown', () => {
  /** A process that installs the real shutdown handling around a stop that hangs (or, with STOP=fast, returns). */
  async function hangingStopScript(): Promise<string> {
    const dir = await scratch('gateway-shutdown-');
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, 'hanging.ts');
    await writeFile(
      file,
      `import { installShutdown } from ${JSON.stringify(path.join(root, 'src/server/shutdown.ts'))};
installShutdown({
  say: (message) => process.stdout.write(message + '\\n'),
  limitMs: Number(process.env.LIMIT_MS),
  parentPollMs: 100,
  stop: () => (process.env.STOP === 'fast' ? Promise.resolve() : new Promise(() => undefined)),
});
process.stdout.write('ready ' + process.pid + '\\n');
setInterval(() => undefined, 1000);
`,
    );
    return file;
  }

  it('a second SIGINT exits at once while the first stop hangs', async () => {
    const script = await hangingStopScript();
    const child = run(process.execPath, [tsx, script], { env: { LIMIT_MS: '600000' } });
    // Signals go to the script's own process (tsx runs it in a child and exits with its status).
    const pid = Number((await child.waitFor(/ready (\d+)/, 60_000))[1]);
    process.kill(pid, 'SIGINT');
    await child.waitFor(/SIGINT: stopping/, 10_000);
    process.kill(pid, 'SIGINT');
    expect(await child.exited).toBe(130);
    expect(child.output()).toMatch(/SIGINT again: exiting now/);
  }, 90_000);

  it('one signal exits with status 1 when the stop outlasts the time limit', async () => {
    const script = await hangingStopScript();
    const child = run(process.execPath, [tsx, script], { env: { LIMIT_MS: '500' } });
    const pid = Number((await child.waitFor(/ready (\d+)/, 60_000))[1]);
    process.kill(pid, 'SIGTERM');
    expect(await child.exited).toBe(1);
    expect(child.output()).toMatch(/did not finish within/);
  }, 90_000);

  it('stops when the process that started it dies without passing a signal on', async () => {
    const script = await hangingStopScript();
    const child = run(process.execPath, [tsx, script], { env: { LIMIT_MS: '600000', STOP: 'fast' } });
    await child.waitFor(/ready \d+/, 60_000);
    const pid = Number(child.output().match(/ready (\d+)/)![1]);
    // tsx runs the script in a child of its own; SIGKILL on tsx relays nothing, leaving the script orphaned.
    expect(pid).not.toBe(child.child.pid);
    child.child.kill('SIGKILL');
    const stopped = await eventually(() => !isAlive(pid), 30_000);
    if (!stopped) process.kill(pid, 'SIGKILL');
    expect(stopped, 'the orphaned process still runs').toBe(true);
  }, 90_000);
});
