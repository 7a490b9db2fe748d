/**
 * A database that never followed the chains, while the solver key made no transaction it does not account for (no
 * rebuild is due), starts its deposit watchers at each chain's `deploymentBlock`, not at the head: deposits made
 * while no gateway ran are seen. Here requests are quoted by a gateway without the solver (`GATEWAY_SOLVER=off`,
 * which follows no chain), paid while nothing runs, and the first gateway with the solver fills the quoted one and
 * refunds a deposit for a request nobody quoted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keccak256, parseEther, toHex, zeroAddress, type Address } from 'viem';
import { depositoryAbi } from '../../generated/contracts/index.js';
import { startDevnet, type Devnet } from '../../src/chain/devnet.js';
import { configFromEnvironment, type GatewayConfig } from '../../src/server/config.js';
import { createServer } from '../../src/server/createServer.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';
import type { Database } from '../../src/store/database.js';
import { DEPOSITS_CURSOR } from '../../src/chain/depositWatcher.js';
import { getCursor } from '../../src/store/cursors.repository.js';
import { recordSolverNonce } from '../../src/store/solverNonces.repository.js';
import { disposeTestDatabase, openTestDatabase, testDatabaseUrl } from '../helpers/db.js';
import { depositNative } from '../helpers/deposits.js';
import type { TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus } from '../helpers/quote.js';

let devnet: Devnet;
let database: Database;
const running: TestGateway[] = [];

async function gatewayOn(env: Record<string, string> = {}): Promise<TestGateway> {
  const config: GatewayConfig = {
    ...configFromEnvironment(
      { PORT: '0', GATEWAY_LOG_LEVEL: 'silent', DATABASE_URL: testDatabaseUrl, ...env },
      devnetChainConfigs(devnet.descriptor),
      devnet.descriptor.solver.privateKey,
    ),
    databaseSchema: database.schema,
  };
  const server = await createServer(config);
  const url = await server.start();
  const gateway = { devnet, server, config, url, stop: () => server.stop() };
  running.push(gateway);
  return gateway;
}

beforeAll(async () => {
  devnet = await startDevnet({ basePort: 0 });
  database = await openTestDatabase('postgres');
});

afterAll(async () => {
  for (const gateway of running.splice(0)) await gateway.stop().catch(() => undefined);
  if (database !== undefined) await disposeTestDatabase(database);
  await devnet?.stop();
});

describe('a database without cursors, the solver key fully accounted for', () => {
  it('reads the chains from their deployment block: a deposit made while no gateway ran is filled', async () => {
    const [chainA, chainB] = devnet.descriptor.chains;
    const [alice, bob] = devnet.descriptor.accounts;
    const recipient: Address = '0x00000000000000000000000000000000c0550001';

    // Quoted by a gateway that follows no chain: the database has the request and no cursor.
    const quoting = await gatewayOn({ GATEWAY_SOLVER: 'off' });
    const quote = await requestQuote(quoting, alice!, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      recipient,
    });
    const requestId = quote.steps.at(-1)!.requestId;
    await quoting.stop();
    running.splice(0);
    expect(await getCursor(database.db, chainA!.chainId, DEPOSITS_CURSOR)).toBeUndefined();

    // Paid while no gateway runs, with a deposit for a request nobody quoted beside it.
    await executeSteps(quoting, quote.steps, alice!);
    const orphan = await depositNative(
      chainA!,
      bob!,
      keccak256(toHex('cursorless: nobody quoted this')),
      parseEther('0.02'),
    );

    // The database accounts for every transaction the solver key made (the devnet's approvals): no rebuild is due.
    for (const chain of devnet.descriptor.chains) {
      const nonce = await publicClientOf(chain).getTransactionCount({ address: devnet.descriptor.solver.address });
      await recordSolverNonce(database.db, {
        chainId: chain.chainId,
        signer: devnet.descriptor.solver.address,
        nonce: BigInt(nonce),
        now: Date.now(),
      });
    }

    const solving = await gatewayOn();
    const ready = await fetch(`${solving.url}/ready`).then((response) => response.json());
    expect(Object.keys(ready.checks).filter((name) => name.startsWith('history:'))).toEqual([]);
    expect((await waitForStatus(solving, requestId, ['success', 'failure', 'refund'])).status).toBe('success');
    expect(await publicClientOf(chainB!).getBalance({ address: recipient })).toBe(
      BigInt(quote.details.currencyOut.amount),
    );
    for (let i = 0; ; i++) {
      const released = await publicClientOf(chainA!).readContract({
        address: chainA!.contracts.depository,
        abi: depositoryAbi,
        functionName: 'isReleased',
        args: [orphan.depositIndex],
      });
      if (released) break;
      if (i > 150) throw new Error('the deposit for an unknown request was never refunded');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }, 120_000);
});
