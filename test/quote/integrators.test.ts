/**
 * What an integrator's API key changes in a quote, end to end through REST: fee sponsorship (the user receives
 * more, the sponsor's share is recorded) and the revenue share of a qualifying key, stored with the request.
 *
 * And an attack on it: fee sponsorship turned into cash. The operator enables sponsorship on an integrator's API key
 * and leaves its allowance at 0 (the default: nothing is meant to be sponsored yet). The integrator quotes a 100 USDC
 * bridge with `subsidizeFees: true` and a 10,000 bps app fee to a wallet of its own: the "sponsor" paid every fee,
 * the app fee included, so the user received the whole input on the destination and the app wallet was credited the
 * same amount, claimable at once: 200 USDC out for 100 in, paid by the solver.
 * Defence: a sponsored quote reserves its sponsored USD value against the key's allowance when it is quoted, in the
 * statement that stores the request (refused `SPONSOR_BALANCE_TOO_LOW`, nothing stored, when the rest of the
 * allowance cannot cover it); the reservation is released when the request expires unpaid or is refunded and
 * drawn when it fills. Sponsorship never pays app fees: the user pays them, whoever the app is.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { erc20Abi, parseUnits, type Address, type Hex } from 'viem';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { hashApiKey } from '../../src/core/apiKeys/authenticate.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import { ledgerBalances, listLedgerEntries } from '../../src/store/ledger.repository.js';
import { getRequest, insertRequest } from '../../src/store/requests.repository.js';
import { depositErc20, freshAddress, until } from '../attacks/attacker.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, tokenOf, waitForStatus, type WireQuote } from '../helpers/quote.js';

const ADMIN_TOKEN = 'integrators-test-admin-token';
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const HUNDRED_USDC = 100_000_000n;

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
const keys = { sponsor: 'sk_sponsor_0001', partner: 'sk_partner_0001', unverified: 'sk_unverified_0001' };
let usdcA: Address;
let usdcB: Address;
let attacker: DevnetAccount;
/** The attacking integrator's key: sponsorship enabled by the operator, allowance 0 (the default). */
let integrator: { key: string; id: string };

beforeAll(async () => {
  gateway = await startTestGateway({
    adminToken: ADMIN_TOKEN,
    // The retention job also releases the reservations of requests that expired unpaid: run it often.
    requestRetention: { retentionMs: 7 * 86_400_000, intervalMs: 200, batchSize: 500 },
  });
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [attacker] = gateway.devnet.descriptor.accounts as [DevnetAccount];
  usdcA = tokenOf(chainA, 'USDC');
  usdcB = tokenOf(chainB, 'USDC');
  const created = await call(gateway.url, 'createApiKey', {
    body: { name: 'integrator', sponsorshipEnabled: true },
    headers: admin,
  });
  expect(created.status).toBe(201);
  integrator = { key: created.body.key as string, id: created.body.apiKey.id as string };
  const db = gateway.server.database.db;
  await insertApiKey(db, {
    id: 'sponsor',
    name: 'Sponsor',
    keyHash: hashApiKey(keys.sponsor),
    sponsorshipEnabled: true,
    // A sponsored quote reserves what its sponsor pays from the allowance: USD 1,000.
    sponsorshipAllowanceUsdMicros: 1_000_000_000n,
    now: Date.now(),
  });
  await insertApiKey(db, {
    id: 'partner',
    name: 'Partner',
    keyHash: hashApiKey(keys.partner),
    businessVerified: true,
    payoutAddress: '0x00000000000000000000000000000000000000aa',
    now: Date.now(),
  });
  await insertApiKey(db, {
    id: 'unverified',
    name: 'Unverified',
    keyHash: hashApiKey(keys.unverified),
    now: Date.now(),
  });
  // USD 50M of successful volume in the last 30 days for both revenue-share candidates (tier 1: 10M to 100M).
  for (const apiKeyId of ['partner', 'unverified']) {
    for (let i = 0; i < 5; i += 1) {
      await insertRequest(db, {
        id: `0x${(apiKeyId === 'partner' ? 'a' : 'b').repeat(63)}${i}`,
        status: 'success',
        user: '0x00000000000000000000000000000000000000cc',
        recipient: '0x00000000000000000000000000000000000000cc',
        refundTo: '0x00000000000000000000000000000000000000cc',
        sender: '0x00000000000000000000000000000000000000cc',
        originChainId: chainA.chainId,
        destinationChainId: chainB.chainId,
        originCurrency: '0x0000000000000000000000000000000000000000',
        destinationCurrency: '0x0000000000000000000000000000000000000000',
        amountIn: 1n,
        amountOut: 1n,
        minAmountOut: 1n,
        tradeType: 'EXACT_INPUT',
        operation: 'bridge',
        orderId: `0x${'0'.repeat(63)}${i}`,
        apiKeyId,
        quote: {},
        feesQuoted: {},
        expiresAt: Date.now(),
        createdAt: Date.now() - 86_400_000,
        volumeUsdMicros: 10_000_000n * 1_000_000n,
        committedOutflow: [],
      });
    }
  }
});
afterAll(async () => {
  await gateway?.stop();
});

