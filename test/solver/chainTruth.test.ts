/**
 * The chain decides, the database remembers: a gateway whose database does not know a request (a fresh database, a
 * lost one) never refunds a deposit whose order the chain says was filled. Gateway A fills a deposit and stops
 * before settling it; gateway B, same solver key, empty database, is handed the deposit through the public
 * `POST /transactions/index`: it refunds nothing, and the user is paid exactly once. A deposit for an order nobody
 * filled, handed to B the same way, is refunded (so B's solver does run).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keccak256, parseEther, parseEventLogs, toHex, zeroAddress, type Address } from 'viem';
import { depositoryAbi } from '../../generated/contracts/index.js';
import { startDevnet, type Devnet } from '../../src/chain/devnet.js';
import { configFromEnvironment, type GatewayConfig } from '../../src/server/config.js';
import { createServer } from '../../src/server/createServer.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';
import { listDepositsForRequest } from '../../src/store/deposits.repository.js';
import { call } from '../helpers/conformance.js';
import { depositNative } from '../helpers/deposits.js';
import type { TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus } from '../helpers/quote.js';

let devnet: Devnet;
const running: TestGateway[] = [];

/**
 * A gateway on the shared devnet with a database of its own (in memory, or PGlite in `dataDir`), settling only when
 * told to.
 */
async function gatewayOn(logs: any[] = [], dataDir?: string): Promise<TestGateway> {
  const config: GatewayConfig = {
    ...configFromEnvironment(
      { PORT: '0', GATEWAY_LOG_LEVEL: 'warn' },
      devnetChainConfigs(devnet.descriptor),
      devnet.descriptor.solver.privateKey,
    ),
    // Settlement never runs during the test: the filled deposit stays in the depository, unreleased.
    settlement: { intervalMs: 3_600_000, maxBatch: 50 },
    ...(dataDir === undefined ? {} : { dataDir }),
  };
  const server = await createServer(config, {
    logDestination: { write: (line: string) => void logs.push(JSON.parse(line)) },
  });
  const url = await server.start();
  const gateway = { devnet, server, config, url, stop: () => server.stop() };
  running.push(gateway);
  return gateway;
}

beforeAll(async () => {
  devnet = await startDevnet({ basePort: 0 });
});

afterAll(async () => {
  for (const gateway of running) await gateway.stop().catch(() => undefined);
  await devnet?.stop();
});

