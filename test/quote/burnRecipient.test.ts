/**
 * Issue #20 item 1: a quote whose `recipient` was the zero address was answered, and after the deposit the
 * output went to the zero address with status `success`. A quote now refuses burn addresses (the zero address,
 * the keyless low range `0x…0001`–`0x…ffff`, `0x…dEaD`, `0xdEaD…2069`) as `recipient`, `refundTo` and app-fee
 * recipient with 400 `INVALID_RECIPIENT` on REST (`/quote/v2`, `/price`) and GraphQL, and stores nothing; the
 * zero address as a currency (native) still quotes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, zeroAddress, type Address } from 'viem';
import { post } from '../graphql/harness.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const A = 31337;
const B = 31338;
const DEAD: Address = '0x000000000000000000000000000000000000dEaD';
const DEAD_2069: Address = '0xdEAD000000000000000042069420694206942069';
const ONE: Address = '0x0000000000000000000000000000000000000001';
const PRECOMPILE_P256: Address = '0x0000000000000000000000000000000000000100';

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

const user = (i = 0): Address => gateway.devnet.descriptor.accounts[i]!.address;

/** What the user sent: 0.01 ETH from chain A to chain B (native on both sides: the zero address as currency). */
const ethBridge = () => ({
  user: user(),
  originChainId: A,
  destinationChainId: B,
  originCurrency: zeroAddress,
  destinationCurrency: zeroAddress,
  amount: parseEther('0.01').toString(),
  tradeType: 'EXACT_INPUT',
});

async function countRequests(): Promise<number> {
  const { db } = gateway.server.database;
  const row = await db.selectFrom('requests').select(db.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

async function expectRefused(operation: 'getQuote' | 'getPrice', body: object, field: string): Promise<string> {
  const before = await countRequests();
  const response = await call(gateway.url, operation, { body });
  expect(response.body, JSON.stringify(response.body)).toEqual({
    message: expect.any(String),
    errorCode: 'INVALID_RECIPIENT',
    errorData: field,
    statusCode: 400,
  });
  expect(response.status).toBe(400);
  expect(await countRequests(), 'a refused quote stored a request').toBe(before);
  return response.body.message;
}

describe('burn addresses as recipients (REST)', () => {
  it('refuses the zero address as recipient, naming it a burn address', async () => {
    const message = await expectRefused('getQuote', { ...ethBridge(), recipient: zeroAddress }, 'recipient');
    expect(message).toMatch(/^recipient 0x0{40} is a burn address/);
    await expectRefused('getPrice', { ...ethBridge(), recipient: zeroAddress }, 'recipient');
  });

  it('refuses the other listed burn addresses as recipient, in any casing', async () => {
    for (const address of [DEAD, DEAD.toLowerCase(), DEAD_2069, DEAD_2069.toLowerCase(), ONE, PRECOMPILE_P256]) {
      await expectRefused('getQuote', { ...ethBridge(), recipient: address }, 'recipient');
    }
  });

  it('refuses a zero user without a recipient: the recipient defaults to the user', async () => {
    const message = await expectRefused('getQuote', { ...ethBridge(), user: zeroAddress }, 'recipient');
    expect(message).toMatch(/defaults to user/);
  });

  it('refuses burn addresses as refundTo, and says what the zero refundTo means in the reference', async () => {
    const message = await expectRefused('getQuote', { ...ethBridge(), refundTo: zeroAddress }, 'refundTo');
    expect(message).toMatch(/deposit address/);
    await expectRefused('getQuote', { ...ethBridge(), refundTo: DEAD }, 'refundTo');
  });

  it('refuses burn addresses as app-fee recipient', async () => {
    await expectRefused(
      'getQuote',
      {
        ...ethBridge(),
        appFees: [
          { recipient: user(2), fee: '10' },
          { recipient: zeroAddress, fee: '10' },
        ],
      },
      'appFees[1].recipient',
    );
    await expectRefused(
      'getQuote',
      { ...ethBridge(), appFees: [{ recipient: DEAD_2069, fee: '10' }] },
      'appFees[0].recipient',
    );
  });

  it('still quotes the zero address as a currency (native) and an ordinary address next to the burn range', async () => {
    const before = await countRequests();
    const nextToRange: Address = '0x0000000000000000000000000000000000010000';
    const response = await call(gateway.url, 'getQuote', {
      body: { ...ethBridge(), recipient: nextToRange, refundTo: user(1), appFees: [{ recipient: user(2), fee: '10' }] },
    });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    expect(response.body.details.recipient.toLowerCase()).toBe(nextToRange);
    expect(response.body.details.currencyOut.currency.address).toBe(zeroAddress);
    expect(await countRequests()).toBe(before + 1);
  });
});

describe('burn addresses as recipients (GraphQL)', () => {
  const QUOTE = 'query Quote($input: QuoteInput!) { quote(input: $input) { details { recipient } } }';
  const PRICE = 'query Price($input: QuoteInput!) { price(input: $input) { details { recipient } } }';

  async function expectGraphQLRefused(query: string, input: object, field: string): Promise<void> {
    const before = await countRequests();
    const { status, body } = await post(gateway.url, query, { input });
    expect(status).toBe(200);
    expect(body.data ?? null).toBeNull();
    expect(body.errors, JSON.stringify(body)).toHaveLength(1);
    expect(body.errors![0]!.extensions).toMatchObject({ code: 'INVALID_RECIPIENT', status: 400, errorData: field });
    expect(await countRequests()).toBe(before);
  }

  it('refuses recipient, refundTo and app-fee recipient burn addresses with INVALID_RECIPIENT', async () => {
    await expectGraphQLRefused(QUOTE, { ...ethBridge(), recipient: zeroAddress }, 'recipient');
    await expectGraphQLRefused(PRICE, { ...ethBridge(), recipient: DEAD }, 'recipient');
    await expectGraphQLRefused(QUOTE, { ...ethBridge(), refundTo: zeroAddress }, 'refundTo');
    await expectGraphQLRefused(
      QUOTE,
      { ...ethBridge(), appFees: [{ recipient: zeroAddress, fee: 10 }] },
      'appFees[0].recipient',
    );
  });

  it('still quotes the native currency (zero address) to an ordinary recipient', async () => {
    const { body } = await post(gateway.url, QUOTE, { input: { ...ethBridge(), recipient: user(1) } });
    expect(body.errors, JSON.stringify(body)).toBeUndefined();
    expect(body.data.quote.details.recipient).toBe(user(1));
  });
});
