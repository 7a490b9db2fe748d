/**
 * What `npm start` does, run as a real child process: the devnet comes up with progress shown, the descriptor
 * is written, the gateway serves it on PGlite in a fresh temporary data directory, and SIGTERM stops the gateway
 * and every anvil child and removes that directory. An invalid config file is reported all at once with a non-zero
 * exit.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main, tsx, useChildProcesses } from '../helpers/childProcess.js';

const spawnWatched = useChildProcesses();
const dirs: string[] = [];

afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

const start = (cwd: string, env: Record<string, string>, args: string[] = []) =>
  spawnWatched(process.execPath, [tsx, main, ...args], { cwd, env });

const answers = async (rpcUrl: string) =>
  fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}',
  })
    .then((r) => r.ok)
    .catch(() => false);

describe('npm start', () => {
  it('brings up the devnet, writes the descriptor, serves the gateway and stops everything on SIGTERM', async () => {
    const cwd = await mkdtemp(path.join(tmpdir(), 'gateway-start-'));
    dirs.push(cwd);
    const run = start(cwd, { PORT: '0', DEVNET_BASE_PORT: '0', DEVNET_BLOCK_TIME: '1', GATEWAY_LOG_LEVEL: 'info' });
    const [, url] = await run.waitFor(/Gateway ready at (http:\/\/\S+)/, 90_000);
    expect(run.output()).toMatch(/deploying/i);
    // Piped and without GATEWAY_LOG_FORMAT, the log is JSON lines (the README's log example greps them).
    expect(run.output()).toMatch(/^\{"level":30,.*"msg":"Server listening at http/m);
    const logLines = run
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'));
    for (const line of logLines)
      expect(JSON.parse(line), line).toMatchObject({ level: expect.any(Number), msg: expect.any(String) });
    // The hints are written after the ready line, and may reach this process in a later chunk.
    await run.waitFor(/Press Ctrl-C to stop/, 30_000);
    expect(run.output()).toContain('curl');
    // No GATEWAY_DATA_DIR: PGlite on disk in a new directory of the OS temp dir, not in memory.
    const dataDir = /^Database: PGlite in (\S+) /m.exec(run.output())?.[1];
    expect(dataDir, run.output()).toBeDefined();
    expect(path.dirname(dataDir!)).toBe(tmpdir());
    expect(await readdir(dataDir!)).toContain('PG_VERSION');

    const descriptor = JSON.parse(await readFile(path.join(cwd, '.devnet/devnet.json'), 'utf8'));
    expect(descriptor.chains.map((c: { chainId: number }) => c.chainId)).toEqual([31337, 31338, 31339]);
    expect(descriptor.accounts.length).toBeGreaterThanOrEqual(4);
    expect(descriptor.accounts[0].privateKey).toMatch(/^0x[0-9a-f]{64}$/);
    expect(descriptor.solver.address).toMatch(/^0x[0-9a-fA-F]{40}$/);

    const chains = await (await fetch(`${url}/chains`)).json();
    expect(chains.chains.map((c: { id: number }) => c.id)).toEqual([31337, 31338, 31339]);
    for (const chain of descriptor.chains) expect(await answers(chain.rpcUrl)).toBe(true);

    run.child.kill('SIGTERM');
    expect(await run.exited).toBe(0);
    expect(existsSync(dataDir!)).toBe(false);
    for (const chain of descriptor.chains) expect(await answers(chain.rpcUrl)).toBe(false);
    expect(
      await fetch(`${url}/health`).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
  });

  it('reports an invalid config file all at once and exits non-zero', async () => {
    const cwd = await mkdtemp(path.join(tmpdir(), 'gateway-config-'));
    dirs.push(cwd);
    await writeFile(
      path.join(cwd, 'gateway.json'),
      JSON.stringify({ chains: [{ id: 'one', name: 'Bad Name' }], unknown: true }),
    );
    const run = start(cwd, { PORT: '0' }, ['--config', 'gateway.json']);
    expect(await run.exited).toBe(1);
    const output = run.output();
    expect(output).toContain('Invalid configuration');
    expect(output).toContain('GATEWAY_SOLVER_PRIVATE_KEY is required');
    expect(output).toContain("unknown field 'unknown'");
    expect(output).toContain('chains.0.id');
  });
});
