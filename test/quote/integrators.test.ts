/**
 * What an integrator's API key changes in a quote, end to end through REST: fee sponsorship (the user receives
 * more, the sponsor's share is recorded) and the revenue share of a qualifying key, stored with the request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import type { DevnetChain } from '../../src/chain/devnet.js';
import { hashApiKey } from '../../src/core/apiKeys/authenticate.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import { getRequest, insertRequest } from '../../src/store/requests.repository.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
const keys = { sponsor: 'sk_sponsor_0001', partner: 'sk_partner_0001', unverified: 'sk_unverified_0001' };

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  const db = gateway.server.database.db;
  await insertApiKey(db, {
    id: 'sponsor',
    name: 'Sponsor',
    keyHash: hashApiKey(keys.sponsor),
    sponsorshipEnabled: true,
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
    // Same route and input: the user receives exactly what the sponsor pays on top of the plain quote.
    expect(BigInt(sponsored.details.currencyOut.amount) - BigInt(plain.details.currencyOut.amount)).toBe(covered);
    expect(sponsored.feeSponsorship.quoted).toMatchObject({
      selectedComponents: ['execution', 'swap', 'service', 'app', 'relay'],
      capHit: false,
    });
    // The reference's clients read the platform component as `relay`: sent beside `service` (issue #19).
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