const token = (chain: DevnetChain, symbol: string): Address => chain.tokens.find((t) => t.symbol === symbol)!.address;
const user = () => gateway.devnet.descriptor.accounts[1]!.address;

async function quote(body: Record<string, unknown>, apiKey?: string) {
  const { status, body: response } = await call(gateway.url, 'getQuote', {
    body: {
      user: user(),
      originChainId: chainA.chainId,
      destinationChainId: chainB.chainId,
      tradeType: 'EXACT_INPUT',
      ...body,
    },
    ...(apiKey === undefined ? {} : { headers: { 'x-api-key': apiKey } }),
  });
  expect(status, JSON.stringify(response)).toBe(200);
  return response as { steps: Array<{ requestId: `0x${string}` }>; details: any; fees: any; feeSponsorship?: any };
}

describe('API keys in quotes', () => {
  const stableSwap = () => ({
    originCurrency: token(chainA, 'USDC'),
    destinationCurrency: token(chainB, 'USDT'),
    amount: '1000000000',
  });

  it('a sponsored quote delivers the fees the sponsor covers and records them', async () => {
    const plain = await quote(stableSwap(), keys.sponsor);
    const sponsored = await quote({ ...stableSwap(), subsidizeFees: true }, keys.sponsor);
    const covered = BigInt(sponsored.fees.subsidized.amount);
    expect(covered).toBeGreaterThan(0n);
    // Same route and input: the user receives what the sponsor pays on top of the plain quote, converted as the rest
    // of the input is: at the USDC/USDT pool's price (the inventory sells no better than the pool), within its 1 bp
    // fee of the oracle's 1:1.
    const extra = BigInt(sponsored.details.currencyOut.amount) - BigInt(plain.details.currencyOut.amount);
    expect(extra).toBeLessThanOrEqual(covered);
    expect(extra * 10_000n).toBeGreaterThanOrEqual(covered * 9_998n);
    expect(sponsored.feeSponsorship.quoted).toMatchObject({
      // App fees are never sponsored.
      selectedComponents: ['execution', 'swap', 'service', 'relay'],
      capHit: false,
    });
    // The reference's clients read the platform component as `relay`: sent beside `service`.
    expect(sponsored.feeSponsorship.quoted.components.relay).toEqual(
      sponsored.feeSponsorship.quoted.components.service,
    );
    expect(BigInt(sponsored.feeSponsorship.quoted.sponsoredTotal.amount)).toBe(covered);
    expect(BigInt(sponsored.feeSponsorship.quoted.userPaysTotal.amount)).toBe(0n);
    const stored = await getRequest(gateway.server.database.db, sponsored.steps.at(-1)!.requestId);
    expect(stored).toMatchObject({ apiKeyId: 'sponsor', feesQuoted: { sponsored: covered.toString(), userPays: '0' } });

    const onlyExecution = await quote(
      { ...stableSwap(), subsidizeFees: true, sponsoredFeeComponents: ['execution'] },
      keys.sponsor,
    );
    expect(onlyExecution.feeSponsorship.quoted.selectedComponents).toEqual(['execution']);
    expect(onlyExecution.feeSponsorship.quoted.components.service).toMatchObject({ selected: false });
  });

  it('a qualifying key earns its tier share of the platform fee, stored with the request; others earn none', async () => {
    const earning = await quote(stableSwap(), keys.partner);
    const stored = await getRequest(gateway.server.database.db, earning.steps.at(-1)!.requestId);
    // 1000 USDC stablecoin swap: platform fee 1 bps = 100000 units; tier 1 stablecoin share 34%.
    expect(stored!.feesQuoted).toMatchObject({
      platform: '100000',
      revenueShare: { tier: 'tier1', shareBps: 3400, amount: '34000' },
    });

    const none = await quote(stableSwap(), keys.unverified);
    const storedNone = await getRequest(gateway.server.database.db, none.steps.at(-1)!.requestId);
    expect(storedNone!.feesQuoted).toMatchObject({ revenueShare: { tier: null, shareBps: 0, amount: '0' } });
  });
});

const usdcBalance = (chain: DevnetChain, token: Address, owner: Address): Promise<bigint> =>
  publicClientOf(chain).readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

