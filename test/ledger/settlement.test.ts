/**
 * Settlement on the devnet: filled deposits are released from the depository to the solver, several per
 * transaction, once; refunded deposits never are; the ledger follows the chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestClient,
  createWalletClient,
  encodeAbiParameters,
  encodeFunctionData,
  getAddress,
  http,
  keccak256,
  parseAbiParameters,
  parseEther,
  parseEventLogs,
  toHex,
  zeroAddress,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { depositoryAbi, multicall3Abi } from '../../generated/contracts/index.js';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { listDepositsForRequest } from '../../src/store/deposits.repository.js';
import { ledgerBalances, ledgerImbalances } from '../../src/store/ledger.repository.js';
import { listUnminedOutgoingTxs } from '../../src/store/outgoingTxs.repository.js';
import { listRejectedSettlementItems } from '../../src/store/settlements.repository.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus, type WireQuote } from '../helpers/quote.js';
import { releasedEvents } from '../helpers/chainReads.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let alice: DevnetAccount;
let bob: DevnetAccount;
/** The shared gateway's log lines at `warn` and above. */
const logLines: Array<{ level: number; msg?: string; [key: string]: unknown }> = [];

beforeAll(async () => {
  // A long interval: the test settles with `settleNow`, so both deposits are due when the batch is made.
  gateway = await startTestGateway(
    { logLevel: 'warn', logFormat: 'json', settlement: { intervalMs: 600_000, maxBatch: 50 } },
    { server: { logDestination: { write: (line: string) => void logLines.push(JSON.parse(line)) } } },
  );
  [chainA] = gateway.devnet.descriptor.chains as [DevnetChain];
  [alice, bob] = gateway.devnet.descriptor.accounts as [DevnetAccount, DevnetAccount];
});
afterAll(async () => {
  await gateway?.stop();
});

const walletOf = (account: DevnetAccount) =>
  createWalletClient({
    account: privateKeyToAccount(account.privateKey),
    chain: devnetViemChain(chainA),
    transport: http(chainA.rpcUrl),
  });

/** Every release of one deposit on chain A, in order. */
const releasesOf = async (depositIndex: bigint) =>
  (await releasedEvents(chainA, { depositIndex })).map((event) => ({
    to: event.args.to!,
    amount: event.args.amount!,
    hash: event.transactionHash,
  }));

/** What the solver paid in gas for the transactions `hashes` on chain A. */
async function gasPaid(hashes: readonly Hex[]): Promise<bigint> {
  let total = 0n;
  for (const hash of new Set(hashes)) {
    const receipt = await publicClientOf(chainA).getTransactionReceipt({ hash });
    total += receipt.gasUsed * receipt.effectiveGasPrice;
  }
  return total;
}

/** A native ETH → ETH quote for `user`, paid with its own deposit step; the request filled. */
async function filledDeposit(
  user: DevnetAccount,
  amount: string,
): Promise<{ quote: WireQuote; depositIndex: bigint; depositor: Hex }> {
  const quote = await requestQuote(gateway, user, {
    originCurrency: zeroAddress,
    destinationCurrency: zeroAddress,
    amount: parseEther(amount).toString(),
  });
  const receipts = await executeSteps(gateway, quote.steps, user);
  await waitForStatus(gateway, quote.steps.at(-1)!.requestId, ['success']);
  const [log] = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipts.get('deposit')!.logs });
  return { quote, depositIndex: log!.args.depositIndex, depositor: log!.args.depositor };
}

const depositoryBalance = () => publicClientOf(chainA).getBalance({ address: chainA.contracts.depository });
const solverBalance = () => publicClientOf(chainA).getBalance({ address: gateway.devnet.descriptor.solver.address });

