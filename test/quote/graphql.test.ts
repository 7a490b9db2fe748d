/**
 * GraphQL `quote` and `price` over HTTP POST /graphql on a real devnet: for the same input they return the same
 * numbers as REST `POST /quote/v2` and `POST /price` (amounts, fees, details, steps and their transactions,
 * the protocol order; only the random request id / order salt and the clock-based deadlines differ), errors
 * carry the REST `errorCode` in `extensions.code`, and the `x-api-key` header works as on REST.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, parseUnits, recoverMessageAddress, zeroAddress, type Address } from 'viem';
import type { DevnetChain } from '../../src/chain/devnet.js';
import { hashApiKey } from '../../src/core/apiKeys/authenticate.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import { post, type GraphQLResponse } from '../graphql/harness.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const A = 31337;
const B = 31338;
const keys = { sponsor: 'quote-graphql-sponsor-key', plain: 'quote-graphql-plain-key' };

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
  const { db } = gateway.server.database;
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
    id: 'plain',
    name: 'Plain',
    keyHash: hashApiKey(keys.plain),
    sponsorshipEnabled: false,
    now: Date.now(),
  });
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

const chain = (id: number): DevnetChain => gateway.devnet.descriptor.chains.find((c) => c.chainId === id)!;
const token = (id: number, tokenId: string): Address => chain(id).tokens.find((t) => t.id === tokenId)!.address;
const user = (i = 0): Address => gateway.devnet.descriptor.accounts[i]!.address;

async function countRequests(): Promise<number> {
  const { db } = gateway.server.database;
  const row = await db.selectFrom('requests').select(db.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

const amount =
  'currency { chainId address symbol name decimals metadata { logoURI verified isNative } } amount amountFormatted amountUsd minimumAmount';
const fees = `fees { gas { ${amount} } relayer { ${amount} } relayerGas { ${amount} } relayerService { ${amount} } app { ${amount} } subsidized { ${amount} } }`;
const slippage = 'slippageTolerance { total origin { usd value percent } destination { usd value percent } }';
const impact = 'totalImpact { usd percent } swapImpact { usd percent }';
const quoteSelection = `
  steps {
    id action description kind requestId depositAddress
    items { status data { ... on TransactionData { from to data value chainId } } check { endpoint method } }
  }
  ${fees}
  details {
    operation sender recipient
    currencyIn { ${amount} } currencyOut { ${amount} } refundCurrency { ${amount} }
    ${impact}
    expandedPriceImpact { swap { usd } execution { usd } service { usd } app { usd } sponsored { usd } }
    rate ${slippage} timeEstimate userBalance isFixedRate
    route {
      origin { inputCurrency { ${amount} } outputCurrency { ${amount} } router }
      destination { inputCurrency { ${amount} } outputCurrency { ${amount} } router }
    }
  }
  protocol {
    v2 {
      orderId orderSignature
      orderData {
        version solverChainId solver salt
        inputs {
          payment { chainId currency amount weight }
          refunds { chainId recipient currency minimumAmount deadline extraData }
        }
        output { chainId payments { recipient currency minimumAmount expectedAmount } calls deadline extraData }
        fees
      }
      paymentDetails { chainId depository currency amount }
    }
  }`;
const priceSelection = `
  ${fees}
  details {
    operation sender recipient currencyIn { ${amount} } currencyOut { ${amount} }
    ${impact} rate ${slippage} timeEstimate userBalance
  }`;

const QUOTE = `query Quote($input: QuoteInput!) { quote(input: $input) { ${quoteSelection} } }`;
const PRICE = `query Price($input: QuoteInput!) { price(input: $input) { ${priceSelection} } }`;

/**
 * The REST value restricted to what the GraphQL answer selected (same keys, same array lengths), so fields
 * REST has and the GraphQL selection leaves out do not count, and a field GraphQL has that REST lacks shows
 * up as `undefined`.
 */
