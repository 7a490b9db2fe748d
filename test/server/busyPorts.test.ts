/**
 * Issue #20 item 5: a busy `PORT` was reported only after the whole devnet deployed, and a busy anvil port printed
 * a stack trace. `npm start` (the real entry point, as a child process) now checks both first and names the
 * variable to change, without starting a chain.
 */
import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main, tsx, useChildProcesses } from '../helpers/childProcess.js';

const spawnWatched = useChildProcesses();

let busy: Server;
let busyPort: number;

beforeAll(async () => {
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen({ host: '127.0.0.1', port: 0 }, resolve));
  busyPort = (busy.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise((resolve) => busy.close(resolve));
});

async function start(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const run = spawnWatched(process.execPath, [tsx, main], { env: { GATEWAY_LOG_LEVEL: 'warn', ...env } });
  return { code: await run.exited, output: run.output() };
}

describe('npm start with a busy port', () => {
  it('a busy PORT is reported before the devnet starts, naming PORT', async () => {
    const { code, output } = await start({ PORT: String(busyPort), DEVNET_BASE_PORT: '0' });
    expect(code).toBe(1);
    expect(output).toContain(`PORT ${busyPort} on 127.0.0.1 is already in use`);
    expect(output).not.toMatch(/deploying|starting chain/);
  }, 90_000);

  it('a busy anvil port is reported by DEVNET_BASE_PORT, without a stack trace', async () => {
    const { code, output } = await start({ PORT: '0', DEVNET_BASE_PORT: String(busyPort - 1) });
    expect(code).toBe(1);
    expect(output).toContain(
      `port ${busyPort} for devnet chain 31338 (DEVNET_BASE_PORT ${busyPort - 1} + 1) is already in use`,
    );
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toMatch(/starting chain/);
  }, 90_000);

  it('a devnet variable that is not a number is refused by name before anything starts', async () => {
    const { code, output } = await start({ PORT: '0', DEVNET_BASE_PORT: 'eighty', DEVNET_BLOCK_TIME: '-1' });
    expect(code).toBe(1);
    expect(output).toContain("DEVNET_BASE_PORT must be an integer 0..65000 (0 = free ports), got 'eighty'");
    expect(output).toContain('DEVNET_BLOCK_TIME must be a number of seconds, 0 or more');
    expect(output).not.toMatch(/^\s+at /m);
    expect(output).not.toMatch(/starting chain/);
  }, 90_000);
});
