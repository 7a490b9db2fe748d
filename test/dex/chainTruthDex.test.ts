/**
 * The chain decides, the database remembers, for fills that buy their output through the destination's pools: ETH
 * on A to LONG on B, the solver's ETH on B sent through the public multicaller into B's Uniswap pools. A gateway
 * whose database is lost (empty, or restored from a backup taken before the fill) after such a fill rebuilds from
 * chain events: the user is not refunded, the solver does not fill a second time (no transaction of the solver key
 * on B, one `Filled` event, the recipient's LONG grew once, by the quoted output), a request the restored database
 * knew as waiting ends in success (even when the pools moved so far since that its fill's checks would refund it for
 * slippage), and the ledger is reconciled with both chains. Deleted with a DEX deposit in
 * flight, the new database fills it or refunds it, exactly once. `chainTruth.test.ts` is the same for plain fills.
 */
import { cp, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestClient,
  createWalletClient,
  http,
  parseEther,
  parseEventLogs,
  zeroAddress,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { depositoryAbi, onlyOwnerMulticallerAbi } from '../../generated/contracts/index.js';
import { privateKeyToAccount } from 'viem/accounts';
import {
  devnetViemChain,
  startDevnet,
  type Devnet,
  type DevnetAccount,
  type DevnetChain,
} from '../../src/chain/devnet.js';
import { uniswapV2Router02Abi } from '../../src/core/dex/routerCalls.js';
import { DATA_DIR_LOCK_FILE } from '../../src/store/dataDirLock.js';
import { listDepositsForRequest } from '../../src/store/deposits.repository.js';
import { balanceOf, filledEvents, releasedEvents } from '../helpers/chainReads.js';
import type { TestGateway } from '../helpers/gateway.js';
import { expectLedgerReconciled } from '../helpers/ledger.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus, type WireQuote } from '../helpers/quote.js';
import { sharedDevnetGateways } from '../helpers/sharedDevnetGateways.js';

let devnet: Devnet;
let chainA: DevnetChain;
let chainB: DevnetChain;

const gateways = sharedDevnetGateways(() => devnet);
/** A gateway on the shared devnet with a PGlite database in `dataDir`, settling once at start and not after. */
const gatewayOn = (dataDir: string, logs: any[] = []) => gateways.start({ dataDir, logs });
const stopAll = () => gateways.stopAll();

beforeAll(async () => {
  devnet = await startDevnet({ basePort: 0 });
  [chainA, chainB] = devnet.descriptor.chains as [DevnetChain, DevnetChain];
});
afterEach(stopAll);
afterAll(async () => {
  await stopAll();
  await devnet?.stop();
});

const solver = () => devnet.descriptor.solver.address;
const long = (): Address => chainB.longTailTokens.find((t) => t.symbol === 'LONG')!.address;
const fresh = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;
const requestIdOf = (quote: WireQuote): Hex => quote.steps.at(-1)!.requestId;
const depositIndexOf = (receipt: TransactionReceipt): bigint =>
  parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipt.logs })[0]!.args.depositIndex;

/** A quote of ETH on A to LONG on B, bought through B's pools with the solver's ETH. */
async function quoteLong(gateway: TestGateway, user: DevnetAccount, recipient: Address): Promise<WireQuote> {
  const quote = await requestQuote(gateway, user, {
    originCurrency: zeroAddress,
    destinationCurrency: long(),
    amount: parseEther('0.1').toString(),
    recipient,
  });
  // The output is bought through the pools with the solver's ETH, not paid from inventory.
  expect(quote.details.route.destination.inputCurrency.currency.address).toBe(zeroAddress);
  expect(['uniswap-v3', 'uniswap-v2']).toContain(quote.details.route.destination.router);
  return quote;
}

/** The deposit's receipt: the quote's steps sent as quoted. */
const deposit = async (gateway: TestGateway, quote: WireQuote, user: DevnetAccount) =>
  [...(await executeSteps(gateway, quote.steps, user)).values()].at(-1)!;