/** The key as the administrator sees it (`GET /admin/api-keys/{id}`). */
async function adminKey() {
  const { status, body } = await call(gateway.url, 'getApiKey', {
    path: `/admin/api-keys/${integrator.id}`,
    headers: admin,
  });
  expect(status).toBe(200);
  const view = body.apiKey as Record<string, string>;
  return {
    allowance: BigInt(view.sponsorshipAllowanceUsdMicros!),
    spent: BigInt(view.sponsorshipSpentUsdMicros!),
    reserved: BigInt(view.sponsorshipReservedUsdMicros ?? '0'),
    remaining: BigInt(view.sponsorshipRemainingUsdMicros!),
  };
}

async function setAllowance(usdMicros: bigint): Promise<void> {
  const patched = await call(gateway.url, 'updateApiKey', {
    path: `/admin/api-keys/${integrator.id}`,
    body: { sponsorshipAllowanceUsdMicros: usdMicros.toString() },
    headers: admin,
  });
  expect(patched.status).toBe(200);
}

/** A USDC bridge from chain A to chain B quoted by the attacker with the integrator's key. */
const quoteBridge = (extra: Record<string, unknown>, amount = HUNDRED_USDC) =>
  call(gateway.url, 'getQuote', {
    body: {
      user: attacker.address,
      originChainId: chainA.chainId,
      destinationChainId: chainB.chainId,
      originCurrency: usdcA,
      destinationCurrency: usdcB,
      amount: amount.toString(),
      tradeType: 'EXACT_INPUT',
      subsidizeFees: true,
      ...extra,
    },
    headers: { 'x-api-key': integrator.key },
  });

/** The USD value (micro-USD) of what the sponsor pays in a quote (`feeSponsorship.quoted.sponsoredTotal`). */
const sponsoredUsdMicros = (quote: WireQuote): bigint =>
  parseUnits(quote.feeSponsorship!.quoted.sponsoredTotal.amountUsd as string, 6);

async function requestRows(): Promise<number> {
  const { db } = gateway.server.database;
  return Number((await db.selectFrom('requests').select(db.fn.countAll().as('n')).executeTakeFirstOrThrow()).n);
}

/** What the app wallet can claim now, in micro-USD (`GET /app-fees/{wallet}/balances`). */
async function claimableUsdMicros(wallet: Address): Promise<bigint> {
  const { status, body } = await call(gateway.url, 'getAppFeeBalances', { path: `/app-fees/${wallet}/balances` });
  expect(status).toBe(200);
  return BigInt(Math.round(Number(body.availableBalanceUsd) * 1e6));
}

/**
 * The attack as the attacker runs it: quote, and when the gateway answers with a quote, pay it exactly as quoted
 * and wait for the fill. Answers the quote's HTTP answer and the request id when there was one.
 */
async function attempt(extra: Record<string, unknown>): Promise<{ status: number; body: any; requestId?: Hex }> {
  const answer = await quoteBridge(extra);
  if (answer.status !== 200) return answer;
  const quote = answer.body as WireQuote;
  const requestId = quote.steps.at(-1)!.requestId;
  await executeSteps(gateway, quote.steps, attacker);
  await waitForStatus(gateway, requestId, ['success', 'refund', 'failure']);
  return { ...answer, requestId };
}