/** Waits until every deposit of `requestId` in the gateway's database is `consumed` (processed to its end). */
async function waitConsumed(gateway: TestGateway, requestId: string): Promise<void> {
  for (;;) {
    const deposits = await listDepositsForRequest(gateway.server.core.db, requestId);
    if (deposits.length > 0 && deposits.every((deposit) => deposit.status === 'consumed')) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await gateway.server.solver!.solver.idle();
}

describe('a fresh database and a deposit another gateway filled', () => {
  it('is not refunded: the user gets the fill once and the deposit stays for the solver', async () => {
    const [chainA, chainB] = devnet.descriptor.chains;
    const [alice, bob] = devnet.descriptor.accounts;
    const originClient = publicClientOf(chainA!);
    const recipient: Address = '0x00000000000000000000000000000000c4a17401';

    const first = await gatewayOn();
    const quote = await requestQuote(first, alice!, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      recipient,
    });
    const requestId = quote.steps.at(-1)!.requestId;
    const receipts = await executeSteps(first, quote.steps, alice!);
    const depositHash = [...receipts.values()].at(-1)!.transactionHash;
    expect((await waitForStatus(first, requestId, ['success', 'failure', 'refund'])).status).toBe('success');
    const paid = await publicClientOf(chainB!).getBalance({ address: recipient });
    expect(paid).toBe(BigInt(quote.details.currencyOut.amount));
    const [filledDeposit] = await listDepositsForRequest(first.server.core.db, requestId);
    await first.stop();

    const aliceBefore = await originClient.getBalance({ address: alice!.address });
    const depositoryBefore = await originClient.getBalance({ address: chainA!.contracts.depository });

    // A deposit for an order nobody filled: the control, refunded by the second gateway.
    const unfilledId = keccak256(toHex('chain truth: an order nobody filled'));
    const unfilled = await depositNative(chainA!, bob!, unfilledId, parseEther('0.02'));
    const bobBefore = await originClient.getBalance({ address: bob!.address });

    const logs: any[] = [];
    const second = await gatewayOn(logs);
    // Its database knows nothing of the fill the solver key made on chain B: it rebuilt from chain events first.
    const ready = await fetch(`${second.url}/ready`).then((response) => response.json());
    expect(ready.checks[`history:${chainB!.chainId}`]).toMatchObject({ ok: true });
    expect(ready.checks[`history:${chainB!.chainId}`].message).toMatch(/^rebuilt from chain events since block 0/);
    for (const txHash of [depositHash, unfilled.hash]) {
      const indexed = await call(second.url, 'indexTransaction', { body: { chainId: chainA!.chainId, txHash } });
      expect(indexed.status, JSON.stringify(indexed.body)).toBe(200);
    }
    await waitConsumed(second, requestId);
    await waitConsumed(second, unfilledId);

    // The filled deposit: not refunded, still in the depository for the solver; the recipient paid once.
    const isReleased = (depositIndex: bigint) =>
      originClient.readContract({
        address: chainA!.contracts.depository,
        abi: depositoryAbi,
        functionName: 'isReleased',
        args: [depositIndex],
      });
    expect(await isReleased(filledDeposit!.depositIndex!)).toBe(false);
    expect(await originClient.getBalance({ address: alice!.address })).toBe(aliceBefore);
    expect(await publicClientOf(chainB!).getBalance({ address: recipient })).toBe(paid);
    expect(
      logs.some((line) => line.requestId === requestId && /already filled|filled on chain/.test(String(line.msg))),
    ).toBe(true);

    // The unfilled one: released back to its depositor (less the refund's gas), so the second solver did run.
    expect(await isReleased(unfilled.depositIndex)).toBe(true);
    const refunded = (await originClient.getBalance({ address: bob!.address })) - bobBefore;
    expect(refunded > 0n && refunded <= parseEther('0.02')).toBe(true);
    // What the depository holds: the filled deposit still, and the refund's gas kept from the control.
    expect(await originClient.getBalance({ address: chainA!.contracts.depository })).toBe(
      depositoryBefore + parseEther('0.02') - refunded,
    );
  }, 240_000);
});

describe('the database deleted while requests are in flight', () => {
  it('a new database rebuilds from the chain: every deposit is filled or refunded exactly once', async () => {
    const [chainA, chainB] = devnet.descriptor.chains;
    const alice = devnet.descriptor.accounts[0]!;
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-chain-truth-'));
    try {
      const first = await gatewayOn([], path.join(dir, 'first'));
      const recipients = [1, 2, 3].map(
        (n) => `0x00000000000000000000000000000000dd0000${n.toString(16).padStart(2, '0')}` as Address,
      );
      const quotes = [];
      for (const recipient of recipients)
        quotes.push(
          await requestQuote(first, alice, {
            originCurrency: zeroAddress,
            destinationCurrency: zeroAddress,
            amount: parseEther('0.01').toString(),
            recipient,
          }),
        );
      // The deposits go out; the gateway is stopped as soon as they are mined, whatever it had done with them.
      const deposits = [];
      for (const quote of quotes) deposits.push([...(await executeSteps(first, quote.steps, alice)).values()].at(-1)!);
      await first.stop();
      await rm(path.join(dir, 'first'), { recursive: true, force: true });

      // A new database with the same key: its start rebuilds from the chain before the solver runs.
      const second = await gatewayOn([], path.join(dir, 'second'));
      await second.server.solver!.solver.idle();
      const depositIndexes = deposits.map(
        (receipt) =>
          parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipt.logs })[0]!.args.depositIndex,
      );
      for (const [i, recipient] of recipients.entries()) {
        const paid = await publicClientOf(chainB!).getBalance({ address: recipient });
        const released = await publicClientOf(chainA!).readContract({
          address: chainA!.contracts.depository,
          abi: depositoryAbi,
          functionName: 'isReleased',
          args: [depositIndexes[i]!],
        });
        // Settlement never runs here: a released deposit was refunded. Filled, or refunded, never both, never neither.
        expect({ recipient, filled: paid > 0n, refunded: released }).toEqual({
          recipient,
          filled: !released,
          refunded: released,
        });
        if (paid > 0n) expect(paid).toBe(BigInt(quotes[i]!.details.currencyOut.amount));
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