function project(rest: unknown, graphql: unknown): unknown {
  // An optional field REST leaves out is null in GraphQL.
  if (rest === undefined && graphql === null) return null;
  if (Array.isArray(graphql)) return Array.isArray(rest) ? rest.map((item, i) => project(item, graphql[i])) : rest;
  if (graphql !== null && typeof graphql === 'object') {
    if (rest === null || typeof rest !== 'object') return rest;
    return Object.fromEntries(
      Object.keys(graphql).map((key) => [
        key,
        project((rest as Record<string, unknown>)[key], (graphql as Record<string, unknown>)[key]),
      ]),
    );
  }
  return rest;
}

/**
 * What legitimately differs between two quotes of the same input: the random order salt (hence the order id
 * and the request id, which the deposit calldata and the status check carry) and the deadlines taken from the
 * clock (compared apart, within two seconds). Replaces each with a placeholder and spells enums the REST way.
 */
function normalizeQuote(quote: any): any {
  const copy = structuredClone(quote);
  const requestId: string = copy.steps.at(-1).requestId;
  const strip = (text: string) => text.split(requestId.slice(2)).join('<requestId>');
  for (const step of copy.steps) {
    expect(step.requestId).toBe(requestId);
    step.requestId = '<requestId>';
    step.kind = String(step.kind).toLowerCase();
    for (const item of step.items) {
      item.status = String(item.status).toLowerCase();
      item.data.data = strip(item.data.data);
      if (item.check) item.check.endpoint = strip(item.check.endpoint);
    }
  }
  const order = copy.protocol.v2;
  order.orderId = '<orderId>';
  if (order.orderSignature !== null) order.orderSignature = '<signature>';
  order.orderData.salt = '<salt>';
  for (const input of order.orderData.inputs) for (const refund of input.refunds) refund.deadline = '<deadline>';
  order.orderData.output.deadline = '<deadline>';
  copy.details.slippageTolerance.total = Number(copy.details.slippageTolerance.total);
  return copy;
}

/** The clock-based deadlines of a quote: the fill deadline and each refund's. */
const deadlines = (quote: any): number[] => [
  quote.protocol.v2.orderData.output.deadline,
  ...quote.protocol.v2.orderData.inputs.flatMap((input: any) => input.refunds.map((refund: any) => refund.deadline)),
];

const graphqlInput = (rest: Record<string, any>) => {
  const { slippageTolerance, appFees, ...others } = rest;
  return {
    ...others,
    ...(slippageTolerance === undefined ? {} : { slippageTolerance: Number(slippageTolerance) }),
    ...(appFees === undefined
      ? {}
      : {
          appFees: appFees.map((fee: { recipient: string; fee: string }) => ({
            recipient: fee.recipient,
            fee: Number(fee.fee),
          })),
        }),
  };
};

