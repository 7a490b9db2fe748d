/**
 * The chain decides, the database remembers: a gateway whose database does not know a request (a fresh database, a
 * lost one) never refunds a deposit whose order the chain says was filled. Gateway A fills a deposit and stops
 * before settling it; gateway B, same solver key, empty database, is handed the deposit through the public
 * `POST /transactions/index`: it refunds nothing, and the user is paid exactly once. A deposit for an order nobody
 * filled, handed to B the same way, is refunded (so B's solver does run). The same holds when the database is
 * deleted with deposits in flight, and when it is restored from a backup older than a batch of fills. Each ends with
 * the ledger reconciled with the chains. `chainTruthPostgres.test.ts` runs the last two on PostgreSQL.
 */
import { cp, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { keccak256, parseEther, parseEventLogs, toHex, zeroAddress, type Address } from 'viem';
import { depositoryAbi, onlyOwnerMulticallerAbi } from '../../generated/contracts/index.js';
import { startDevnet, type Devnet } from '../../src/chain/devnet.js';
import { DATA_DIR_LOCK_FILE } from '../../src/store/dataDirLock.js';
import { listDepositsForRequest } from '../../src/store/deposits.repository.js';
import { call } from '../helpers/conformance.js';
import { depositNative } from '../helpers/deposits.js';
import type { TestGateway } from '../helpers/gateway.js';
import { expectLedgerReconciled } from '../helpers/ledger.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus } from '../helpers/quote.js';
import { sharedDevnetGateways } from '../helpers/sharedDevnetGateways.js';

let devnet: Devnet;

const gateways = sharedDevnetGateways(() => devnet);
/**
 * A gateway on the shared devnet with a database of its own (in memory, or PGlite in `dataDir`), settling only when
 * told to. One left running holds the same solver key with a database of its own: it would take the next test's
 * deposits for unknown requests and act on them beside that test's gateway, so every test ends with `stopAll`.
 */
const gatewayOn = (logs: any[] = [], dataDir?: string) =>
  gateways.start({ logs, ...(dataDir === undefined ? {} : { dataDir }) });
const stopAll = () => gateways.stopAll();

beforeAll(async () => {
  devnet = await startDevnet({ basePort: 0 });
});

afterEach(stopAll);

afterAll(async () => {
  await stopAll();
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
    await expectLedgerReconciled(second);
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
      await expectLedgerReconciled(second);
    } finally {
      // Stopped before their data directories are removed.
      await stopAll();
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});

describe('a database restored from a backup taken before a batch of fills', () => {
  it('rebuilds from the chain: every recipient is paid once, nothing is refunded, the requests end in success', async () => {
    const [chainA, chainB] = devnet.descriptor.chains;
    const alice = devnet.descriptor.accounts[0]!;
    const originClient = publicClientOf(chainA!);
    const destinationClient = publicClientOf(chainB!);
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-chain-truth-'));
    const dataDir = path.join(dir, 'data');
    const backup = path.join(dir, 'backup');
    try {
      const recipients = [0, 1, 2, 3].map(
        (n) => `0x00000000000000000000000000000000ee0000${n.toString(16).padStart(2, '0')}` as Address,
      );
      const quoteFor = (gateway: TestGateway, recipient: Address) =>
        requestQuote(gateway, alice, {
          originCurrency: zeroAddress,
          destinationCurrency: zeroAddress,
          amount: parseEther('0.01').toString(),
          recipient,
        });

      // A first order, filled; the batch quoted (its requests waiting) before the backup is taken.
      const first = await gatewayOn([], dataDir);
      const quotes = [await quoteFor(first, recipients[0]!)];
      const receipts = [[...(await executeSteps(first, quotes[0]!.steps, alice)).values()].at(-1)!];
      const requestIds = [quotes[0]!.steps.at(-1)!.requestId];
      expect((await waitForStatus(first, requestIds[0]!, ['success', 'failure', 'refund'])).status).toBe('success');
      for (const recipient of recipients.slice(1)) quotes.push(await quoteFor(first, recipient));
      requestIds.push(...quotes.slice(1).map((quote) => quote.steps.at(-1)!.requestId));
      await first.stop();
      // The backup: the stopped gateway's directory, without its lock file (which marks a live holder).
      await cp(dataDir, backup, {
        recursive: true,
        filter: (source) => path.basename(source) !== DATA_DIR_LOCK_FILE,
      });

      // The batch is deposited and filled on the original directory, then the gateway stops.
      const second = await gatewayOn([], dataDir);
      for (const quote of quotes.slice(1))
        receipts.push([...(await executeSteps(second, quote.steps, alice)).values()].at(-1)!);
      for (const requestId of requestIds.slice(1))
        expect((await waitForStatus(second, requestId, ['success', 'failure', 'refund'])).status).toBe('success');
      await second.stop();
      const paid = await Promise.all(recipients.map((address) => destinationClient.getBalance({ address })));
      expect(paid).toEqual(quotes.map((quote) => BigInt(quote.details.currencyOut.amount)));

      // The operator restores the backup: its database knows the first fill and the batch's requests as waiting.
      await rm(dataDir, { recursive: true, force: true });
      await rename(backup, dataDir);
      const aliceBefore = await originClient.getBalance({ address: alice.address });
      const solverNonceB = await destinationClient.getTransactionCount({ address: devnet.descriptor.solver.address });
      const logs: any[] = [];
      const restored = await gatewayOn(logs, dataDir);

      // The solver key's nonce on chain B is ahead of the backup's: the start rebuilt from chain events.
      const ready = await fetch(`${restored.url}/ready`).then((response) => response.json());
      expect(ready.checks[`history:${chainB!.chainId}`]).toMatchObject({ ok: true });
      expect(ready.checks[`history:${chainB!.chainId}`].message).toMatch(/^rebuilt from chain events since block 0/);
      expect(logs.some((line) => line.msg === 'rebuilt from chain events: the solver runs')).toBe(true);
      // The batch's deposits, read again, find their requests waiting; the chain says each was filled.
      for (const requestId of requestIds)
        expect((await waitForStatus(restored, requestId, ['success', 'failure', 'refund'])).status).toBe('success');
      await restored.server.solver!.solver.idle();
      // The second fill is refused before it is sent (the fill contract says `AlreadyFilled`): nothing goes out on B.
      expect(await destinationClient.getTransactionCount({ address: devnet.descriptor.solver.address })).toBe(
        solverNonceB,
      );

      // On chain: every order filled, every recipient paid once, and no deposit refunded. A pass of settlement runs
      // at each start, so a deposit may have been released, but only ever to the solver.
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
        const releasedTo = releases
          .filter((release) => release.args.depositIndex === depositIndexes[i])
          .map((release) => release.args.to);
        expect({
          recipient,
          filled,
          refunded: releasedTo.some((to) => to !== devnet.descriptor.solver.address),
        }).toEqual({ recipient, filled: true, refunded: false });
        expect(await destinationClient.getBalance({ address: recipient })).toBe(paid[i]);
      }
      expect(await originClient.getBalance({ address: alice.address })).toBe(aliceBefore);
      await expectLedgerReconciled(restored);
    } finally {
      // Stopped before their data directories are removed.
      await stopAll();
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
