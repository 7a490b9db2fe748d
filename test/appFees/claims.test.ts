/**
 * App-fee claims on the devnet, from outside: two paid requests with a 1% app fee accrue 1% of the inputs' USD
 * value to the app wallet; a claim signed by another key is refused; two claims racing for one balance pay
 * once; the unmodified `@relayprotocol/relay-sdk` `claimAppFees` pays the rest out on the other chain in USDC
 * and the balance returns to zero; a second claim with nothing left and a replayed signature are refused. The
 * ledger balances throughout and follows the solver's USDC on the payout chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, erc20Abi, http, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { convertViemChainToRelayChain, createClient, getClient } from '@relayprotocol/relay-sdk';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { ledgerBalances, ledgerImbalances } from '../../src/store/ledger.repository.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;
let usdcA: Address;
let usdcB: Address;
const appAccount = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());
const recipient = '0x00000000000000000000000000000000c1a1e001' as Address;
/** The claim paid in the race, and the wallet's signature that authorized it. */
let raced: { claimId: string; signature: Hex };

const usdcBalance = (chain: DevnetChain, token: Address, owner: Address): Promise<bigint> =>
  publicClientOf(chain).readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

const balances = async () => {
  const { status, body } = await call(gateway.url, 'getAppFeeBalances', {
    path: `/app-fees/${appAccount.address}/balances`,
  });
  expect(status).toBe(200);
  return body;
};

const claims = async () => {
  const { status, body } = await call(gateway.url, 'getAppFeeClaims', {
    path: `/app-fees/${appAccount.address}/claims`,
  });
  expect(status).toBe(200);
  return body.claims as Array<{ claimId: string; status: string; txHash: string | null; currency: any }>;
};

const startClaim = (body: Record<string, unknown>) =>
  call(gateway.url, 'claimAppFees', {
    path: `/app-fees/${appAccount.address}/claim`,
    body: { chainId: chainB.chainId, currency: usdcB, recipient, ...body },
  });

const postSignature = (requestId: string, signature: Hex) =>
  call(gateway.url, 'submitPermit', { query: { signature }, body: { kind: 'claim', requestId } });

/** Pays every authorized claim now and waits for the payouts to be mined. */
const payClaims = () => gateway.server.solver!.claimPayer.payNow();

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [alice] = gateway.devnet.descriptor.accounts as [DevnetAccount];
  usdcA = tokenOf(chainA, 'USDC');
  usdcB = tokenOf(chainB, 'USDC');
  for (let i = 0; i < 2; i++) {
    const quote = await requestQuote(gateway, alice, {
      originCurrency: usdcA,
      destinationCurrency: usdcB,
      amount: '25000000',
      appFees: [{ recipient: appAccount.address, fee: '100' }],
    });
    await executeSteps(gateway, quote.steps, alice);
    await waitForStatus(gateway, quote.steps.at(-1)!.requestId, ['success']);
  }
  await gateway.server.solver!.solver.idle();
});
afterAll(async () => {
  await gateway?.stop();
});

