/**
 * Two gateways with the solver enabled on one PostgreSQL (a random schema, dropped afterwards): exactly one
 * runs the solver, the other stands by and still serves quotes; when the runner's lock connection dies (its
 * backend terminated, as when the process or its network dies) it steps down and the standby takes over, and
 * each request is filled exactly once, by one fill on chain.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { parseEther, zeroAddress } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type GatewayServer } from '../../src/server/createServer.js';
import { testDatabaseUrl } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus } from '../helpers/quote.js';
import { hashApiKey } from '../../src/core/apiKeys/authenticate.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import { call } from '../helpers/conformance.js';

let a: TestGateway;
let b: GatewayServer;
let bGateway: TestGateway;

beforeAll(async () => {
  const schema = `test_${randomBytes(6).toString('hex')}`;
  a = await startTestGateway({ databaseUrl: testDatabaseUrl, databaseSchema: schema });
  b = await createServer(a.config);
  const url = await b.start();
  bGateway = { ...a, server: b, url };
}, 120_000);
afterAll(async () => {
  await b?.stop();
  await a?.server.database.dropSchema();
  await a?.stop();
});

/** Backends holding this deployment's solver lock (other test files' locks have other keys). */
async function lockHolders(): Promise<number[]> {
  const key = `gateway-solver:${a.config.databaseSchema}:${a.devnet.descriptor.solver.address.toLowerCase()}`;
  const { rows } = await sql<{ pid: number }>`
    select pid from pg_locks
    where locktype = 'advisory' and granted and objsubid = 1 and objid::text::bigint = (hashtext(${key})::bigint & 4294967295)`.execute(
    a.server.database.db,
  );
  return rows.map((row) => row.pid);
}

async function bridge(gateway: TestGateway, accountIndex: number): Promise<string> {
  const user = gateway.devnet.descriptor.accounts[accountIndex]!;
  const quote = await requestQuote(gateway, user, {
    originCurrency: zeroAddress,
    destinationCurrency: zeroAddress,
    amount: parseEther('0.01').toString(),
  });
  await executeSteps(gateway, quote.steps, user);
  const requestId = quote.steps[0]!.requestId;
  const done = await waitForStatus(gateway, requestId, ['success', 'failure', 'refund'], 60_000);
  expect(done.status).toBe('success');
  return requestId;
}

describe('one solver among gateways sharing PostgreSQL', () => {
  it('runs the solver in the first instance only; the standby serves quotes and refuses fast fill with 503', async () => {
    expect(a.server.solver).not.toBeNull();
    expect(b.solver).toBeNull();
    expect(await lockHolders()).toHaveLength(1);
    // A request quoted on the standby is filled by the runner.
    await bridge(bGateway, 0);
    const key = `igw_${randomBytes(24).toString('base64url')}`;
    await insertApiKey(a.server.database.db, {
      id: 'fast',
      name: 'Fast',
      keyHash: hashApiKey(key),
      limits: { fastFillUsd: '100' },
      now: Date.now(),
    });
    const standbyFastFill = await call(bGateway.url, 'fastFill', {
      body: { requestId: `0x${'11'.repeat(32)}` },
      headers: { 'x-api-key': key },
    });
    expect(standbyFastFill.status).toBe(503);
    expect(standbyFastFill.body).toMatchObject({ errorCode: 'SERVICE_UNAVAILABLE' });
    expect(
      (await call(a.url, 'fastFill', { body: { requestId: `0x${'11'.repeat(32)}` }, headers: { 'x-api-key': key } }))
        .status,
    ).toBe(404);
  });

  it('hands the solver to the standby when the runner loses its lock connection, and fills each request once', async () => {
    const [holder] = await lockHolders();
    expect(a.server.solver).not.toBeNull();
    await sql`select pg_terminate_backend(${holder!})`.execute(a.server.database.db);
    // The runner steps down at once; whichever instance tries first (within ~1 s) takes the lock again.
    await expect
      .poll(async () => (await lockHolders()).filter((pid) => pid !== holder).length, { timeout: 10_000 })
      .toBe(1);
    await expect.poll(() => [a.server.solver, b.solver].filter((s) => s !== null).length, { timeout: 10_000 }).toBe(1);
    expect(await lockHolders()).not.toContain(holder);

    const runner = a.server.solver !== null ? a : bGateway;
    const requestId = await bridge(runner === a ? bGateway : a, 1);

    // Exactly one fill of that request on the destination chain: one transaction from the solver carrying its id.
    const chainB = a.devnet.descriptor.chains[1]!;
    const client = publicClientOf(chainB);
    const latest = await client.getBlockNumber();
    let fills = 0;
    for (let n = 0n; n <= latest; n++) {
      const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
      for (const tx of block.transactions) {
        if (
          tx.from.toLowerCase() === a.devnet.descriptor.solver.address.toLowerCase() &&
          tx.input.includes(requestId.slice(2).toLowerCase())
        )
          fills += 1;
      }
    }
    expect(fills).toBe(1);
  });

  it('passes the solver on when the runner stops', async () => {
    const runner = a.server.solver !== null ? a.server : b;
    const standby = runner === b ? a.server : b;
    await runner.stop();
    await expect.poll(() => standby.solver !== null, { timeout: 10_000 }).toBe(true);
  });
});
