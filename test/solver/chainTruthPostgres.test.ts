/**
 * The disasters of `chainTruth.test.ts` on PostgreSQL, each gateway database a database of its own on the test
 * server: deleted while requests are in flight, and restored from a copy taken before a batch of fills (a database
 * created from the stopped one as template, as a restore of a backup would). Each ends with every deposit filled or
 * refunded exactly once on chain, and the ledger reconciled with the chains.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, parseEventLogs, zeroAddress, type Address } from 'viem';
import { depositoryAbi, onlyOwnerMulticallerAbi } from '../../generated/contracts/index.js';
import { startDevnet, type Devnet } from '../../src/chain/devnet.js';
import { configFromEnvironment, type GatewayConfig } from '../../src/server/config.js';
import { createServer } from '../../src/server/createServer.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';
import { testDatabaseUrl } from '../helpers/db.js';
import type { TestGateway } from '../helpers/gateway.js';
import { expectLedgerReconciled } from '../helpers/ledger.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus } from '../helpers/quote.js';

let devnet: Devnet;
const running: TestGateway[] = [];
const databases = new Set<string>();

/** Runs one statement on the test server's `test` database (databases are created and dropped from there). */
async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: testDatabaseUrl });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

const urlOf = (database: string): string => {
  const url = new URL(testDatabaseUrl);
  url.pathname = `/${database}`;
  return url.toString();
};

/** A new empty database, or a copy of `template` (which nothing may be connected to). */
async function createDatabaseNamed(template?: string): Promise<string> {
  const name = `gateway_disaster_${randomBytes(5).toString('hex')}`;
  await admin(`create database ${name}${template === undefined ? '' : ` template ${template}`}`);
  databases.add(name);
  return name;
}

async function dropDatabase(name: string): Promise<void> {
  await admin(`drop database if exists ${name} with (force)`);
  databases.delete(name);
}

/** A gateway on the shared devnet with PostgreSQL database `database`, settling only at start. */
async function gatewayOn(database: string): Promise<TestGateway> {
  const config: GatewayConfig = {
    ...configFromEnvironment(
      { PORT: '0', GATEWAY_LOG_LEVEL: 'silent', DATABASE_URL: urlOf(database) },
      devnetChainConfigs(devnet.descriptor),
      devnet.descriptor.solver.privateKey,
    ),
    settlement: { intervalMs: 3_600_000, maxBatch: 50 },
  };
  const server = await createServer(config);
  const url = await server.start();
  const gateway = { devnet, server, config, url, stop: () => server.stop() };
  running.push(gateway);
  return gateway;
}

/** Waits until the gateway runs the solver (it takes the PostgreSQL lock at start) and its lanes are idle. */
async function solverIdle(gateway: TestGateway): Promise<void> {
  for (let i = 0; gateway.server.solver === null; i++) {
    if (i > 100) throw new Error('the gateway never ran the solver');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await gateway.server.solver.solver.idle();
}

/**
 * Stops every gateway started so far. One left running holds the same solver key with a database of its own: it
 * would take the next test's deposits for unknown requests (the devnet's grace is 0) and refund them.
 */
async function stopAll(): Promise<void> {
  for (const gateway of running.splice(0)) await gateway.stop().catch(() => undefined);
}

afterEach(stopAll);

beforeAll(async () => {
  devnet = await startDevnet({ basePort: 0 });
});

afterAll(async () => {
  await stopAll();
  for (const name of [...databases]) await dropDatabase(name).catch(() => undefined);
  await devnet?.stop();
});

const quoteFor = (gateway: TestGateway, recipient: Address) =>
  requestQuote(gateway, devnet.descriptor.accounts[0]!, {
    originCurrency: zeroAddress,
    destinationCurrency: zeroAddress,
    amount: parseEther('0.01').toString(),
    recipient,
  });

describe('PostgreSQL: the database deleted while requests are in flight', () => {
  it('a new database rebuilds from the chain: each deposit filled or refunded once, the ledger reconciled', async () => {
    const [chainA, chainB] = devnet.descriptor.chains;
    const alice = devnet.descriptor.accounts[0]!;
    const lost = await createDatabaseNamed();
    const first = await gatewayOn(lost);
    const recipients = [1, 2, 3].map(
      (n) => `0x00000000000000000000000000000000dd1000${n.toString(16).padStart(2, '0')}` as Address,
    );
    const quotes = [];
    for (const recipient of recipients) quotes.push(await quoteFor(first, recipient));
    const deposits = [];
    for (const quote of quotes) deposits.push([...(await executeSteps(first, quote.steps, alice)).values()].at(-1)!);
    await stopAll();
    await dropDatabase(lost);

    const second = await gatewayOn(await createDatabaseNamed());
    await solverIdle(second);
    for (const [i, recipient] of recipients.entries()) {
      const depositIndex = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: deposits[i]!.logs })[0]!
        .args.depositIndex;
      const paid = await publicClientOf(chainB!).getBalance({ address: recipient });
      const released = await publicClientOf(chainA!).readContract({
        address: chainA!.contracts.depository,
        abi: depositoryAbi,
        functionName: 'isReleased',
        args: [depositIndex],
      });
      // Settlement runs only at start, before these deposits are decided: a released deposit was refunded.
      expect({ recipient, filled: paid > 0n, refunded: released }).toEqual({
        recipient,
        filled: !released,
        refunded: released,
      });
      if (paid > 0n) expect(paid).toBe(BigInt(quotes[i]!.details.currencyOut.amount));
    }
    await expectLedgerReconciled(second);
  }, 240_000);
});