/** Waits until every deposit of `requestId` in the gateway's database is `consumed`, then for the solver. */
async function waitConsumed(gateway: TestGateway, requestId: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const deposits = await listDepositsForRequest(gateway.server.core.db, requestId);
    if (deposits.length > 0 && deposits.every((d) => d.status === 'consumed')) break;
    if (Date.now() > deadline) throw new Error(`the deposits of ${requestId} were never consumed`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await gateway.server.solver!.solver.idle();
}

/** The depository's releases of a deposit to anyone but the solver: refunds. */
const refundsOf = async (depositIndex: bigint) =>
  (await releasedEvents(chainA, { depositIndex })).filter(
    (release) => release.args.to!.toLowerCase() !== solver().toLowerCase(),
  );

const filledOnChain = (requestId: Hex) =>
  publicClientOf(chainB).readContract({
    address: chainB.contracts.onlyOwnerMulticaller,
    abi: onlyOwnerMulticallerAbi,
    functionName: 'filled',
    args: [requestId],
  });

/**
 * Mines past the grace a deposit of a request the database does not know waits (`unknownDepositGraceSeconds`, counted
 * in blocks of the chain's block time), so the new gateway decides the deposits it reads again at once.
 */
async function agePastGrace(): Promise<void> {
  await createTestClient({ mode: 'anvil', transport: http(chainA.rpcUrl) }).mine({ blocks: 150 });
}

/** A trader buys LONG with 5 ETH through B's v2 pair: the pools move far from where any quote saw them. */
async function movePools(): Promise<void> {
  const trader = devnet.descriptor.accounts[3]!;
  const wallet = createWalletClient({
    account: privateKeyToAccount(trader.privateKey),
    chain: devnetViemChain(chainB),
    transport: http(chainB.rpcUrl),
  });
  const weth = chainB.tokens.find((t) => t.symbol === 'WETH')!.address;
  const hash = await wallet.writeContract({
    address: chainB.dex.uniswapV2.router,
    abi: uniswapV2Router02Abi,
    functionName: 'swapExactETHForTokens',
    args: [0n, [weth, long()], trader.address, 2n ** 40n],
    value: parseEther('5'),
  });
  expect((await publicClientOf(chainB).waitForTransactionReceipt({ hash })).status).toBe('success');
}

const solverNonceOnB = () => publicClientOf(chainB).getTransactionCount({ address: solver() });

/** The rebuild ran on B before the solver acted: `/ready` says so. */
async function expectRebuiltB(gateway: TestGateway): Promise<void> {
  const ready = await fetch(`${gateway.url}/ready`).then((response) => response.json());
  expect(ready.checks[`history:${chainB.chainId}`]).toMatchObject({ ok: true });
  expect(ready.checks[`history:${chainB.chainId}`].message).toMatch(/^rebuilt from chain events since block 0/);
}

describe('an empty database after a destination DEX fill', () => {
  it('rebuilds from the chain: the deposit is kept, the recipient got the quoted LONG once, nothing is sent again', async () => {
    const alice = devnet.descriptor.accounts[0]!;
    const recipient = fresh(0xd7_0001);
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-dex-truth-'));
    try {
      const first = await gatewayOn(path.join(dir, 'first'));
      const quote = await quoteLong(first, alice, recipient);
      const requestId = requestIdOf(quote);
      const receipt = await deposit(first, quote, alice);
      expect((await waitForStatus(first, requestId, ['success', 'failure', 'refund'])).status).toBe('success');
      const quoted = BigInt(quote.details.currencyOut.amount);
      expect(await balanceOf(chainB, long(), recipient)).toBe(quoted);
      await first.stop();
      await rm(path.join(dir, 'first'), { recursive: true, force: true });
      await agePastGrace();

      const aliceBefore = await balanceOf(chainA, zeroAddress, alice.address);
      const nonceB = await solverNonceOnB();
      const logs: any[] = [];
      const second = await gatewayOn(path.join(dir, 'second'), logs);
      await expectRebuiltB(second);
      // The rebuild read the deposit again (from the deployment block) and decided it: the chain says filled.
      await waitConsumed(second, requestId);

      expect(await refundsOf(depositIndexOf(receipt))).toEqual([]);
      expect(await balanceOf(chainA, zeroAddress, alice.address)).toBe(aliceBefore);
      expect(await solverNonceOnB()).toBe(nonceB);
      expect(await filledEvents(chainB, requestId)).toHaveLength(1);
      expect(await balanceOf(chainB, long(), recipient)).toBe(quoted);
      expect(
        logs.some((line) => line.requestId === requestId && /already filled|filled on chain/.test(String(line.msg))),
      ).toBe(true);
      await expectLedgerReconciled(second);
    } finally {
      await stopAll();
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});

describe('a database restored from a backup taken before a destination DEX fill', () => {
  it('rebuilds from the chain: the waiting request ends in success, nothing refunded, nothing sent again', async () => {
    const alice = devnet.descriptor.accounts[1]!;
    const recipients = [fresh(0xd7_0101), fresh(0xd7_0102)];
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-dex-truth-'));
    const dataDir = path.join(dir, 'data');
    const backup = path.join(dir, 'backup');
    try {
      // A first DEX order filled; a second quoted (its request waiting) before the backup is taken.
      const first = await gatewayOn(dataDir);
      const quotes = [await quoteLong(first, alice, recipients[0]!)];
      const requestIds = [requestIdOf(quotes[0]!)];
      const receipts = [await deposit(first, quotes[0]!, alice)];
      expect((await waitForStatus(first, requestIds[0]!, ['success', 'failure', 'refund'])).status).toBe('success');
      quotes.push(await quoteLong(first, alice, recipients[1]!));
      requestIds.push(requestIdOf(quotes[1]!));
      await first.stop();
      await cp(dataDir, backup, {
        recursive: true,
        filter: (source) => path.basename(source) !== DATA_DIR_LOCK_FILE,
      });

      // The second order is deposited and filled through the pools on the original directory.
      const second = await gatewayOn(dataDir);
      receipts.push(await deposit(second, quotes[1]!, alice));
      expect((await waitForStatus(second, requestIds[1]!, ['success', 'failure', 'refund'])).status).toBe('success');
      await second.stop();
      const paid = await Promise.all(recipients.map((recipient) => balanceOf(chainB, long(), recipient)));
      // Nothing moved the pools between each quote and its fill: each recipient got exactly its quoted LONG.
      expect(paid).toEqual(quotes.map((quote) => BigInt(quote.details.currencyOut.amount)));

      // The pools move far after the fill: the second order's route, priced again, now delivers below its minimum.
      await movePools();

      // The operator restores the backup: its database knows the first fill and the second request as waiting.
      await rm(dataDir, { recursive: true, force: true });
      await rename(backup, dataDir);
      const aliceBefore = await balanceOf(chainA, zeroAddress, alice.address);
      const nonceB = await solverNonceOnB();
      const logs: any[] = [];
      const restored = await gatewayOn(dataDir, logs);
      await expectRebuiltB(restored);
      expect(logs.some((line) => line.msg === 'rebuilt from chain events: the solver runs')).toBe(true);
      // The second deposit, read again, finds its request waiting. Its fill's simulation reverts (the fill contract
      // filled the order) and the live pools would deliver below the order's minimum: the checks decide a SLIPPAGE
      // refund, and the refund, reading the chain first, finds the order filled: the request ends in success.
      for (const requestId of requestIds)
        expect((await waitForStatus(restored, requestId, ['success', 'failure', 'refund'])).status).toBe('success');
      await waitConsumed(restored, requestIds[1]!);
      expect(await solverNonceOnB()).toBe(nonceB);
      expect(
        logs.filter((line) => line.requestId === requestIds[1] && /already filled/.test(String(line.msg))),
      ).toEqual([expect.objectContaining({ failReason: 'SLIPPAGE' })]);

      for (const [i, requestId] of requestIds.entries()) {
        expect(await filledOnChain(requestId)).toBe(true);
        expect(await filledEvents(chainB, requestId)).toHaveLength(1);
        expect(await refundsOf(depositIndexOf(receipts[i]!))).toEqual([]);
        expect(await balanceOf(chainB, long(), recipients[i]!)).toBe(paid[i]);
      }
      expect(await balanceOf(chainA, zeroAddress, alice.address)).toBe(aliceBefore);
      // The restored request books what its fill took from the solver on B: the ETH the pools were paid.
      const entries = await restored.server.core.db
        .selectFrom('ledger_entries')
        .select(['currency', 'amount', 'account', 'chain_id'])
        .where('request_id', '=', requestIds[1]!.toLowerCase())
        .where('kind', '=', 'fill_paid')
        .where('account', '=', 'solver')
        .execute();
      expect(entries.map((entry) => ({ currency: entry.currency, amount: BigInt(entry.amount) }))).toEqual([
        { currency: zeroAddress, amount: -BigInt(quotes[1]!.details.route.destination.inputCurrency.amount) },
      ]);
      await expectLedgerReconciled(restored);
    } finally {
      await stopAll();
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});

describe('the database deleted with a destination DEX deposit in flight', () => {
  it('a new database fills it or refunds it, exactly once', async () => {
    const alice = devnet.descriptor.accounts[2]!;
    const recipient = fresh(0xd7_0201);
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-dex-truth-'));
    try {
      const first = await gatewayOn(path.join(dir, 'first'));
      const quote = await quoteLong(first, alice, recipient);
      const requestId = requestIdOf(quote);
      // The gateway is stopped as soon as the deposit is mined, whatever it had done with it.
      const receipt = await deposit(first, quote, alice);
      await first.stop();
      await rm(path.join(dir, 'first'), { recursive: true, force: true });
      await agePastGrace();

      const second = await gatewayOn(path.join(dir, 'second'));
      await waitConsumed(second, requestId);
      const filled = await filledOnChain(requestId);
      const refunds = await refundsOf(depositIndexOf(receipt));
      // Settlement runs once at start and never after: a release to anyone but the solver is a refund.
      expect({ filled, refunded: refunds.length > 0 }).toEqual({ filled, refunded: !filled });
      expect(refunds.length).toBeLessThanOrEqual(1);
      expect(await filledEvents(chainB, requestId)).toHaveLength(filled ? 1 : 0);
      expect(await balanceOf(chainB, long(), recipient)).toBe(filled ? BigInt(quote.details.currencyOut.amount) : 0n);
      await expectLedgerReconciled(second);
    } finally {
      await stopAll();
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
