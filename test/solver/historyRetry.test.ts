/**
 * The history check of a chain whose RPC was down at start is made once the chain answers: a database that does not
 * know transactions the solver key made there stops the solver on that chain (`/ready` and the log say why) rather
 * than refunding what another database filled; the next start rebuilds it from chain events. The proxy in front of
 * the destination chain's anvil refuses `eth_getTransactionCount` (a provider's 503), which a real anvil cannot be
 * made to do on demand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, zeroAddress, type Address } from 'viem';
import { startDevnet, type Devnet } from '../../src/chain/devnet.js';
import { configFromEnvironment, type GatewayConfig } from '../../src/server/config.js';
import { createServer } from '../../src/server/createServer.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';
import type { Database } from '../../src/store/database.js';
import { disposeTestDatabase, openTestDatabase, testDatabaseUrl } from '../helpers/db.js';
import type { TestGateway } from '../helpers/gateway.js';
import { executeSteps, requestQuote, waitForStatus } from '../helpers/quote.js';
import { startRpcProxy, type RpcProxy } from '../helpers/rpcProxy.js';

let devnet: Devnet;
let database: Database;
let proxy: RpcProxy;
const running: TestGateway[] = [];

/** A gateway on the devnet, chain B through the proxy; with `database`, on that PostgreSQL schema (else in memory). */
async function gatewayOn(onDatabase: boolean, logs: any[] = []): Promise<TestGateway> {
  const chains = devnetChainConfigs(devnet.descriptor).map((chain) =>
    chain.id === devnet.descriptor.chains[1]!.chainId
      ? { ...chain, httpRpcUrl: proxy.url, pushHeads: false, fallbackHttpRpcUrls: [] }
      : chain,
  );
  const config: GatewayConfig = {
    ...configFromEnvironment(
      {
        PORT: '0',
        GATEWAY_LOG_LEVEL: 'warn',
        ...(onDatabase ? { DATABASE_URL: testDatabaseUrl } : {}),
      },
      chains,
      devnet.descriptor.solver.privateKey,
    ),
    ...(onDatabase ? { databaseSchema: database.schema } : {}),
  };
  const server = await createServer(config, {
    logDestination: { write: (line: string) => void logs.push(JSON.parse(line)) },
  });
  const url = await server.start();
  const gateway = { devnet, server, config, url, stop: () => server.stop() };
  running.push(gateway);
  return gateway;
}

async function stopAll(): Promise<void> {
  for (const gateway of running.splice(0)) await gateway.stop().catch(() => undefined);
}

beforeAll(async () => {
  devnet = await startDevnet({ basePort: 0 });
  database = await openTestDatabase('postgres');
  proxy = await startRpcProxy(devnet.descriptor.chains[1]!.rpcUrl);
});

afterAll(async () => {
  await stopAll();
  if (database !== undefined) await disposeTestDatabase(database);
  await proxy?.close();
  await devnet?.stop();
});

async function readiness(gateway: TestGateway): Promise<Record<string, { ok: boolean; message: string }>> {
  const ready = await fetch(`${gateway.url}/ready`).then((response) => response.json());
  return ready.checks;
}

describe('the history check of a chain whose RPC was down at start', () => {
  it('is made when the chain answers: the solver stops there, and the next start rebuilds', async () => {
    const chainB = devnet.descriptor.chains[1]!;
    const alice = devnet.descriptor.accounts[0]!;
    const recipient: Address = '0x00000000000000000000000000000000ba000001';

    // Another database (in memory) fills an order with the key on chain B.
    const other = await gatewayOn(false);
    const quote = await requestQuote(other, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      recipient,
    });
    await executeSteps(other, quote.steps, alice);
    expect((await waitForStatus(other, quote.steps.at(-1)!.requestId, ['success', 'failure'])).status).toBe('success');
    await stopAll();

    // Chain B's provider refuses the key's transaction count while this gateway starts on its own database.
    proxy.inject = (call) =>
      call.method === 'eth_getTransactionCount' ? { status: 503, body: 'upstream unavailable' } : undefined;
    const logs: any[] = [];
    const gateway = await gatewayOn(true, logs);
    expect(logs.some((line) => /transaction count could not be read/.test(String(line.msg)))).toBe(true);
    expect(Object.keys(await readiness(gateway))).not.toContain(`solver:${chainB.chainId}`);

    // It answers again: the key watch finds the count ahead of the database and stops the solver on chain B.
    proxy.inject = () => undefined;
    for (let i = 0; (await readiness(gateway))[`solver:${chainB.chainId}`] === undefined; i++) {
      if (i > 100) throw new Error('the solver never stopped on chain B');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect((await readiness(gateway))[`solver:${chainB.chainId}`]).toMatchObject({
      ok: false,
      message: expect.stringMatching(/could not be read at start.*restart the gateway/),
    });
    expect(logs.some((line) => line.level >= 50 && /the solver stops on chain/.test(String(line.msg)))).toBe(true);
    await stopAll();

    // The next start reads it and rebuilds from chain events before solving.
    const restarted = await gatewayOn(true);
    const checks = await readiness(restarted);
    expect(checks[`history:${chainB.chainId}`]).toMatchObject({ ok: true });
    expect(checks[`solver:${chainB.chainId}`]).toBeUndefined();
  }, 180_000);
});