/** The series of `gateway_settlement_items_rejected_total` for chain A and `reason` (0 when absent). */
async function rejectedMetric(reason: string): Promise<number> {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((candidate) =>
      candidate.startsWith(`gateway_settlement_items_rejected_total{chain_id="${chainA.chainId}",reason="${reason}"}`),
    );
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

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
    const events = await Promise.all(ids.map((id) => releasedEvents(chainA, { id })));
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
    const refund = await releasedEvents(chainA, { id: expiredId });
    expect(refund).toHaveLength(1);
    expect(refund[0]!.args.to).not.toBe(solver);

    // Another pass has nothing to settle: no new release.
    await settler.settleNow();
    for (const id of ids) expect(await releasedEvents(chainA, { id })).toHaveLength(1);

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

describe('settlement never stalls on one deposit', () => {
  it("two deposits for one request in one Multicall3 transaction: the one that paid and a later user's deposit are released to the solver", async () => {
    const solver = getAddress(gateway.devnet.descriptor.solver.address);
    // Alice pays her own request twice in one transaction: the two deposits share its hash.
    const quote = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.02').toString(),
    });
    const requestId = quote.steps.at(-1)!.requestId;
    const deposit = quote.steps.find((step) => step.id === 'deposit')!.items[0]!.data;
    expect(deposit.to.toLowerCase()).toBe(chainA.contracts.depository.toLowerCase());
    const value = BigInt(deposit.value);
    const call = { target: deposit.to, allowFailure: false, value, callData: deposit.data };
    const hash = await walletOf(alice).writeContract({
      address: chainA.contracts.multicall3,
      abi: multicall3Abi,
      functionName: 'aggregate3Value',
      args: [[call, call]],
      value: 2n * value,
    });
    const receipt = await publicClientOf(chainA).waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    const indexes = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipt.logs }).map(
      (log) => log.args.depositIndex,
    );
    expect(indexes).toHaveLength(2);
    await waitForStatus(gateway, requestId, ['success']);
    // One deposit paid the fill; the other is refunded to Alice as a double spend.
    const deadline = Date.now() + 30_000;
    const refundedIndex = async () => {
      for (const index of indexes) if ((await releasesOf(index)).length > 0) return index;
      return undefined;
    };
    while ((await refundedIndex()) === undefined) {
      if (Date.now() > deadline) throw new Error('the second deposit was never refunded');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const refunded = (await refundedIndex())!;
    const paid = indexes.find((index) => index !== refunded)!;
    const [refund] = await releasesOf(refunded);
    expect(refund!.to).toBe(getAddress(alice.address));
    // Both rows share the transaction hash; the refunded one is consumed once its refund is mined.
    const rows = async () =>
      (await listDepositsForRequest(gateway.server.database.db, requestId)).filter(
        (row) => row.txHash === hash.toLowerCase(),
      );
    while ((await rows()).some((row) => row.status !== 'consumed')) {
      if (Date.now() > deadline) throw new Error('the refunded deposit was never consumed');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await rows()).toHaveLength(2);

    // Then Bob's ordinary deposit.
    const later = await filledDeposit(bob, '0.03');
    await gateway.server.solver!.solver.idle();

    const depositoryBefore = await depositoryBalance();
    const solverBefore = await solverBalance();
    await gateway.server.solver!.settler.settleNow();

    const paidReleases = await releasesOf(paid);
    const laterReleases = await releasesOf(later.depositIndex);
    expect(paidReleases).toEqual([{ to: solver, amount: value, hash: expect.any(String) }]);
    expect(laterReleases).toEqual([
      { to: solver, amount: BigInt(later.quote.details.currencyIn.amount), hash: paidReleases[0]!.hash },
    ]);
    // The refunded deposit is not settled: its one release is the refund.
    expect(await releasesOf(refunded)).toHaveLength(1);
    // On chain: the depository paid out exactly the two settled deposits, to the solver, less only the gas.
    const settled = value + BigInt(later.quote.details.currencyIn.amount);
    expect(depositoryBefore - (await depositoryBalance())).toBe(settled);
    expect((await solverBalance()) - solverBefore).toBe(settled - (await gasPaid([paidReleases[0]!.hash])));
    expect(await listRejectedSettlementItems(gateway.server.database.db, { chainId: chainA.chainId })).toEqual([]);
  });

  it('a deposit released to the solver by another transaction is settled by it, one the depository no longer holds is set aside with its reason; the rest of the batch is released', async () => {
    const solver = getAddress(gateway.devnet.descriptor.solver.address);
    const db = gateway.server.database.db;
    const elsewhere = await filledDeposit(alice, '0.011');
    const gone = await filledDeposit(alice, '0.012');
    const ordinary = await filledDeposit(bob, '0.013');
    await gateway.server.solver!.solver.idle();
    const amountOf = (filled: { quote: WireQuote }) => BigInt(filled.quote.details.currencyIn.amount);

    // One deposit is released first by a transaction that is not the settlement's (an operator by hand, or a batch
    // the settlement's records lost), sent through the gateway's own sender so the solver key's nonce stays this
    // database's: a release by the key that this database did not send is another gateway's, and the key watch
    // stops the chain for it (test/solver/sharedKey.test.ts).
    const sender = gateway.server.solver!.senders.get(chainA.chainId)!;
    const byHand = await sender.send({
      requestId: keccak256(toHex('settlement test: a release by hand')),
      kind: 'settle',
      to: chainA.contracts.depository,
      data: encodeFunctionData({
        abi: depositoryAbi,
        functionName: 'release',
        args: [
          elsewhere.depositIndex,
          elsewhere.quote.steps.at(-1)!.requestId,
          elsewhere.depositor,
          zeroAddress,
          amountOf(elsewhere),
          solver,
          amountOf(elsewhere),
        ],
      }),
      value: 0n,
    });
    const outOfBand = (await sender.waitForReceipt(byHand.id)).hash;
    expect((await publicClientOf(chainA).getTransactionReceipt({ hash: outOfBand })).status).toBe('success');
    // A fault injected in the depository's storage (no transaction can make it): the slot of the second deposit is
    // emptied, as a reorg that took its block away leaves the depository. `deposits` is slot 3 (after the owner,
    // the reentrancy lock and the deposit count); the test checks it holds the deposit's commitment first.
    const slot = keccak256(encodeAbiParameters(parseAbiParameters('uint256, uint256'), [gone.depositIndex, 3n]));
    const commitment = await publicClientOf(chainA).readContract({
      address: chainA.contracts.depository,
      abi: depositoryAbi,
      functionName: 'deposits',
      args: [gone.depositIndex],
    });
    expect(await publicClientOf(chainA).getStorageAt({ address: chainA.contracts.depository, slot })).toBe(commitment);
    const anvil = createTestClient({ mode: 'anvil', transport: http(chainA.rpcUrl) });
    await anvil.setStorageAt({ address: chainA.contracts.depository, index: slot, value: `0x${'0'.repeat(64)}` });

    const depositoryBefore = await depositoryBalance();
    const solverBefore = await solverBalance();
    await gateway.server.solver!.settler.settleNow();

    // The ordinary deposit is released to the solver, in a transaction without the two refused ones.
    const [release] = await releasesOf(ordinary.depositIndex);
    expect(release).toEqual({ to: solver, amount: amountOf(ordinary), hash: expect.any(String) });
    expect(depositoryBefore - (await depositoryBalance())).toBe(amountOf(ordinary));
    expect((await solverBalance()) - solverBefore).toBe(amountOf(ordinary) - (await gasPaid([release!.hash])));
    expect((await releasesOf(elsewhere.depositIndex)).map((r) => r.hash)).toEqual([outOfBand]);
    expect(await releasesOf(gone.depositIndex)).toEqual([]);

    // The deposit released to the solver by hand is settled by that transaction, as the chain shows, and booked once
    // (the by-hand release carried no ledger facts): no operator is alerted for it.
    const itemOf = (depositIndex: bigint) =>
      db
        .selectFrom('settlement_items as s')
        .innerJoin('deposits as d', 'd.id', 's.deposit_id')
        .select(['s.status', 's.release_tx_hash'])
        .where('d.chain_id', '=', chainA.chainId)
        .where('d.deposit_index', '=', depositIndex.toString())
        .executeTakeFirst();
    expect(await itemOf(elsewhere.depositIndex)).toEqual({
      status: 'settled',
      release_tx_hash: outOfBand.toLowerCase(),
    });
    const settledEntries = await db
      .selectFrom('ledger_entries')
      .select(['account', 'amount'])
      .where('movement_key', '=', `settle:${chainA.chainId}:${elsewhere.depositIndex}`)
      .orderBy('account')
      .execute();
    expect(settledEntries.map((entry) => ({ account: entry.account, amount: BigInt(entry.amount) }))).toEqual([
      { account: 'depository', amount: -amountOf(elsewhere) },
      { account: 'solver', amount: amountOf(elsewhere) },
    ]);
    // The refused one is recorded with its class and its decoded revert, reported once.
    const rejectedRows = async () =>
      (await listRejectedSettlementItems(db, { chainId: chainA.chainId })).map((item) => ({
        reason: item.reason,
        detail: item.detail,
      }));
    const expected = [{ reason: 'UNKNOWN_DEPOSIT', detail: `UnknownDeposit(${gone.depositIndex})` }];
    expect(await rejectedRows()).toEqual(expected);
    const alerts = () =>
      logLines.filter((line) => line.level >= 50 && String(line.msg).startsWith('settlement: the depository refuses'));
    expect(alerts().map((line) => line.reason)).toEqual(['UNKNOWN_DEPOSIT']);
    expect(await rejectedMetric('ALREADY_RELEASED')).toBe(0);
    expect(await rejectedMetric('UNKNOWN_DEPOSIT')).toBe(1);
    // No garbled revert bytes anywhere in the log.
    expect(JSON.stringify(logLines)).not.toMatch(/reverted with reason: [^A-Za-z0-9 ]/);

    // Not retried: another pass sends nothing and reports nothing again.
    const head = await publicClientOf(chainA).getBlockNumber({ cacheTime: 0 });
    await gateway.server.solver!.settler.settleNow();
    expect(await publicClientOf(chainA).getBlockNumber({ cacheTime: 0 })).toBe(head);
    expect(alerts()).toHaveLength(1);
    expect(await rejectedRows()).toEqual(expected);

    // And a deposit after them is released as usual.
    const next = await filledDeposit(bob, '0.014');
    await gateway.server.solver!.solver.idle();
    await gateway.server.solver!.settler.settleNow();
    expect(await releasesOf(next.depositIndex)).toEqual([
      { to: solver, amount: amountOf(next), hash: expect.any(String) },
    ]);
  });
});
