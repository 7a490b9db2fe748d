/**
 * Settlement on the devnet: filled deposits are released from the depository to the solver, several per
 * transaction, once; refunded deposits never are; the ledger follows the chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClient, getAddress, http, parseEther, zeroAddress, type Hex } from 'viem';
import { depositoryAbi } from '../../generated/contracts/index.js';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { ledgerBalances, ledgerImbalances } from '../../src/store/ledger.repository.js';
import { listUnminedOutgoingTxs } from '../../src/store/outgoingTxs.repository.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let alice: DevnetAccount;

beforeAll(async () => {
  // A long interval: the test settles with `settleNow`, so both deposits are due when the batch is made.
  gateway = await startTestGateway({ settlement: { intervalMs: 600_000, maxBatch: 50 } });
  [chainA] = gateway.devnet.descriptor.chains as [DevnetChain];
  [alice] = gateway.devnet.descriptor.accounts as [DevnetAccount];
});
afterAll(async () => {
  await gateway?.stop();
});

const released = (requestId: Hex) =>
  publicClientOf(chainA).getContractEvents({
    address: chainA.contracts.depository,
    abi: depositoryAbi,
    eventName: 'Released',
    args: { id: requestId },
    fromBlock: 0n,
  });

describe('settlement', () => {
  it('releases filled deposits to the solver in one batch, once; a refunded deposit stays refunded only', async () => {
    const solver = getAddress(gateway.devnet.descriptor.solver.address);
    const depositoryBefore = await publicClientOf(chainA).getBalance({ address: chainA.contracts.depository });
    const unallocated = () =>
      publicClientOf(chainA).readContract({
        address: chainA.contracts.depository,
        abi: depositoryAbi,
        functionName: 'unallocated',
        args: [zeroAddress],
      });
    const unallocatedBefore = await unallocated();

    const quotes = [
      await requestQuote(gateway, alice, {
        originCurrency: zeroAddress,
        destinationCurrency: zeroAddress,
        amount: parseEther('0.02').toString(),
      }),
      await requestQuote(gateway, alice, {
        originCurrency: zeroAddress,
        destinationCurrency: zeroAddress,
        amount: parseEther('0.03').toString(),
      }),
    ];
    for (const q of quotes) await executeSteps(gateway, q.steps, alice);
    const ids = quotes.map((q) => q.steps.at(-1)!.requestId);
    for (const id of ids) await waitForStatus(gateway, id, ['success']);
    // An expired quote: its deposit is refunded, and must never be settled.
    const expired = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      ttl: 1,
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await executeSteps(gateway, expired.steps, alice);
    const expiredId = expired.steps.at(-1)!.requestId;
    await waitForStatus(gateway, expiredId, ['refund']);
    await gateway.server.solver!.solver.idle();
    const deposited = parseEther('0.05');
    expect(await publicClientOf(chainA).getBalance({ address: chainA.contracts.depository })).toBeGreaterThanOrEqual(
      depositoryBefore + deposited,
    );

    const settler = gateway.server.solver!.settler;
    await settler.settleNow();
    const events = await Promise.all(ids.map(released));
    for (const [i, list] of events.entries()) {
      expect(list, ids[i]).toHaveLength(1);
      expect(list[0]!.args.to).toBe(solver);
    }
    // One transaction released both.
    expect(events[0]![0]!.transactionHash).toBe(events[1]![0]!.transactionHash);
    const amounts = quotes.map((q) => BigInt(q.details.currencyIn.amount));
    expect(events.map((list) => list[0]!.args.amount)).toEqual(amounts);
    // The depository holds what it held before the filled deposits (the refund's kept gas aside).
    const depositoryAfter = await publicClientOf(chainA).getBalance({ address: chainA.contracts.depository });
    expect(depositoryAfter - (await unallocated())).toBe(depositoryBefore - unallocatedBefore);
    // The refunded deposit was released once, to its refundTo, not to the solver.
    const refund = await released(expiredId);
    expect(refund).toHaveLength(1);
    expect(refund[0]!.args.to).not.toBe(solver);

    // Another pass has nothing to settle: no new release.
    await settler.settleNow();
    for (const id of ids) expect(await released(id)).toHaveLength(1);

    // The ledger balances, and its solver holdings on the origin moved as the chain's did.
    const db = gateway.server.database.db;
    expect(await ledgerImbalances(db)).toEqual({ currencies: [], movements: [] });
    const ledgerSolver =
      (await ledgerBalances(db)).find(
        (b) => b.account === 'solver' && b.chainId === chainA.chainId && b.currency === zeroAddress,
      )?.amount ?? 0n;
    // From its opening balance (the chain's when the solver started), the solver's account is its balance.
    expect(ledgerSolver).toBe(await publicClientOf(chainA).getBalance({ address: solver }));
    const ledgerDepository =
      (await ledgerBalances(db)).find(
        (b) => b.account === 'depository' && b.chainId === chainA.chainId && b.currency === zeroAddress,
      )?.amount ?? 0n;
    expect(ledgerDepository).toBe(0n);
  });

  it('a settlement waiting for its receipt when the gateway stops is resumed at the next start, not logged as a failure', async () => {
    const lines: Array<{ level: number; msg?: string }> = [];
    const own = await startTestGateway(
      { logLevel: 'info', logFormat: 'json', settlement: { intervalMs: 600_000, maxBatch: 50 } },
      { server: { logDestination: { write: (line: string) => void lines.push(JSON.parse(line)) } } },
    );
    try {
      const [chain] = own.devnet.descriptor.chains as [DevnetChain];
      const [user] = own.devnet.descriptor.accounts as [DevnetAccount];
      const quote = await requestQuote(own, user, {
        originCurrency: zeroAddress,
        destinationCurrency: zeroAddress,
        amount: parseEther('0.02').toString(),
      });
      await executeSteps(own, quote.steps, user);
      await waitForStatus(own, quote.steps.at(-1)!.requestId, ['success']);
      await own.server.solver!.solver.idle();
      // The settlement's transaction is sent and never mined: its pass waits for the receipt when the stop comes.
      await createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) }).setAutomine(false);
      const settling = own.server.solver!.settler.settleNow();
      const solver = own.devnet.descriptor.solver.address;
      const deadline = Date.now() + 10_000;
      while (
        (await listUnminedOutgoingTxs(own.server.database.db, { chainId: chain.chainId, signer: solver })).length === 0
      ) {
        if (Date.now() > deadline) throw new Error('the settlement was never sent');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await own.server.stop();
      await settling;
      expect(lines.filter((line) => line.level >= 50)).toEqual([]);
      expect(lines.map((line) => line.msg)).toContain('settlement stopping: resumed at the next start');
    } finally {
      await own.stop();
    }
  });
});