describe('app-fee claims', () => {
  it('accrues 1% of the two inputs’ USD value to the app wallet', async () => {
    expect(await balances()).toMatchObject({
      totalBalanceUsd: 0.5,
      outstandingFastFillBalanceUsd: 0,
      availableBalanceUsd: 0.5,
    });
  });

  it('refuses a claim signed by another key, and pays nothing', async () => {
    const { status, body } = await startClaim({});
    expect(status).toBe(200);
    const step = body.steps[0];
    expect(step).toMatchObject({ id: 'authorize', kind: 'signature' });
    const item = step.items[0];
    expect(item.data.sign.signatureKind).toBe('eip191');
    expect(item.data.sign.message).toMatch(/^0x[0-9a-f]{64}$/);
    expect(item.data.post).toEqual({
      endpoint: '/execute/permits',
      method: 'POST',
      body: { kind: 'claim', requestId: step.requestId },
    });
    const forged = await stranger.signMessage({ message: { raw: item.data.sign.message } });
    const refused = await postSignature(step.requestId, forged);
    expect(refused.status).toBe(400);
    expect(refused.body.errorCode).toBe('PERMIT_FAILED');
    expect(await payClaims()).toBeUndefined();
    expect(await usdcBalance(chainB, usdcB, recipient)).toBe(0n);
    expect(await balances()).toMatchObject({ totalBalanceUsd: 0.5, availableBalanceUsd: 0.5 });
    expect((await claims()).find((c) => c.claimId === step.requestId)?.status).toBe('waiting');
  });

  it('pays one of two claims that race for the same balance', async () => {
    const first = await startClaim({ amount: '300000' });
    const second = await startClaim({ amount: '300000' });
    expect([first.status, second.status]).toEqual([200, 200]);
    const sign = (response: typeof first) =>
      appAccount.signMessage({ message: { raw: response.body.steps[0].items[0].data.sign.message } });
    const signed = [
      { claimId: first.body.steps[0].requestId as string, signature: await sign(first) },
      { claimId: second.body.steps[0].requestId as string, signature: await sign(second) },
    ];
    const answers = await Promise.all(signed.map(({ claimId, signature }) => postSignature(claimId, signature)));
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(answers.find((r) => r.status === 400)!.body.errorCode).toBe('INSUFFICIENT_FUNDS');
    raced = signed[answers.findIndex((r) => r.status === 200)]!;
    await payClaims();
    expect(await usdcBalance(chainB, usdcB, recipient)).toBe(300_000n);
    expect(await balances()).toMatchObject({ totalBalanceUsd: 0.2, availableBalanceUsd: 0.2 });
  });

  it('pays the rest through the unmodified SDK on the other chain in USDC; the balance returns to zero', async () => {
    createClient({
      baseApiUrl: gateway.url,
      source: 'gateway-tests',
      chains: gateway.devnet.descriptor.chains.map((chain) => convertViemChainToRelayChain(devnetViemChain(chain))),
    });
    const wallet = createWalletClient({
      account: appAccount,
      chain: devnetViemChain(chainB),
      transport: http(chainB.rpcUrl),
    });
    const { data } = await getClient().actions.claimAppFees({
      wallet,
      chainId: chainB.chainId,
      currency: usdcB,
      recipient,
    });
    expect(data.steps.flatMap((step) => step.items ?? []).map((item) => item.status)).toEqual(['complete']);
    await payClaims();
    expect(await usdcBalance(chainB, usdcB, recipient)).toBe(500_000n);
    expect(await balances()).toMatchObject({ totalBalanceUsd: 0, availableBalanceUsd: 0, balances: [] });
    const listed = await claims();
    expect(listed.filter((c) => c.status === 'success').map((c) => c.currency.amount)).toEqual(['200000', '300000']);
    for (const claim of listed.filter((c) => c.status === 'success')) {
      const receipt = await publicClientOf(chainB).getTransactionReceipt({ hash: claim.txHash as Hex });
      expect(receipt.status).toBe('success');
    }
  });

  it('refuses a second claim with nothing left', async () => {
    const { status, body } = await startClaim({});
    expect(status).toBe(400);
    expect(body.message).toMatch(/no app fees to claim/);
  });

  it('refuses a replayed signature, and pays nothing twice', async () => {
    expect((await claims()).find((c) => c.claimId === raced.claimId)?.status).toBe('success');
    const replay = await postSignature(raced.claimId, raced.signature);
    expect(replay.status).toBe(409);
    expect(replay.body.errorCode).toBe('CONFLICT');
    await payClaims();
    expect(await usdcBalance(chainB, usdcB, recipient)).toBe(500_000n);
  });

  it('keeps the ledger balanced and equal to the solver’s USDC on the payout chain', async () => {
    const db = gateway.server.database.db;
    expect(await ledgerImbalances(db)).toEqual({ currencies: [], movements: [] });
    const entries = await ledgerBalances(db);
    const of = (account: string, chainId: number, token: Address) =>
      entries
        .filter((b) => b.account === account && b.chainId === chainId && b.currency === token.toLowerCase())
        .reduce((sum, b) => sum + b.amount, 0n);
    expect(of(`app:${appAccount.address.toLowerCase()}`, chainA.chainId, usdcA)).toBe(0n);
    // The solver's account: its opening balance (what it held when it started) and every movement since.
    expect(of('solver', chainB.chainId, usdcB)).toBe(
      await usdcBalance(chainB, usdcB, gateway.devnet.descriptor.solver.address),
    );
  });

  it('lists the claims never signed as expired, then the payer’s sweep deletes them an hour later', async () => {
    // The forged claim and the one that lost the race were never authorized.
    const unsigned = (await claims()).filter((c) => c.status === 'waiting').map((c) => c.claimId);
    expect(unsigned).toHaveLength(2);
    const core = gateway.server.core;
    const realNow = core.now;
    try {
      // The gateway's clock (injectable for tests) 11 minutes on: the 10-minute windows are over.
      core.now = () => realNow() + 11 * 60_000;
      expect((await claims()).filter((c) => unsigned.includes(c.claimId)).map((c) => c.status)).toEqual([
        'expired',
        'expired',
      ]);
      await payClaims();
      expect((await claims()).filter((c) => unsigned.includes(c.claimId))).toHaveLength(2);
      // An hour after the window: the sweep of the next pass deletes them; the paid claims stay.
      core.now = () => realNow() + 71 * 60_000;
      await payClaims();
      const left = await claims();
      expect(left.filter((c) => unsigned.includes(c.claimId))).toEqual([]);
      expect(left.map((c) => c.status)).toEqual(['success', 'success']);
    } finally {
      core.now = realNow;
    }
  });
});