async function graphql(
  query: string,
  input: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<GraphQLResponse> {
  const { status, body } = await post(gateway.url, query, { input }, headers);
  expect(status).toBe(200);
  return body;
}

/** Quotes `input` over REST and GraphQL and expects the same quote. */
async function expectSameQuote(input: Record<string, any>, headers: Record<string, string> = {}) {
  const before = await countRequests();
  const rest = await call(gateway.url, 'getQuote', { body: input, headers });
  expect(rest.status, JSON.stringify(rest.body)).toBe(200);
  const body = await graphql(QUOTE, graphqlInput(input), headers);
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  const quote = body.data.quote;
  // Both stored their request.
  expect(await countRequests()).toBe(before + 2);
  expect(quote.steps.at(-1).requestId).not.toBe(rest.body.steps.at(-1).requestId);
  // The solver's signature covers the (random) order id: check it, then compare the rest.
  for (const order of [rest.body.protocol.v2, quote.protocol.v2]) {
    if (order.orderSignature == null) continue;
    const signer = await recoverMessageAddress({ message: { raw: order.orderId }, signature: order.orderSignature });
    expect(signer).toBe(gateway.server.core.solver.address);
  }
  expect(normalizeQuote(quote)).toEqual(normalizeQuote(project(rest.body, quote)));
  const [restDeadlines, graphqlDeadlines] = [deadlines(rest.body), deadlines(quote)];
  expect(graphqlDeadlines).toHaveLength(restDeadlines.length);
  graphqlDeadlines.forEach((deadline, i) => expect(Math.abs(deadline - restDeadlines[i]!)).toBeLessThanOrEqual(2));
  return { rest: rest.body, graphql: quote };
}

/** Prices `input` over REST and GraphQL and expects the same price. */
async function expectSamePrice(input: Record<string, any>, headers: Record<string, string> = {}) {
  const rest = await call(gateway.url, 'getPrice', { body: input, headers });
  expect(rest.status, JSON.stringify(rest.body)).toBe(200);
  const body = await graphql(PRICE, graphqlInput(input), headers);
  expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
  const price = body.data.price;
  const expected: any = project(rest.body, price);
  expected.details.slippageTolerance.total = Number(expected.details.slippageTolerance.total);
  expect(price).toEqual(expected);
  return { rest: rest.body, graphql: price };
}

async function expectGraphQLError(
  query: string,
  input: Record<string, unknown>,
  code: string,
  headers: Record<string, string> = {},
) {
  const before = await countRequests();
  const body = await graphql(query, input, headers);
  expect(body.data ?? null).toBeNull();
  expect(body.errors, JSON.stringify(body)).toHaveLength(1);
  const [error] = body.errors!;
  expect(error!.extensions?.code, error!.message).toBe(code);
  expect(error!.message.length).toBeGreaterThan(0);
  expect(await countRequests()).toBe(before);
  return error!;
}

const bridge = () => ({
  user: user(),
  originChainId: A,
  destinationChainId: B,
  originCurrency: token(A, 'usdc'),
  destinationCurrency: token(B, 'usdc'),
  amount: '25000000',
  tradeType: 'EXACT_INPUT',
});

describe('GraphQL quote and price', () => {
  it('quote: a USDC bridge (approve + deposit) is the REST quote', async () => {
    const { graphql: quote } = await expectSameQuote(bridge());
    expect(quote.steps.map((step: { id: string }) => step.id)).toEqual(['approve', 'deposit']);
    expect(quote.steps[1].items[0].data).toMatchObject({ to: chain(A).contracts.depository, chainId: A, value: '0' });
    expect(quote.details.operation).toBe('bridge');
  });

  it('quote: an EXACT_OUTPUT ETH-to-USDC swap with slippage, app fees and a recipient is the REST quote', async () => {
    const { graphql: quote } = await expectSameQuote({
      ...bridge(),
      originCurrency: zeroAddress,
      amount: parseUnits('150', 6).toString(),
      tradeType: 'EXACT_OUTPUT',
      recipient: user(1),
      refundTo: user(2),
      slippageTolerance: '75',
      appFees: [{ recipient: user(3), fee: '40' }],
      includeProtocolData: true,
    });
    expect(quote.details.operation).toBe('swap');
    expect(quote.details.currencyOut.amount).toBe('150000000');
    expect(BigInt(quote.fees.app.amount)).toBeGreaterThan(0n);
    expect(quote.protocol.v2.orderSignature).toMatch(/^0x[0-9a-f]{130}$/);
    expect(quote.steps.map((step: { id: string }) => step.id)).toEqual(['deposit']);
  });

  it('quote: a call (txs) with native value is the REST quote', async () => {
    const { graphql: quote } = await expectSameQuote({
      ...bridge(),
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.02').toString(),
      txs: [{ to: user(1), value: parseEther('0.001').toString(), data: '0x' }],
    });
    expect(quote.details.operation).toBe('call');
    expect(quote.protocol.v2.orderData.output.calls).toHaveLength(1);
  });

  it('quote: sponsored fees with an x-api-key are the REST quote', async () => {
    const { graphql: quote } = await expectSameQuote(
      { ...bridge(), subsidizeFees: true },
      { 'x-api-key': keys.sponsor },
    );
    expect(BigInt(quote.fees.subsidized.amount)).toBeGreaterThan(0n);
    expect(quote.details.currencyOut.amount).toBe(bridge().amount);
  });

  it('price: the same numbers as REST /price, and as the quote', async () => {
    const { graphql: price } = await expectSamePrice(bridge());
    const quote = await graphql(QUOTE, bridge());
    expect(quote.errors).toBeUndefined();
    expect(price.details.currencyOut).toEqual(quote.data.quote.details.currencyOut);
    expect(price.fees).toEqual(quote.data.quote.fees);
    await expectSamePrice({
      ...bridge(),
      destinationCurrency: token(B, 'usdt'),
      amount: '12345678',
      tradeType: 'EXPECTED_OUTPUT',
      slippageTolerance: '10',
    });
  });

  it('errors carry the REST errorCode in extensions.code, and store nothing', async () => {
    const slippage = await expectGraphQLError(
      QUOTE,
      { ...bridge(), slippageTolerance: -1 },
      'INVALID_SLIPPAGE_TOLERANCE',
    );
    expect(slippage.extensions).toMatchObject({ status: 400, retriable: false });
    expect(slippage.path).toEqual(['quote']);
    await expectGraphQLError(QUOTE, { ...bridge(), slippageTolerance: 10_001 }, 'INVALID_SLIPPAGE_TOLERANCE');
    await expectGraphQLError(PRICE, { ...bridge(), slippageTolerance: 10_001 }, 'INVALID_SLIPPAGE_TOLERANCE');
    await expectGraphQLError(QUOTE, { ...bridge(), destinationChainId: 1 }, 'UNSUPPORTED_CHAIN');
    await expectGraphQLError(PRICE, { ...bridge(), originChainId: 999_999 }, 'UNSUPPORTED_CHAIN');
    await expectGraphQLError(QUOTE, { ...bridge(), amount: '0' }, 'AMOUNT_TOO_LOW');
    await expectGraphQLError(QUOTE, { ...bridge(), recipient: token(B, 'usdc') }, 'INVALID_RECIPIENT');
    // usePermit is supported, but only for tokens with a permit: WETH has none.
    const permit = await expectGraphQLError(
      QUOTE,
      { ...bridge(), originCurrency: token(A, 'weth'), destinationCurrency: token(B, 'weth'), usePermit: true },
      'INVALID_INPUT',
    );
    expect(permit.extensions?.errorData).toBe('usePermit');
    const liquidity = await expectGraphQLError(
      QUOTE,
      { ...bridge(), amount: parseUnits('20000000', 6).toString(), tradeType: 'EXACT_OUTPUT' },
      'INSUFFICIENT_LIQUIDITY',
    );
    expect(liquidity.extensions?.errorData).toMatch(/^available=\d+$/);
  });

  it('x-api-key works for GraphQL: unknown key UNAUTHORIZED, no sponsorship FORBIDDEN, subsidizeFees without a key UNAUTHORIZED', async () => {
    const unknown = await expectGraphQLError(QUOTE, bridge(), 'UNAUTHORIZED', { 'x-api-key': 'no-such-key' });
    expect(unknown.extensions).toMatchObject({ status: 401 });
    await expectGraphQLError(PRICE, bridge(), 'UNAUTHORIZED', { 'x-api-key': 'no-such-key' });
    await expectGraphQLError(QUOTE, { ...bridge(), subsidizeFees: true }, 'UNAUTHORIZED');
    const forbidden = await expectGraphQLError(QUOTE, { ...bridge(), subsidizeFees: true }, 'FORBIDDEN', {
      'x-api-key': keys.plain,
    });
    expect(forbidden.extensions).toMatchObject({ status: 403 });
    // A known key quotes.
    const ok = await graphql(PRICE, bridge(), { 'x-api-key': keys.plain });
    expect(ok.errors).toBeUndefined();
  });
});