describe('PostgreSQL: a database restored from a copy taken before a batch of fills', () => {
  it('rebuilds from the chain: every recipient paid once, nothing refunded, the ledger reconciled', async () => {
    const [chainA, chainB] = devnet.descriptor.chains;
    const alice = devnet.descriptor.accounts[0]!;
    const originClient = publicClientOf(chainA!);
    const destinationClient = publicClientOf(chainB!);
    const recipients = [0, 1, 2, 3].map(
      (n) => `0x00000000000000000000000000000000ee1000${n.toString(16).padStart(2, '0')}` as Address,
    );
    const live = await createDatabaseNamed();

    // A first order filled; the batch quoted (waiting) before the copy is taken.
    const first = await gatewayOn(live);
    const quotes = [await quoteFor(first, recipients[0]!)];
    const receipts = [[...(await executeSteps(first, quotes[0]!.steps, alice)).values()].at(-1)!];
    const requestIds = [quotes[0]!.steps.at(-1)!.requestId];
    expect((await waitForStatus(first, requestIds[0]!, ['success', 'failure', 'refund'])).status).toBe('success');
    for (const recipient of recipients.slice(1)) quotes.push(await quoteFor(first, recipient));
    requestIds.push(...quotes.slice(1).map((quote) => quote.steps.at(-1)!.requestId));
    await stopAll();
    const backup = await createDatabaseNamed(live);

    // The batch is deposited and filled on the live database.
    const second = await gatewayOn(live);
    for (const quote of quotes.slice(1))
      receipts.push([...(await executeSteps(second, quote.steps, alice)).values()].at(-1)!);
    for (const requestId of requestIds.slice(1))
      expect((await waitForStatus(second, requestId, ['success', 'failure', 'refund'])).status).toBe('success');
    await stopAll();
    const paid = await Promise.all(recipients.map((address) => destinationClient.getBalance({ address })));
    expect(paid).toEqual(quotes.map((quote) => BigInt(quote.details.currencyOut.amount)));

    // The live database is lost; the operator restores the copy.
    await dropDatabase(live);
    const aliceBefore = await originClient.getBalance({ address: alice.address });
    const restored = await gatewayOn(await createDatabaseNamed(backup));
    await solverIdle(restored);
    const ready = await fetch(`${restored.url}/ready`).then((response) => response.json());
    expect(ready.checks[`history:${chainB!.chainId}`]).toMatchObject({ ok: true });
    for (const requestId of requestIds)
      expect((await waitForStatus(restored, requestId, ['success', 'failure', 'refund'])).status).toBe('success');
    await restored.server.solver!.solver.idle();

    const depositIndexes = receipts.map(
      (receipt) =>
        parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipt.logs })[0]!.args.depositIndex,
    );
    const releases = await originClient.getContractEvents({
      address: chainA!.contracts.depository,
      abi: depositoryAbi,
      eventName: 'Released',
      fromBlock: 0n,
    });
    for (const [i, recipient] of recipients.entries()) {
      const filled = await destinationClient.readContract({
        address: chainB!.contracts.onlyOwnerMulticaller,
        abi: onlyOwnerMulticallerAbi,
        functionName: 'filled',
        args: [requestIds[i]!],
      });
      const refunded = releases.some(
        (release) =>
          release.args.depositIndex === depositIndexes[i] && release.args.to !== devnet.descriptor.solver.address,
      );
      expect({ recipient, filled, refunded }).toEqual({ recipient, filled: true, refunded: false });
      expect(await destinationClient.getBalance({ address: recipient })).toBe(paid[i]);
    }
    expect(await originClient.getBalance({ address: alice.address })).toBe(aliceBefore);
    await expectLedgerReconciled(restored);
  }, 240_000);
});
