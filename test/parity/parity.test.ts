/**
 * Parity with the reference's own clients on a real gateway and devnet: what its UI kit and hooks read, typed
 * with the reference's published API types (referenceTypes.ts, checked at compile time by `npm run typecheck`)
 * and asserted on the values: the `relay` keys beside the spec's `service`, the signs of v3 fee USD values, the
 * v2 fee keys, `details` as text, the v2 status, the operations integrators call, and a quote body with a
 * field this gateway does not know (a newer SDK's option) answered 200.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recoverMessageAddress, type Hex } from 'viem';
import { attestationHashV2 } from '../../src/core/requests/getRequestSignatureV2.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { A, B, fixtures, randomHash } from '../requests/fixtures.js';
import type {
  ReferenceChainHealth,
  ReferenceChains,
  ReferenceQuote,
  ReferenceRequestsV2,
  ReferenceRequestsV3,
  ReferenceSignatureV2,
  ReferenceStatusV2,
  ReferenceStatusV3,
  ReferenceTokenPriceV2,
  ReferenceTrending,
} from './referenceTypes.js';

let gateway: TestGateway;
const { token, usdcBridge, move } = fixtures(() => gateway);
let quoted: { requestId: string; body: ReferenceQuote; headers: Headers };

beforeAll(async () => {
  gateway = await startTestGateway();
  // A newer SDK's option the gateway does not know rides along; the quote must still be answered.
  const response = await call(gateway.url, 'getQuote', {
    body: { ...usdcBridge(0), someFutureOption: { enabled: true } },
  });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  quoted = { requestId: response.body.steps.at(-1).requestId, body: response.body, headers: response.headers };
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

const get = async <T>(
  operationId: Parameters<typeof call>[1],
  init: Parameters<typeof call>[2] = {},
): Promise<{ status: number; body: T }> => {
  const { status, body } = await call(gateway.url, operationId, init);
  return { status, body: body as T };
};

describe('quote', () => {
  it('accepts a body field it does not know, names it in x-ignored-fields, and still refuses wrong types', async () => {
    expect(quoted.headers.get('x-ignored-fields')).toBe('someFutureOption');
    const wrongType = await call(gateway.url, 'getQuote', {
      body: { ...usdcBridge(0), amount: 10, someFutureOption: 1 },
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.errorCode).toBe('INVALID_INPUT');
    expect(wrongType.headers.get('x-ignored-fields')).toBe('someFutureOption');
    const { amount: _amount, ...missing } = usdcBridge(0);
    expect((await call(gateway.url, 'getQuote', { body: { ...missing, someFutureOption: 1 } })).status).toBe(400);
  });

  it('sends the platform fee as expandedPriceImpact.relay (what the UI kit shows) beside service', () => {
    const impact = quoted.body.details!.expandedPriceImpact! as NonNullable<
      NonNullable<ReferenceQuote['details']>['expandedPriceImpact']
    > & {
      service?: { usd?: string };
    };
    expect(impact.relay?.usd).toBeDefined();
    expect(impact.relay).toEqual(impact.service);
  });
});

describe('chains', () => {
  it('sends contracts.relayReceiver beside serviceReceiver', async () => {
    const { body } = await get<ReferenceChains>('getChains');
    for (const chain of body.chains!) {
      const contracts = chain.contracts as { relayReceiver?: string; serviceReceiver?: string };
      expect(contracts.relayReceiver).toMatch(/^0x[0-9a-fA-F]{40}$/);
      expect(contracts.relayReceiver).toBe(contracts.serviceReceiver);
    }
  });

  it('GET /chains/health answers healthy for a served chain, and 400 for an unknown one', async () => {
    expect((await get<ReferenceChainHealth>('getChainHealth', { query: { chainId: String(A) } })).body).toEqual({
      healthy: true,
    });
    expect((await get<ReferenceChainHealth>('getChainHealth')).body).toEqual({ healthy: true });
    const unknown = await call(gateway.url, 'getChainHealth', { query: { chainId: '999999' } });
    expect(unknown.status).toBe(400);
    expect(unknown.body.errorCode).toBe('UNSUPPORTED_CHAIN');
  });
});

describe('requests', () => {
  it('v3 data.fees usd: costs negative, as the reference signs them', async () => {
    const { body } = await get<ReferenceRequestsV3>('getRequests', { query: { id: quoted.requestId } });
    const fees = body.requests![0]!.data!.fees!.quoted!;
    const impact = quoted.body.details!.expandedPriceImpact!;
    expect(fees.execution!.usd).toBe(impact.execution!.usd);
    expect(Number(fees.execution!.usd)).toBeLessThan(0);
    expect(fees.platform!.usd).toBe(impact.relay!.usd);
  });

  it('v2 data.fees and feesUsd carry the reference keys gas, fixed, price and gateway; expandedPriceImpact has relay', async () => {
    const { body } = await get<ReferenceRequestsV2>('getRequestsV2', { query: { id: quoted.requestId } });
    const data = body.requests![0]!.data!;
    const fees = data.fees as Record<string, string>;
    for (const key of ['gas', 'fixed', 'price', 'gateway'] as const) {
      expect(fees[key], key).toMatch(/^[0-9]+$/);
      expect((data.feesUsd as Record<string, string>)[key], key).toBeDefined();
    }
    // The same money as the legacy split: gas + fixed + price = relayerGas + relayerService.
    expect(BigInt(fees.gas!) + BigInt(fees.fixed!) + BigInt(fees.price!)).toBe(
      BigInt(fees.relayerGas!) + BigInt(fees.relayerService!),
    );
    expect(data.expandedPriceImpact!.quoted!.relay).toEqual(quoted.body.details!.expandedPriceImpact!.relay);
  });
});

describe('status', () => {
  it('v3 and v2 send details as text; v2 reports submitted as pending with time and quoteCreatedAt', async () => {
    const { requestId } = quoted;
    await move(requestId, { status: 'pending', inTxHash: randomHash(), details: { message: 'filling' } });
    await move(requestId, { status: 'submitted', txHash: randomHash() });
    const v3 = await get<ReferenceStatusV3>('getIntentStatus', { query: { requestId } });
    expect(typeof v3.body.details).toBe('string');
    const v2 = await get<ReferenceStatusV2>('getIntentStatusV2', { query: { requestId } });
    expect(v2.status).toBe(200);
    expect(v2.body).toMatchObject({ status: 'pending', originChainId: A, destinationChainId: B });
    expect(v2.body.time).toBe(v3.body.updatedAt);
    expect(v2.body.quoteCreatedAt).toBe(v3.body.quoteCreatedAt);
    expect(v2.body.details).toBe(v3.body.details);
    expect((await call(gateway.url, 'getIntentStatusV2', { query: { requestId: randomHash() } })).status).toBe(404);
  });
});

describe('operations integrators call', () => {
  it('GET /requests/{id}/signature/v2 is the solver signature over both ends of the trade', async () => {
    const { status, body } = await get<ReferenceSignatureV2>('getRequestSignatureV2', {
      path: `/requests/${quoted.requestId}/signature/v2`,
    });
    expect(status).toBe(200);
    const data = body.requestData!;
    expect(data).toMatchObject({
      originChainId: A,
      destinationChainId: B,
      destinationCurrency: token(B, 'usdc').toLowerCase(),
    });
    const hash = attestationHashV2(quoted.requestId as Hex, data as Parameters<typeof attestationHashV2>[1]);
    const chains = await get<ReferenceChains>('getChains');
    const solver = chains.body.chains![0]!.solverAddresses![0]!;
    expect(
      (await recoverMessageAddress({ message: { raw: hash }, signature: body.signature as Hex })).toLowerCase(),
    ).toBe(solver.toLowerCase());
  });

  it('GET /currencies/token/price/v2 answers the exact decimal price', async () => {
    const { body } = await get<ReferenceTokenPriceV2>('getTokenPriceV2', {
      query: { chainId: String(A), address: token(A, 'usdc') },
    });
    expect(body.price).toBe('1');
  });

  it('GET /currencies/trending lists curated currencies, bought ones first', async () => {
    const before = await get<ReferenceTrending>('getTrendingCurrencies', { query: { chainId: String(B), limit: '3' } });
    expect(before.status).toBe(200);
    expect(before.body.length).toBe(3);
    expect(before.body.every((c) => c.chainId === B)).toBe(true);
    // The quoted USDC bridge to B is filled: USDC on B becomes the most bought currency there.
    await move(quoted.requestId, { status: 'success' });
    const { body } = await get<ReferenceTrending>('getTrendingCurrencies', {
      query: { chainId: String(B), limit: '3' },
    });
    expect(body[0]!.address!.toLowerCase()).toBe(token(B, 'usdc').toLowerCase());
    const external = await call(gateway.url, 'getTrendingCurrencies', { query: { sortBy: 'coingecko6hTrending' } });
    expect(external.status).toBe(400);
    expect(external.body.errorData).toBe('sortBy');
  });
});
