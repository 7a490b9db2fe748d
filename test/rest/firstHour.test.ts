/**
 * Issue #20, what a new user met in the first hour over REST, each as they did it, on one real devnet gateway:
 * - item 5: `"amount": "1.5"` and an oversized amount answer messages in the currency's units (raw integers stay
 *   in `errorData`);
 * - item 6: an EXACT_OUTPUT quote shows no output slippage percent when it shows no slippage value;
 * - item 8: `PATCH {"webhook":{"enabled":false}}` pauses the webhook without restating `url`, and `POST …/revoke`
 *   with `content-type: application/json` and an empty body revokes;
 * - item 9: `/currencies/token/price?address=usdc` takes a symbol as quotes do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, zeroAddress, type Address } from 'viem';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const A = 31337;
const B = 31338;
const adminToken = 'first-hour-admin-token-0123456789';
const bearer = { authorization: `Bearer ${adminToken}` };

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway({ adminToken });
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

const user = (): Address => gateway.devnet.descriptor.accounts[0]!.address;
const token = (chainId: number, symbol: string): Address =>
  gateway.devnet.descriptor.chains.find((c) => c.chainId === chainId)!.tokens.find((t) => t.symbol === symbol)!.address;
const ethBridge = (amount: string, tradeType = 'EXACT_INPUT') => ({
  user: user(),
  originChainId: A,
  destinationChainId: B,
  originCurrency: zeroAddress,
  destinationCurrency: zeroAddress,
  amount,
  tradeType,
});

describe('item 5: error messages in the currency units', () => {
  it('"1.5" as amount says amounts are integers in the smallest unit, not a bare regex', async () => {
    const { status, body } = await call(gateway.url, 'getQuote', { body: ethBridge('1.5') });
    expect(status).toBe(400);
    expect(body.errorCode).toBe('INVALID_INPUT');
    expect(body.message).toMatch(
      /body\.amount must be a whole number written as digits: amounts are integers in the currency's smallest unit/,
    );
    expect(body.message).not.toMatch(/must match pattern/);
  });

  it('an oversized amount is reported in ETH, with the raw integer in errorData', async () => {
    const { status, body } = await call(gateway.url, 'getQuote', {
      body: ethBridge(parseEther('1000000000000').toString(), 'EXACT_OUTPUT'),
    });
    expect(status, JSON.stringify(body)).toBe(400);
    expect(body.errorCode).toBe('INSUFFICIENT_LIQUIDITY');
    expect(body.message).toMatch(
      /cannot deliver 1000000000000 ETH on chain 31338 right now \(it has [0-9]+(\.[0-9]+)? available, not committed to fills in flight\)/,
    );
    expect(body.errorData).toMatch(/^available=[0-9]{19,}$/);
  });
});

describe('item 6: quote details that say the right thing', () => {
  it('an EXACT_OUTPUT quote shows no output slippage (value "0", percent "0"); EXACT_INPUT shows the tolerance', async () => {
    const exact = await call(gateway.url, 'getQuote', {
      body: { ...ethBridge(parseEther('0.01').toString(), 'EXACT_OUTPUT'), slippageTolerance: '50' },
    });
    expect(exact.status, JSON.stringify(exact.body)).toBe(200);
    expect(exact.body.details.slippageTolerance.destination).toMatchObject({ value: '0', percent: '0' });
    const input = await call(gateway.url, 'getQuote', {
      body: { ...ethBridge(parseEther('0.01').toString()), slippageTolerance: '50' },
    });
    expect(input.body.details.slippageTolerance.destination.percent).toBe('0.5');
    expect(BigInt(input.body.details.slippageTolerance.destination.value)).toBeGreaterThan(0n);
  });
});

describe('item 8: admin rough edges', () => {
  const keyPath = (id: string) => `/admin/api-keys/${id}`;

  it('PATCH {"webhook":{"enabled":false}} pauses the webhook and keeps its url and headers', async () => {
    const created = await call(gateway.url, 'createApiKey', {
      headers: bearer,
      body: { name: 'Shop', webhook: { url: 'https://hooks.example.com/relay', headers: { 'x-shop': '1' } } },
    });
    expect(created.status).toBe(201);
    const id = created.body.apiKey.id as string;
    const paused = await call(gateway.url, 'updateApiKey', {
      path: keyPath(id),
      headers: bearer,
      body: { webhook: { enabled: false } },
    });
    expect(paused.status, JSON.stringify(paused.body)).toBe(200);
    expect(paused.body.apiKey.webhook).toEqual({
      url: 'https://hooks.example.com/relay',
      headers: { 'x-shop': '1' },
      enabled: false,
    });
    const resumed = await call(gateway.url, 'updateApiKey', {
      path: keyPath(id),
      headers: bearer,
      body: { webhook: { enabled: true } },
    });
    expect(resumed.body.apiKey.webhook).toEqual({
      url: 'https://hooks.example.com/relay',
      headers: { 'x-shop': '1' },
      enabled: true,
    });
    const got = await call(gateway.url, 'getApiKey', { path: keyPath(id), headers: bearer });
    expect(got.body.apiKey.webhook.enabled).toBe(true);
  });

  it('a webhook change without url on a key without webhook says url is needed, in one sentence', async () => {
    const created = await call(gateway.url, 'createApiKey', { headers: bearer, body: { name: 'No hook' } });
    const id = created.body.apiKey.id as string;
    const refused = await call(gateway.url, 'updateApiKey', {
      path: keyPath(id),
      headers: bearer,
      body: { webhook: { enabled: false } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ errorCode: 'INVALID_INPUT', errorData: 'webhook.url' });
    expect(refused.body.message).toMatch(/webhook\.url is required/);
    const wrongType = await call(gateway.url, 'updateApiKey', {
      path: keyPath(id),
      headers: bearer,
      body: { webhook: { enabled: 'no' } },
    });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.message).toBe('Invalid request: body.webhook.enabled must be boolean');
    const got = await call(gateway.url, 'getApiKey', { path: keyPath(id), headers: bearer });
    expect(got.body.apiKey.webhook).toBeNull();
  });

  it('POST …/revoke with content-type: application/json and an empty body revokes', async () => {
    const created = await call(gateway.url, 'createApiKey', { headers: bearer, body: { name: 'To revoke' } });
    const id = created.body.apiKey.id as string;
    const response = await fetch(`${gateway.url}${keyPath(id)}/revoke`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
    });
    const body = await response.json();
    expect(response.status, JSON.stringify(body)).toBe(200);
    expect(body.apiKey.revokedAt).toEqual(expect.any(Number));
    // A body-taking operation sent the same way still asks for its body.
    const quote = await fetch(`${gateway.url}/quote/v2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '',
    });
    expect(quote.status).toBe(400);
    expect(await quote.json()).toMatchObject({
      errorCode: 'INVALID_INPUT',
      message: expect.stringMatching(/body is required/),
    });
  });
});

describe('item 9: /currencies/token/price takes a symbol as quotes do', () => {
  const price = (chainId: number, address: string) =>
    call(gateway.url, 'getTokenPrice', { query: { chainId: String(chainId), address } });

  it('answers for a symbol or currency id what it answers for the address', async () => {
    const byAddress = await price(A, token(A, 'USDC'));
    expect(byAddress.status).toBe(200);
    for (const symbol of ['usdc', 'USDC']) {
      const bySymbol = await price(A, symbol);
      expect(bySymbol.status, JSON.stringify(bySymbol.body)).toBe(200);
      expect(bySymbol.body).toEqual(byAddress.body);
    }
    expect((await price(A, 'ETH')).body).toEqual((await price(A, zeroAddress)).body);
  });

  it('a string that is neither an address nor a symbol of the chain is INVALID_ADDRESS, naming the chain', async () => {
    const { status, body } = await price(A, 'doge');
    expect(status).toBe(400);
    expect(body).toMatchObject({ errorCode: 'INVALID_ADDRESS', statusCode: 400 });
    expect(body.message).toMatch(/neither an EVM address nor the symbol of a currency of chain 31337/);
  });
});
