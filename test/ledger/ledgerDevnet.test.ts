/**
 * The ledger against the chains: after real fills, an app fee, a refund and a double spend on the devnet, every
 * currency's entries sum to zero, and the ledger's solver and depository holdings moved exactly as the chains'
 * balances did.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, zeroAddress, type Address, type Hex } from 'viem';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { listDepositsForRequest } from '../../src/store/deposits.repository.js';
import { ledgerBalances, ledgerImbalances, listLedgerEntries } from '../../src/store/ledger.repository.js';
import { toUsdMicros } from '../../src/core/market.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';
import { depositNative as sendNativeDeposit } from '../helpers/deposits.js';
import { balanceOf } from '../helpers/chainReads.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;
let bob: DevnetAccount;

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [alice, bob] = gateway.devnet.descriptor.accounts as [DevnetAccount, DevnetAccount];
});
afterAll(async () => {
  await gateway?.stop();
});

async function depositNative(account: DevnetAccount, requestId: Hex, value: bigint): Promise<void> {
  await sendNativeDeposit(chainA, account, requestId, value);
}

/** Waits until every deposit of the request is consumed and the solver has nothing left to do. */
async function settled(requestId: string, deposits: number): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found = await listDepositsForRequest(gateway.server.database.db, requestId);
    if (found.length >= deposits && found.every((d) => d.status === 'consumed')) break;
    if (Date.now() > deadline)
      throw new Error(`deposits of ${requestId} not consumed: ${JSON.stringify(found.map((d) => d.status))}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await gateway.server.solver!.solver.idle();
}

describe('ledger on the devnet', () => {
  it('balances in every currency and follows the solver and the depository on chain', async () => {
    const solver = gateway.devnet.descriptor.solver.address;
    const usdcA = tokenOf(chainA, 'USDC');
    const usdcB = tokenOf(chainB, 'USDC');
    const holdings = [
      { chain: chainA, token: zeroAddress },
      { chain: chainA, token: usdcA },
      { chain: chainB, token: zeroAddress },
      { chain: chainB, token: usdcB },
    ] as const;
    const onChain = () =>
      Promise.all(
        holdings.map(async ({ chain, token }) => ({
          solver: await balanceOf(chain, token, solver),
          depository: await balanceOf(chain, token, chain.contracts.depository),
        })),
      );
    const before = await onChain();

    // A native bridge, a USDC bridge with a 1% app fee, a deposit too low (refunded), a second deposit (refunded).
    const appWallet = '0x00000000000000000000000000000000000a9900' as Address;
    const native = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.02').toString(),
    });
    await executeSteps(gateway, native.steps, alice);
    const withAppFee = await requestQuote(gateway, alice, {
      originCurrency: usdcA,
      destinationCurrency: usdcB,
      amount: '25000000',
      appFees: [{ recipient: appWallet, fee: '100' }],
    });
    await executeSteps(gateway, withAppFee.steps, alice);
    const short = await requestQuote(gateway, bob, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.02').toString(),
    });
    await depositNative(bob, short.steps.at(-1)!.requestId, parseEther('0.019'));

    const nativeId = native.steps.at(-1)!.requestId;
    const appFeeId = withAppFee.steps.at(-1)!.requestId;
    const shortId = short.steps.at(-1)!.requestId;
    await waitForStatus(gateway, nativeId, ['success']);
    await waitForStatus(gateway, appFeeId, ['success']);
    await waitForStatus(gateway, shortId, ['refund']);
    await depositNative(bob, nativeId, parseEther('0.01'));
    await settled(nativeId, 2);
    await settled(shortId, 1);

    // The filled deposits go back to the solver (settlement), so its entries are in the ledger too.
    await gateway.server.solver!.settler.settleNow();
    const db = gateway.server.database.db;
    expect(await ledgerImbalances(db)).toEqual({ currencies: [], movements: [] });
    // Every entry carries its USD value when written: gas at the native price of the moment, settlement at the
    // deposit's input price, everything else at the quote's. A long-tail token (LONG) has no price feed: its
    // opening balances are booked without one.
    const all = await listLedgerEntries(db);
    const unpriced = new Set(
      gateway.devnet.descriptor.chains.flatMap((chain) => chain.longTailTokens.map((t) => t.address.toLowerCase())),
    );
    expect(
      all
        .filter((e) => e.usdMicros === null && !unpriced.has(e.currency.toLowerCase()))
        .map((e) => `${e.kind} ${e.movementKey}`),
    ).toEqual([]);
    expect(all.some((e) => e.kind === 'settlement')).toBe(true);
    for (const chain of [chainA, chainB]) {
      const config = gateway.config.chains.find((c) => c.id === chain.chainId)!;
      const price = await gateway.server.core.market.usdPrice(chain.chainId, config.nativeCurrency);
      for (const gas of all.filter((e) => e.kind === 'gas_spent' && e.chainId === chain.chainId && e.amount > 0n))
        expect(gas.usdMicros, gas.movementKey).toBe(toUsdMicros(gas.amount, 18, price));
    }
    for (const settled of all.filter((e) => e.kind === 'settlement' && e.account === 'solver'))
      expect(settled.usdMicros, settled.movementKey).toBeGreaterThan(0n);

    const balances = await ledgerBalances(db);
    const ledger = (account: string, chain: DevnetChain, token: Address) =>
      balances
        .filter((b) => b.account === account && b.chainId === chain.chainId && b.currency === token.toLowerCase())
        .reduce((sum, b) => sum + b.amount, 0n);
    const entries = await listLedgerEntries(db, { account: 'solver' });
    const openings = (chain: DevnetChain, token: Address) =>
      entries
        .filter((e) => e.kind === 'opening' && e.chainId === chain.chainId && e.currency === token.toLowerCase())
        .reduce((sum, e) => sum + e.amount, 0n);
    const after = await onChain();
    holdings.forEach(({ chain, token }, i) => {
      const where = `${chain.chainId} ${token}`;
      // The solver's account holds its opening balance (the chain's when the solver started) and every movement
      // since: the balance on chain.
      expect(ledger('solver', chain, token), `solver ${where}`).toBe(after[i]!.solver);
      expect(openings(chain, token), `opening ${where}`).toBe(before[i]!.solver);
      expect(
        ledger('depository', chain, token) + ledger('depository:unallocated', chain, token),
        `depository ${where}`,
      ).toBe(after[i]!.depository - before[i]!.depository);
    });
    // The app fee accrued to its wallet: 1% of the input, owed by the gateway (a credit).
    expect(ledger(`app:${appWallet.toLowerCase()}`, chainA, usdcA)).toBe(-250_000n);
    // The wallet's balance as the API shows it: 1% of the input's USD value (25 USDC at $1), USD-stable.
    const { status, body } = await call(gateway.url, 'getAppFeeBalances', { path: `/app-fees/${appWallet}/balances` });
    expect(status).toBe(200);
    expect(body).toMatchObject({ totalBalanceUsd: 0.25, outstandingFastFillBalanceUsd: 0, availableBalanceUsd: 0.25 });
    expect(body.balances).toEqual([
      expect.objectContaining({
        amount: '250000',
        amountUsd: '0.25',
        currency: expect.objectContaining({ chainId: chainA.chainId, symbol: 'USDC' }),
      }),
    ]);
    const other = await call(gateway.url, 'getAppFeeBalances', { path: `/app-fees/${bob.address}/balances` });
    expect(other.body).toMatchObject({ balances: [], totalBalanceUsd: 0, availableBalanceUsd: 0 });
    expect((await call(gateway.url, 'getAppFeeBalances', { path: '/app-fees/0x1234/balances' })).status).toBe(400);
    // Every user is square except for what is still owed: nothing, since each deposit was filled or refunded.
    for (const { chain, token } of holdings)
      expect(ledger('counterparty', chain, token), `counterparty ${chain.chainId} ${token}`).toBe(0n);
  });
});
