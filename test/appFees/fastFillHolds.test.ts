/**
 * Fast-fill holds on app balances, on the devnet: an API key whose payout address is an app wallet fast-fills
 * against that wallet's app-fee balance. The fill is held (`outstandingFastFillBalanceUsd`) until its deposit
 * arrives; a claim cannot take the held part; a fast fill the available balance cannot cover is refused and the
 * request stays waiting, even though the key's own limit would allow it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { hashApiKey } from '../../src/core/apiKeys/authenticate.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import { getRequest } from '../../src/store/requests.repository.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, requestQuote, tokenOf, waitForStatus, type WireQuote } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;
let bob: DevnetAccount;
let usdcA: Address;
let usdcB: Address;
const wallet = privateKeyToAccount(generatePrivateKey()).address;
const apiKey = 'sk_app_wallet_holds_0001';

const balances = async () => {
  const { status, body } = await call(gateway.url, 'getAppFeeBalances', { path: `/app-fees/${wallet}/balances` });
  expect(status).toBe(200);
  return body;
};

const quoteUsdc = (amount: string): Promise<WireQuote> =>
  requestQuote(gateway, bob, { originCurrency: usdcA, destinationCurrency: usdcB, amount }, { 'x-api-key': apiKey });

const fastFill = (requestId: string) =>
  call(gateway.url, 'fastFill', { body: { requestId }, headers: { 'x-api-key': apiKey } });

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [alice, bob] = gateway.devnet.descriptor.accounts as [DevnetAccount, DevnetAccount];
  usdcA = tokenOf(chainA, 'USDC');
  usdcB = tokenOf(chainB, 'USDC');
  // The key's own limit (USD 1000) is far above the wallet's balance: the balance is what binds.
  await insertApiKey(gateway.server.database.db, {
    id: 'app-wallet',
    name: 'App wallet',
    keyHash: hashApiKey(apiKey),
    limits: { fastFillUsd: '1000' },
    payoutAddress: wallet.toLowerCase(),
    now: Date.now(),
  });
  // A 20% app fee on 50 USDC: USD 10 accrue to the wallet.
  const paid = await requestQuote(gateway, alice, {
    originCurrency: usdcA,
    destinationCurrency: usdcB,
    amount: '50000000',
    appFees: [{ recipient: wallet, fee: '2000' }],
  });
  await executeSteps(gateway, paid.steps, alice);
  await waitForStatus(gateway, paid.steps.at(-1)!.requestId, ['success']);
  await gateway.server.solver!.solver.idle();
});
afterAll(async () => {
  await gateway?.stop();
});

describe('fast-fill holds on the app balance of the key’s wallet', () => {
  let held: WireQuote;
  let heldUsd: number;

  it('holds a fast fill against the balance until its deposit arrives', async () => {
    expect(await balances()).toMatchObject({ totalBalanceUsd: 10, outstandingFastFillBalanceUsd: 0 });
    held = await quoteUsdc('5000000');
    const requestId = held.steps.at(-1)!.requestId;
    const { status, body } = await fastFill(requestId);
    expect(status, JSON.stringify(body)).toBe(200);
    await waitForStatus(gateway, requestId, ['success']);
    const stored = await getRequest(gateway.server.database.db, requestId);
    heldUsd = Number(stored!.volumeUsdMicros) / 1e6;
    expect(heldUsd).toBeGreaterThan(0);
    expect(await balances()).toMatchObject({
      totalBalanceUsd: 10,
      outstandingFastFillBalanceUsd: heldUsd,
      availableBalanceUsd: 10 - heldUsd,
    });
  });

  it('keeps a claim off the held part', async () => {
    const { status, body } = await call(gateway.url, 'claimAppFees', {
      path: `/app-fees/${wallet}/claim`,
      body: { chainId: chainB.chainId, currency: usdcB, recipient: wallet, amount: '10000000' },
    });
    expect(status).toBe(400);
    expect(body.message).toMatch(/available balance/);
  });

  it('refuses a fast fill the available balance cannot cover, and leaves the request waiting', async () => {
    const tooBig = await quoteUsdc('8000000');
    const requestId = tooBig.steps.at(-1)!.requestId;
    const { status, body } = await fastFill(requestId);
    expect(status).toBe(400);
    expect(body.errorCode).toBe('INSUFFICIENT_FUNDS');
    expect((await getRequest(gateway.server.database.db, requestId))!.status).toBe('waiting');
  });

  it('releases the hold when the deposit arrives', async () => {
    const requestId = held.steps.at(-1)!.requestId;
    await executeSteps(gateway, held.steps, bob);
    const deadline = Date.now() + 15_000;
    while ((await getRequest(gateway.server.database.db, requestId))!.inTxHashes.length === 0) {
      if (Date.now() > deadline) throw new Error(`the deposit of ${requestId} was not attached`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await balances()).toMatchObject({
      totalBalanceUsd: 10,
      outstandingFastFillBalanceUsd: 0,
      availableBalanceUsd: 10,
    });
  });
});
