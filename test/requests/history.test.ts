/**
 * The request history on a real gateway and devnet: `GET /requests/v3`, the deprecated `GET /requests/v2`, and
 * GraphQL `request` / `requests`. Requests come from real quotes (some with an API key and a referrer); their
 * statuses are moved through the store's `updateRequestStatus`, as the solver does. Every REST answer is
 * checked against the contract by `call`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zeroAddress } from 'viem';
import { hashApiKey } from '../../src/core/apiKeys/authenticate.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { A, B, C, fixtures, randomHash } from './fixtures.js';

let gateway: TestGateway;
const { token, account, quote, usdcBridge, move, graphql } = fixtures(() => gateway);

const keys = { a: 'history-key-a', b: 'history-key-b' };
const withKey = (key: string) => ({ 'x-api-key': key });

/** The quotes of this file by name, with the hashes recorded for them. */
const q: Record<string, { requestId: string; quote: any; inTx?: string; outTx?: string }> = {};

beforeAll(async () => {
  gateway = await startTestGateway();
  const { db } = gateway.server.database;
  await insertApiKey(db, { id: 'hist-a', name: 'History A', keyHash: hashApiKey(keys.a), now: Date.now() });
  await insertApiKey(db, { id: 'hist-b', name: 'History B', keyHash: hashApiKey(keys.b), now: Date.now() });

  // One at a time, so that creation times are distinct (pagination is still checked on ties by the store tests).
  q.submitted = await quote(usdcBridge(0));
  q.success = await quote(usdcBridge(1, { referrer: 'app-a' }), withKey(keys.a));
  q.refund = await quote(
    usdcBridge(0, {
      destinationCurrency: token(B, 'weth'),
      referrer: 'app-a',
      appFees: [{ recipient: account(3), fee: '50' }],
    }),
    withKey(keys.a),
  );
  q.failure = await quote(
    usdcBridge(2, { destinationChainId: A, destinationCurrency: token(A, 'weth'), referrer: 'app-b' }),
    withKey(keys.b),
  );
  q.fallback = await quote(
    usdcBridge(1, {
      destinationChainId: C,
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: '10000000000000000',
    }),
  );
  q.reverse = await quote(
    usdcBridge(0, {
      originChainId: B,
      destinationChainId: A,
      originCurrency: token(B, 'usdc'),
      destinationCurrency: token(A, 'usdc'),
      referrer: 'app-a',
    }),
  );
  q.other = await quote(usdcBridge(2, { recipient: account(3) }));
  for (let i = 0; i < 4; i += 1) q[`waiting${i}`] = await quote(usdcBridge(3));

  const hashes = (name: string) => Object.assign(q[name]!, { inTx: randomHash(), outTx: randomHash() });
  hashes('submitted');
  await move(q.submitted.requestId, { status: 'pending', inTxHash: q.submitted.inTx });
  await move(q.submitted.requestId, { status: 'submitted', txHash: q.submitted.outTx });
  hashes('success');
  await move(q.success.requestId, { status: 'pending', inTxHash: q.success.inTx });
  await move(q.success.requestId, { status: 'success', txHash: q.success.outTx });
  hashes('refund');
  await move(q.refund.requestId, { status: 'pending', inTxHash: q.refund.inTx });
  await move(q.refund.requestId, { status: 'refund', failReason: 'DOUBLE_SPEND', txHash: q.refund.outTx });
  await move(q.failure.requestId, { status: 'failure' });
  await move(q.fallback.requestId, { status: 'fallback', failReason: 'ORDER_EXPIRED' });
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

const idOf = (name: string) => q[name]!.requestId;
const v3 = (query: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  call(gateway.url, 'getRequests', { query, headers });
const v2 = (query: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  call(gateway.url, 'getRequestsV2', { query, headers });

/** Every page of a REST listing, following `continuation`. */
async function allPages(list: typeof v3, query: Record<string, string> = {}, headers: Record<string, string> = {}) {
  const records: any[] = [];
  let continuation: string | undefined;
  let pages = 0;
  do {
    const { status, body } = await list({ ...query, ...(continuation === undefined ? {} : { continuation }) }, headers);
    expect(status, JSON.stringify(body)).toBe(200);
    records.push(...body.requests);
    continuation = body.continuation;
    pages += 1;
  } while (continuation !== undefined);
  return { records, pages };
}

async function one(name: string, headers: Record<string, string> = {}) {
  const { status, body } = await v3({ id: idOf(name) }, headers);
  expect(status, JSON.stringify(body)).toBe(200);
  expect(body.requests).toHaveLength(1);
  return body.requests[0];
}

const ids = (records: any[]) => records.map((record) => record.id);

describe('GET /requests/v3 records', () => {
  it('presents a refunded cross-chain swap from its quote and recorded hashes', async () => {
    const { quote: quoted, inTx, outTx } = q.refund!;
    const record = await one('refund');
    const details = quoted.details;
    expect(record).toMatchObject({
      id: idOf('refund'),
      status: 'refund',
      user: account(0).toLowerCase(),
      recipient: account(0).toLowerCase(),
      sender: account(0).toLowerCase(),
      refundTo: account(0).toLowerCase(),
      depositAddress: null,
      requestType: 'Crosschain Swap',
      features: ['app_fees'],
      protocol: {
        orderId: quoted.protocol.v2.orderId,
        hubType: 'onchain',
        solver: { address: quoted.protocol.v2.orderData.solver },
      },
    });
    expect(Date.parse(record.createdAt)).toBeLessThanOrEqual(Date.parse(record.updatedAt));
    const { data } = record;
    expect(data).toMatchObject({
      slippageTolerance: String(details.slippageTolerance.total),
      failReason: 'DOUBLE_SPEND',
      refundFailReason: null,
      usesExternalLiquidity: false,
      feeSponsorship: null,
      refundCurrencyData: details.refundCurrency,
      // Owner-only data, and the caller is anonymous.
      referrer: null,
      apiKeyName: null,
      platformFee: null,
    });
    expect(data.inTxs).toEqual([
      { txHash: inTx, chainId: A, type: 'onchain', timestamp: expect.any(Number), status: 'success' },
    ]);
    expect(data.outTxs).toEqual([
      { txHash: outTx, chainId: B, type: 'onchain', timestamp: expect.any(Number), status: 'success' },
    ]);
    expect(Math.abs(data.inTxs[0].timestamp * 1000 - Date.parse(record.updatedAt))).toBeLessThan(5_000);

    // Fees: the quote's breakdown, USD signed as the reference signs it (costs negative, as in the quote's
    // expandedPriceImpact), amounts positive in the input currency.
    const impact = details.expandedPriceImpact;
    expect(data.fees.currency).toEqual(details.currencyIn.currency);
    expect(data.fees.actual).toBeNull();
    expect(data.fees.quoted.execution.usd).toBe(impact.execution.usd);
    // The swap bucket is the swap fee; the quote's swap impact adds what the inventory cap took off the oracle's
    // price (the pools' price on the destination), so the fee is at most the whole swap cost (both negative).
    expect(Number(data.fees.quoted.swap.usd)).toBeLessThan(0);
    expect(Number(data.fees.quoted.swap.usd)).toBeGreaterThanOrEqual(Number(impact.swap.usd));
    expect(data.fees.quoted.platform.usd).toBe(impact.service.usd);
    expect(data.fees.quoted.app.usd).toBe(impact.app.usd);
    expect(data.fees.quoted.execution.usd.startsWith('-')).toBe(true);
    expect(data.fees.quoted.sponsored).toEqual({ usd: '0', amount: '0', amountFormatted: '0' });
    expect(data.fees.quoted.app.amount).toBe(quoted.fees.app.amount);
    expect(data.fees.quoted.app.amountFormatted).toBe(quoted.fees.app.amountFormatted);
    const { relayerGas, relayerService } = quoted.fees;
    // The legacy split of the same numbers: relayerGas + relayerService = execution + swap + platform.
    expect(
      BigInt(data.fees.quoted.execution.amount) +
        BigInt(data.fees.quoted.swap.amount) +
        BigInt(data.fees.quoted.platform.amount),
    ).toBe(BigInt(relayerGas.amount) + BigInt(relayerService.amount));
    expect(data.appFees).toEqual({
      quoted: [
        {
          recipient: account(3),
          bps: '50',
          amount: quoted.fees.app.amount,
          amountFormatted: quoted.fees.app.amountFormatted,
          amountUsd: quoted.fees.app.amountUsd,
        },
      ],
      actual: [],
      currency: details.currencyIn.currency,
    });

    // Route: the quoted legs; no fill happened, so nothing came out.
    expect(data.route.quoted.origin.inputCurrency).toEqual(details.currencyIn);
    expect(data.route.quoted.destination.inputCurrency).toEqual(details.currencyOut);
    expect(data.route.actual.destination).toEqual({ ...data.route.quoted.destination, outputCurrency: null });
    expect(data.route.actual.origin.outputCurrency).toBeNull();
  });

  it('names the request type and keeps the route of a fill, and leaves an unmined fill out of outTxs', async () => {
    const success = await one('success');
    expect(success.requestType).toBe('Bridge');
    expect(success.features).toEqual([]);
    expect(success.data.route.actual).toEqual(success.data.route.quoted);
    expect(success.data.outTxs).toEqual([
      expect.objectContaining({ txHash: q.success!.outTx, chainId: B, status: 'success' }),
    ]);
    expect(success.data.failReason).toBeNull();

    const submitted = await one('submitted');
    expect(submitted.data.inTxs).toHaveLength(1);
    expect(submitted.data.outTxs).toEqual([]);

    expect((await one('failure')).requestType).toBe('Same-chain Swap');
    expect((await one('failure')).data.failReason).toBe('UNKNOWN');
    expect((await one('failure')).data.outTxs).toEqual([]);
    expect((await one('fallback')).data.failReason).toBe('ORDER_EXPIRED');
    const waiting = await one('waiting0');
    expect(waiting.data).toMatchObject({ failReason: null, refundFailReason: null, inTxs: [], outTxs: [] });
    expect(waiting.data.route.actual).toEqual(waiting.data.route.quoted);
  });
});

describe('GET /requests/v3 pagination', () => {
  it('walks every page newest first with no duplicates or gaps, and counts them', async () => {
    const everything = await allPages(v3, { limit: '50' });
    expect(everything.pages).toBe(1);
    const all = everything.records;
    expect(all.length).toBe(Object.keys(q).length);
    const expectedOrder = [...all].sort(
      (x, y) => Date.parse(y.createdAt) - Date.parse(x.createdAt) || (y.id < x.id ? -1 : 1),
    );
    expect(ids(all)).toEqual(ids(expectedOrder));

    const paged = await allPages(v3, { limit: '3' });
    expect(paged.pages).toBe(Math.ceil(all.length / 3));
    expect(ids(paged.records)).toEqual(ids(all));

    const { body } = await v3({ limit: '2', includeTotal: 'true' });
    expect(body.total).toBe(all.length);
    expect(body.requests).toHaveLength(2);

    const ascending = await allPages(v3, { limit: '4', sortDirection: 'asc' });
    expect(ids(ascending.records)).toEqual(ids(all).reverse());

    const byUpdate = await allPages(v3, { limit: '4', sortBy: 'updatedAt' });
    const updatedOrder = [...all].sort(
      (x, y) => Date.parse(y.updatedAt) - Date.parse(x.updatedAt) || (y.id < x.id ? -1 : 1),
    );
    expect(ids(byUpdate.records)).toEqual(ids(updatedOrder));
  });

  it('refuses a bad page size or continuation', async () => {
    for (const query of [{ limit: '51' }, { limit: '0' }, { continuation: 'not-a-cursor' }] as Array<
      Record<string, string>
    >) {
      const { status, body } = await v3(query);
      expect(status, JSON.stringify(query)).toBe(400);
      expect(body.errorCode).toBe('INVALID_INPUT');
    }
    // A continuation made for another sort.
    const { body } = await v3({ limit: '1' });
    expect((await v3({ continuation: body.continuation, sortDirection: 'asc' })).status).toBe(400);
  });
});

describe('GET /requests/v3 filters', () => {
  const expectIds = async (query: Record<string, string>, names: string[], headers: Record<string, string> = {}) => {
    const { records } = await allPages(v3, { limit: '50', ...query }, headers);
    expect(new Set(ids(records)), JSON.stringify(query)).toEqual(new Set(names.map(idOf)));
  };
  const waiting = ['waiting0', 'waiting1', 'waiting2', 'waiting3'];

  it('filters by user, id, chains, status, recipient, order id, fail reason and deposit address', async () => {
    await expectIds({ user: account(0) }, ['submitted', 'refund', 'reverse']);
    await expectIds({ user: account(1).toLowerCase() }, ['success', 'fallback']);
    await expectIds({ id: idOf('fallback') }, ['fallback']);
    await expectIds({ originChainId: String(B) }, ['reverse']);
    await expectIds({ destinationChainId: String(C) }, ['fallback']);
    await expectIds({ chainId: String(C) }, ['fallback']);
    await expectIds({ chainId: String(B) }, ['submitted', 'success', 'refund', 'reverse', 'other', ...waiting]);
    // origin/destination win over chainId (as in the reference).
    await expectIds({ chainId: String(C), originChainId: String(B) }, ['reverse']);
    await expectIds({ status: 'submitted' }, ['submitted']);
    await expectIds({ status: 'refund' }, ['refund']);
    await expectIds({ status: 'waiting' }, ['reverse', 'other', ...waiting]);
    await expectIds({ recipient: account(3) }, ['other', ...waiting]);
    await expectIds({ orderId: q.success!.quote.protocol.v2.orderId }, ['success']);
    await expectIds({ failReason: 'DOUBLE_SPEND' }, ['refund']);
    await expectIds({ failReason: 'ORDER_EXPIRED', status: 'fallback' }, ['fallback']);
    await expectIds({ failReason: 'N/A', user: account(1) }, ['success']);
    await expectIds({ depositAddress: account(0) }, []);
  });

  it('filters by creation time in whole seconds, inclusive', async () => {
    const record = await one('fallback');
    const second = Math.floor(Date.parse(record.createdAt) / 1000);
    const { records: all } = await allPages(v3, { limit: '50' });
    const inSecond = all.filter((r) => Math.floor(Date.parse(r.createdAt) / 1000) === second);
    const { records } = await allPages(v3, {
      limit: '50',
      startTimestamp: String(second),
      endTimestamp: String(second),
    });
    expect(ids(records)).toEqual(ids(inSecond));
    expect(ids(records)).toContain(record.id);
    const after = await allPages(v3, { limit: '50', startTimestamp: String(second + 1) });
    expect(ids(after.records)).not.toContain(record.id);
  });

  // The hash, currency, amount and type filters are covered one by one in filters.test.ts.
  it('refuses filters the gateway cannot apply rather than ignoring them', async () => {
    const { status, body } = await v3({ filters: '[]' });
    expect(status).toBe(400);
    expect(body).toMatchObject({ errorCode: 'INVALID_INPUT', errorData: 'filters' });
  });
});

describe('GET /requests/v3 referrer and API keys', () => {
  it('needs apiKey with referrer, the owner x-api-key with apiKey, and a known key', async () => {
    let response = await v3({ referrer: 'app-a' });
    expect(response.status).toBe(400);
    expect(response.body.errorCode).toBe('INVALID_INPUT');
    response = await v3({ referrer: 'app-a' }, withKey(keys.a));
    expect(response.status).toBe(400);
    response = await v3({ apiKey: keys.a, referrer: 'app-a' });
    expect(response.status).toBe(401);
    expect(response.body.errorCode).toBe('UNAUTHORIZED');
    response = await v3({}, withKey('no-such-key'));
    expect(response.status).toBe(401);
    response = await v3({ apiKey: keys.b, referrer: 'app-a' }, withKey(keys.a));
    expect(response.status).toBe(403);
    expect(response.body.errorCode).toBe('FORBIDDEN');
    response = await v3({ apiKey: `${keys.a},${keys.b}` }, withKey(keys.a));
    expect(response.status).toBe(403);
  });

  it("lists the caller's requests of a referrer, by key or key id, with their owner-only data", async () => {
    // `reverse` has the same referrer but was quoted without a key: not the caller's.
    await expectOwn({ apiKey: keys.a, referrer: 'app-a' }, ['success', 'refund']);
    await expectOwn({ apiKey: 'hist-a', referrer: 'app-a' }, ['success', 'refund']);
    await expectOwn({ apiKey: keys.a }, ['success', 'refund']);
    await expectOwn({ apiKey: keys.a, referrer: 'app-b' }, []);

    async function expectOwn(query: Record<string, string>, names: string[]) {
      const { records } = await allPages(v3, { limit: '50', ...query }, withKey(keys.a));
      expect(new Set(ids(records)), JSON.stringify(query)).toEqual(new Set(names.map(idOf)));
    }

    const own = await one('refund', withKey(keys.a));
    expect(own.data).toMatchObject({ referrer: 'app-a', apiKeyName: 'History A' });
    expect(own.data.platformFee).toMatchObject({
      bucket: 'major',
      totalFeeBps: expect.any(Number),
      totalPlatformFee: { amount: own.data.fees.quoted.platform.amount },
    });
    for (const [name, headers] of [
      ['refund', withKey(keys.b)],
      ['refund', {}],
      ['reverse', withKey(keys.a)],
    ] as const) {
      const other = await one(name, headers);
      expect(other.data, name).toMatchObject({ referrer: null, apiKeyName: null, platformFee: null });
    }
  });
});

describe('GET /requests/v2 (deprecated)', () => {
  it('sends the deprecation headers on errors too', async () => {
    const response = await v2({ limit: 'many' });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ errorCode: 'INVALID_INPUT' });
    expect(response.headers.get('deprecation')).toBe('@1784678400');
    expect(response.headers.get('link')).toContain('</requests/v3>; rel="successor-version"');
  });

  it('sends the deprecation headers and notice, and the same requests in the earlier shape', async () => {
    const response = await v2({ limit: '50' });
    expect(response.status).toBe(200);
    expect(response.headers.get('deprecation')).toBe('@1784678400');
    expect(response.headers.get('sunset')).toBe('Mon, 24 May 2027 00:00:00 GMT');
    const link = response.headers.get('link')!;
    expect(link).toContain('</requests/v3>; rel="successor-version"');
    expect(link).toContain('rel="deprecation"');
    expect(link).toContain('rel="sunset"');
    expect(response.body.deprecation).toEqual({
      message: expect.stringContaining('/requests/v3'),
      deprecatedAt: '2026-07-22T00:00:00.000Z',
      sunsetAt: '2027-05-24T00:00:00.000Z',
      successor: '/requests/v3',
      migrationGuide: '/documentation#getRequests',
    });
    const current = await allPages(v3, { limit: '50' });
    expect(ids(response.body.requests)).toEqual(ids(current.records));

    const byId = new Map(response.body.requests.map((record: any) => [record.id, record]));
    const status = (name: string) => (byId.get(idOf(name)) as any).status;
    expect([
      status('submitted'),
      status('success'),
      status('refund'),
      status('failure'),
      status('fallback'),
      status('waiting0'),
    ]).toEqual(['pending', 'success', 'refund', 'failure', 'refund', 'waiting']);
  });

  it('carries the deprecated fees and expandedPriceImpact of the quote, and N/A fail reasons', async () => {
    const { body } = await v2({ id: idOf('refund') });
    const [record] = body.requests;
    const quoted = q.refund!.quote;
    expect(record.data.expandedPriceImpact).toEqual({ quoted: quoted.details.expandedPriceImpact, actual: null });
    expect(record.data.fees).toEqual({
      relayer: quoted.fees.relayer.amount,
      relayerGas: quoted.fees.relayerGas.amount,
      relayerService: quoted.fees.relayerService.amount,
      app: quoted.fees.app.amount,
      subsidized: quoted.fees.subsidized.amount,
      // The reference's keys (added for its clients): gas = relayerGas, gas + fixed + price = relayer.
      gas: quoted.fees.relayerGas.amount,
      fixed: expect.stringMatching(/^[0-9]+$/),
      price: expect.stringMatching(/^[0-9]+$/),
      gateway: '0',
    });
    expect(BigInt(record.data.fees.gas) + BigInt(record.data.fees.fixed) + BigInt(record.data.fees.price)).toBe(
      BigInt(quoted.fees.relayer.amount),
    );
    expect(record.data.feesUsd.app).toBe(quoted.fees.app.amountUsd);
    expect(record.data).toMatchObject({
      failReason: 'DOUBLE_SPEND',
      refundFailReason: 'N/A',
      currency: 'usdc',
      currencyObject: quoted.details.currencyIn.currency,
      price: quoted.details.currencyOut.amount,
      metadata: {
        currencyIn: quoted.details.currencyIn,
        currencyOut: quoted.details.currencyOut,
        rate: quoted.details.rate,
      },
    });
    expect(record.data.inTxs).toEqual([
      expect.objectContaining({ hash: q.refund!.inTx, chainId: A, status: 'success' }),
    ]);
    expect(record.referrer).toBeNull();

    const waiting = (await v2({ id: idOf('waiting0') })).body.requests[0];
    expect(waiting.data).toMatchObject({
      failReason: 'N/A',
      refundFailReason: 'N/A',
      expandedPriceImpact: { actual: null },
    });
  });

  it('filters by v2 status, pages, shows owner data for apiKey, and returns the order on request', async () => {
    const pending = await allPages(v2, { status: 'pending' });
    expect(ids(pending.records)).toEqual([idOf('submitted')]);
    const refunds = await allPages(v2, { status: 'refund' });
    expect(new Set(ids(refunds.records))).toEqual(new Set([idOf('refund'), idOf('fallback')]));

    const paged = await allPages(v2, { limit: '4' });
    expect(ids(paged.records)).toEqual(ids((await v2({ limit: '50' })).body.requests));

    expect((await v2({ referrer: 'app-a' })).status).toBe(400);
    expect((await v2({ apiKey: 'no-such-key' })).status).toBe(400);
    const own = await allPages(v2, { apiKey: keys.a, referrer: 'app-a' });
    expect(new Set(ids(own.records))).toEqual(new Set([idOf('success'), idOf('refund')]));
    expect(own.records.every((record) => record.referrer === 'app-a')).toBe(true);

    const { body } = await v2({ id: idOf('success'), includeOrderData: 'true' });
    expect(body.requests[0].orderData).toEqual(q.success!.quote.protocol.v2.orderData);
    // `hash` finds the request by any recorded hash (it was refused before the search filters existed).
    expect(ids((await v2({ hash: q.success!.inTx! })).body.requests)).toEqual([idOf('success')]);
  });
});

const AMOUNT =
  'currency { chainId address symbol name decimals metadata { logoURI verified isNative } } amount amountFormatted amountUsd minimumAmount';
const FEES =
  'execution { usd amount amountFormatted } swap { usd amount amountFormatted } platform { usd amount amountFormatted } app { usd amount amountFormatted } sponsored { usd amount amountFormatted }';
const TX = 'hash chainId block timestamp status fee feeUsd';
const REQUEST = `
  id status user recipient sender refundTo requestType originChainId destinationChainId
  currencyIn { ${AMOUNT} } currencyOut { ${AMOUNT} }
  inTxs { ${TX} } outTxs { ${TX} }
  fees { quoted { ${FEES} } actual { ${FEES} } currency { chainId address symbol name decimals metadata { logoURI verified isNative } } }
  failReason refundFailReason slippageTolerance timeEstimate usesExternalLiquidity referrer
  depositAddress { address type depositor depositTxHash } orderId createdAt updatedAt`;
const REQUESTS = `query Requests($filter: RequestFilterInput, $first: Int, $after: String) {
  requests(filter: $filter, first: $first, after: $after) { edges { cursor node { id createdAt } } pageInfo { hasNextPage endCursor } totalCount }
}`;

/** What GraphQL `Request` should say, from the REST v3 record. */
function fromRest(record: any) {
  const tx = (t: any) => ({
    hash: t.txHash,
    chainId: t.chainId,
    block: t.block ?? null,
    timestamp: new Date(t.timestamp * 1000).toISOString(),
    status: t.status.toUpperCase(),
    fee: null,
    feeUsd: null,
  });
  return {
    id: record.id,
    status: record.status.toUpperCase(),
    user: record.user,
    recipient: record.recipient,
    sender: record.sender,
    refundTo: record.refundTo,
    requestType: record.requestType,
    originChainId: record.data.route.quoted.origin.inputCurrency.currency.chainId,
    destinationChainId: record.data.route.quoted.destination.inputCurrency.currency.chainId,
    currencyIn: record.data.route.quoted.origin.inputCurrency,
    currencyOut: record.data.route.quoted.destination.inputCurrency,
    inTxs: record.data.inTxs.map(tx),
    outTxs: record.data.outTxs.map(tx),
    fees: record.data.fees,
    failReason: record.data.failReason,
    refundFailReason: record.data.refundFailReason,
    slippageTolerance: Number(record.data.slippageTolerance),
    timeEstimate: record.data.timeEstimate,
    usesExternalLiquidity: record.data.usesExternalLiquidity,
    referrer: record.data.referrer,
    depositAddress: record.depositAddress,
    orderId: record.protocol.orderId,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

describe('GraphQL request and requests', () => {
  it('answers request(id) as REST does, owner data included for the owner', async () => {
    for (const name of ['refund', 'success', 'submitted', 'failure', 'waiting0']) {
      for (const headers of [{}, withKey(keys.a)]) {
        const rest = await one(name, headers);
        const { data, errors } = await graphql(
          `query One($id: ID!) { request(id: $id) { ${REQUEST} } }`,
          { id: idOf(name) },
          headers,
        );
        expect(errors, name).toBeUndefined();
        expect(data.request, name).toEqual(fromRest(rest));
      }
    }
    const unknown = await graphql('query One($id: ID!) { request(id: $id) { id } }', { id: randomHash() });
    expect(unknown.errors).toBeUndefined();
    expect(unknown.data.request).toBeNull();
    const malformed = await graphql('query One($id: ID!) { request(id: $id) { id } }', { id: 'nope' });
    expect(malformed.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT' });
  });

  it('pages the connection like REST, resumes after any edge, and counts all pages', async () => {
    const { records: rest } = await allPages(v3, { limit: '50' });
    const nodes: any[] = [];
    const cursors: string[] = [];
    let after: string | null = null;
    let hasNextPage = true;
    while (hasNextPage) {
      const { data, errors } = await graphql(REQUESTS, { first: 4, after });
      expect(errors).toBeUndefined();
      const connection = data.requests;
      expect(connection.totalCount).toBe(rest.length);
      nodes.push(...connection.edges.map((edge: any) => edge.node));
      cursors.push(...connection.edges.map((edge: any) => edge.cursor));
      expect(connection.pageInfo.endCursor).toBe(connection.edges.at(-1)?.cursor ?? null);
      ({ hasNextPage, endCursor: after } = connection.pageInfo);
    }
    expect(ids(nodes)).toEqual(ids(rest));
    expect(nodes.map((node) => node.createdAt)).toEqual(rest.map((record) => record.createdAt));

    // Any edge's cursor continues right after it.
    for (const index of [0, 2, 5]) {
      const { data } = await graphql(REQUESTS, { first: 3, after: cursors[index] });
      expect(ids(data.requests.edges.map((edge: any) => edge.node))).toEqual(ids(rest.slice(index + 1, index + 4)));
    }
    const last = await graphql(REQUESTS, { first: 3, after: cursors.at(-1) });
    expect(last.data.requests).toMatchObject({ edges: [], pageInfo: { hasNextPage: false, endCursor: null } });
  });

  it('filters like REST, with millisecond creation bounds', async () => {
    const names = async (filter: Record<string, unknown>, headers: Record<string, string> = {}) => {
      const { data, errors } = await graphql(REQUESTS, { filter, first: 50 }, headers);
      expect(errors, JSON.stringify(filter)).toBeUndefined();
      return new Set(data.requests.edges.map((edge: any) => edge.node.id));
    };
    expect(await names({ user: account(1) })).toEqual(new Set([idOf('success'), idOf('fallback')]));
    expect(await names({ status: ['REFUND', 'FALLBACK'] })).toEqual(new Set([idOf('refund'), idOf('fallback')]));
    expect(await names({ originChainId: B })).toEqual(new Set([idOf('reverse')]));
    expect(await names({ referrer: 'app-a' }, withKey(keys.a))).toEqual(new Set([idOf('success'), idOf('refund')]));

    const createdAt = Date.parse((await one('fallback')).createdAt);
    expect(
      await names({
        createdAfter: new Date(createdAt).toISOString(),
        createdBefore: new Date(createdAt + 1).toISOString(),
      }),
    ).toEqual(new Set([idOf('fallback')]));
    expect(
      await names({
        createdAfter: new Date(createdAt + 1).toISOString(),
        createdBefore: new Date(createdAt + 1).toISOString(),
      }),
    ).toEqual(new Set());
    expect(
      await names({
        createdAfter: new Date(createdAt).toISOString(),
        createdBefore: new Date(createdAt).toISOString(),
      }),
    ).toEqual(new Set());

    const anonymous = await graphql(REQUESTS, { filter: { referrer: 'app-a' } });
    expect(anonymous.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    // `txHash` finds the request by any recorded hash (it was refused before the search filters existed).
    expect(await names({ txHash: q.success!.outTx })).toEqual(new Set([idOf('success')]));
    const tooMany = await graphql(REQUESTS, { first: 51 });
    expect(tooMany.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT' });
  });
});