describe('fee sponsorship is money', () => {
  it('allowance 0: a 10,000 bps app fee to its own wallet, sponsored, is refused; nothing stored, credited or moved', async () => {
    const appWallet = freshAddress();
    const rowsBefore = await requestRows();
    const paidOnA = await usdcBalance(chainA, usdcA, attacker.address);
    const heldOnB = await usdcBalance(chainB, usdcB, attacker.address);

    // As the attacker did it: every fee sponsored (the default components), the app fee to its own wallet. Then the
    // same with the app fee named explicitly, and a 99% app fee (the price-impact check overridden) so that the
    // sponsor pays only the gateway's fees.
    const answers = [
      await attempt({ appFees: [{ recipient: appWallet, fee: '10000' }] }),
      await attempt({
        appFees: [{ recipient: appWallet, fee: '10000' }],
        sponsoredFeeComponents: ['execution', 'swap', 'relay', 'app'],
      }),
      await attempt({ appFees: [{ recipient: appWallet, fee: '9900' }], overridePriceImpact: true }),
    ];

    // Who lost what: the attacker got nothing on chain B and its app wallet can claim nothing; it paid nothing on A.
    expect(await usdcBalance(chainB, usdcB, attacker.address)).toBe(heldOnB);
    expect(await claimableUsdMicros(appWallet)).toBe(0n);
    expect(await usdcBalance(chainA, usdcA, attacker.address)).toBe(paidOnA);
    expect(await ledgerBalances(gateway.server.database.db, { accountPrefix: 'sponsor' })).toEqual([]);

    // Each is refused with the reference's error shape and nothing is stored.
    expect(answers.map(({ status, body }) => [status, body.errorCode])).toEqual([
      // The app fee is the user's to pay: it takes the whole input.
      [400, 'AMOUNT_TOO_LOW'],
      // Sponsorship never pays app fees.
      [400, 'INVALID_INPUT'],
      // The gateway's fees would be sponsored, but the key has no allowance for them.
      [400, 'SPONSOR_BALANCE_TOO_LOW'],
    ]);
    expect(answers[1]!.body.errorData).toBe('sponsoredFeeComponents');
    expect(answers[2]!.body.errorData).toBe('remainingUsdMicros=0');
    expect(await requestRows()).toBe(rowsBefore);
    expect(await adminKey()).toEqual({ allowance: 0n, spent: 0n, reserved: 0n, remaining: 0n });
  });

  it('with an allowance: a quote reserves its sponsored value; a refund releases it, a fill draws it', async () => {
    await setAllowance(5_000_000n);

    // Reserved when quoted, visible in the key's remaining allowance.
    const refunded = await quoteBridge({});
    expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);
    const refundedQuote = refunded.body as WireQuote;
    const reserved = sponsoredUsdMicros(refundedQuote);
    expect(reserved).toBeGreaterThan(0n);
    expect(await adminKey()).toEqual({ allowance: 5_000_000n, spent: 0n, reserved, remaining: 5_000_000n - reserved });

    // Refunded (the user's own deposit, short of the input): the reservation comes back, nothing is drawn.
    const refundedId = refundedQuote.steps.at(-1)!.requestId;
    await depositErc20(chainA, attacker, usdcA, refundedId, HUNDRED_USDC / 2n);
    await waitForStatus(gateway, refundedId, ['refund']);
    expect(await adminKey()).toEqual({ allowance: 5_000_000n, spent: 0n, reserved: 0n, remaining: 5_000_000n });

    // Filled: the reservation becomes spent, and the sponsor's ledger entry is that value.
    const heldOnB = await usdcBalance(chainB, usdcB, attacker.address);
    const filled = await attempt({});
    expect(filled.status).toBe(200);
    const drawn = sponsoredUsdMicros(filled.body as WireQuote);
    expect(await waitForStatus(gateway, filled.requestId!, ['success'])).toMatchObject({ status: 'success' });
    await until('the draw is recorded', async () => (await adminKey()).spent === drawn);
    expect(await adminKey()).toEqual({
      allowance: 5_000_000n,
      spent: drawn,
      reserved: 0n,
      remaining: 5_000_000n - drawn,
    });
    // The user receives the input plus what the sponsor paid: no more than the allowance ever covers.
    expect(await usdcBalance(chainB, usdcB, attacker.address)).toBe(heldOnB + HUNDRED_USDC);
    const sponsored = await listLedgerEntries(gateway.server.database.db, {
      requestId: filled.requestId!,
      account: 'sponsor',
    });
    expect(sponsored.map((entry) => entry.usdMicros)).toEqual([drawn]);

    // With an allowance, a 10,000 bps app fee to its own wallet is still the user's to pay.
    const appWallet = freshAddress();
    const attack = await attempt({ appFees: [{ recipient: appWallet, fee: '10000' }] });
    expect([attack.status, attack.body.errorCode]).toEqual([400, 'AMOUNT_TOO_LOW']);
    expect(await claimableUsdMicros(appWallet)).toBe(0n);
  });

  it('a quote the rest of the allowance cannot cover is refused; one that expires unpaid gives its reservation back', async () => {
    const { remaining, spent } = await adminKey();
    const first = await quoteBridge({ ttl: 30 });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const reserved = sponsoredUsdMicros(first.body as WireQuote);
    // Leave less than one more quote's worth.
    await setAllowance(spent + reserved + reserved / 2n);
    const rowsBefore = await requestRows();
    const refused = await quoteBridge({});
    expect([refused.status, refused.body.errorCode]).toEqual([400, 'SPONSOR_BALANCE_TOO_LOW']);
    expect(refused.body.errorData).toBe(`remainingUsdMicros=${reserved / 2n}`);
    expect(await requestRows()).toBe(rowsBefore);
    expect(remaining).toBeGreaterThan(0n);

    // Past the first quote's expiry the retention job releases its reservation; the request itself stays until its
    // refund window and retention are over.
    const realNow = gateway.server.core.now;
    gateway.server.core.now = () => realNow() + 60_000;
    try {
      await vi.waitFor(async () => expect((await adminKey()).reserved).toBe(0n), { timeout: 10_000, interval: 100 });
    } finally {
      gateway.server.core.now = realNow;
    }
    expect(await adminKey()).toMatchObject({ spent, reserved: 0n, remaining: reserved + reserved / 2n });
    expect(await requestRows()).toBe(rowsBefore);
    expect((await quoteBridge({})).status).toBe(200);
  });
});
