/**
 * The status operations on a real gateway and devnet: `GET /intents/status/v3` (what the reference SDK polls
 * through a quote step's `check.endpoint`), the deprecated `GET /intents/status`, and GraphQL `requestStatus`.
 * Requests come from real quotes; their statuses are moved through the store's `updateRequestStatus`, as the
 * solver does. Every REST answer is checked against the contract by `call`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RequestStatus } from '../../src/records/requestStatus.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { A, B, fixtures, randomHash } from './fixtures.js';

let gateway: TestGateway;
const { quote, usdcBridge, move, graphql } = fixtures(() => gateway);

beforeAll(async () => {
  gateway = await startTestGateway();
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

const STATUS = `query Status($id: ID!) {
  requestStatus(requestId: $id) {
    requestId status inTxHashes txHashes updatedAt originChainId destinationChainId details failReason refundFailReason
  }
}`;

const statusV3 = (requestId: string) => call(gateway.url, 'getIntentStatus', { query: { requestId } });
const statusV1 = (requestId: string) => call(gateway.url, 'getIntentStatusV1', { query: { requestId } });

describe('GET /intents/status/v3', () => {
  it('answers a fresh quote as waiting, at the endpoint the quote tells the SDK to poll', async () => {
    const before = Date.now();
    const { quote: body } = await quote(usdcBridge());
    const check = body.steps.at(-1).items[0].check;
    expect(check).toEqual({
      endpoint: expect.stringMatching(/^\/intents\/status(\/v3)?\?requestId=0x[0-9a-f]{64}$/),
      method: 'GET',
    });

    // The SDK requests baseUrl + endpoint (and rewrites /intents/status to /intents/status/v3).
    const polled = new URL(gateway.url + check.endpoint.replace(/^\/intents\/status(?!\/v3)/, '/intents/status/v3'));
    const { status, body: record } = await statusV3(polled.searchParams.get('requestId')!);
    expect(status).toBe(200);
    expect(record).toEqual({
      status: 'waiting',
      inTxHashes: [],
      txHashes: [],
      updatedAt: expect.any(Number),
      originChainId: A,
      destinationChainId: B,
      quoteCreatedAt: record.updatedAt,
      details: null,
      failReason: 'N/A',
      refundFailReason: 'N/A',
    });
    expect(record.updatedAt).toBeGreaterThanOrEqual(before);
    expect(record.updatedAt).toBeLessThanOrEqual(Date.now());
  });

  it('reports the hashes the SDK reads as the request moves to success', async () => {
    const { requestId } = await quote(usdcBridge());
    const deposit = randomHash();
    const fill = randomHash();

    await move(requestId, { status: 'pending', inTxHash: deposit });
    let { body } = await statusV3(requestId);
    expect(body).toMatchObject({
      status: 'pending',
      inTxHashes: [deposit],
      txHashes: [],
      originChainId: A,
      destinationChainId: B,
    });

    await move(requestId, { status: 'submitted', txHash: fill });
    ({ body } = await statusV3(requestId));
    expect(body).toMatchObject({ status: 'submitted', inTxHashes: [deposit], txHashes: [fill] });

    const done = await move(requestId, { status: 'success' });
    ({ body } = await statusV3(requestId));
    expect(body).toMatchObject({
      status: 'success',
      inTxHashes: [deposit],
      txHashes: [fill],
      failReason: 'N/A',
      refundFailReason: 'N/A',
    });
    expect(body.updatedAt).toBe(done.updatedAt);
    expect(body.quoteCreatedAt).toBeLessThanOrEqual(body.updatedAt);
  });

  /** The fail-reason rules for every status, with and without a recorded reason. */
  const cases: Array<{
    status: RequestStatus;
    failReason: string | null;
    refundFailReason: string | null;
    expected: [string, string];
  }> = [
    { status: 'waiting', failReason: null, refundFailReason: null, expected: ['N/A', 'N/A'] },
    { status: 'depositing', failReason: null, refundFailReason: null, expected: ['N/A', 'N/A'] },
    { status: 'pending', failReason: null, refundFailReason: null, expected: ['N/A', 'N/A'] },
    // A reason recorded earlier is not reported once the request is no longer failed (pending → failure → pending).
    { status: 'pending', failReason: 'SLIPPAGE', refundFailReason: null, expected: ['N/A', 'N/A'] },
    { status: 'submitted', failReason: null, refundFailReason: null, expected: ['N/A', 'N/A'] },
    { status: 'success', failReason: 'SLIPPAGE', refundFailReason: null, expected: ['N/A', 'N/A'] },
    { status: 'failure', failReason: null, refundFailReason: null, expected: ['UNKNOWN', 'N/A'] },
    {
      status: 'failure',
      failReason: 'EXECUTION_REVERTED',
      refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND',
      expected: ['EXECUTION_REVERTED', 'AMOUNT_TOO_LOW_TO_REFUND'],
    },
    { status: 'refund', failReason: null, refundFailReason: null, expected: ['UNKNOWN', 'N/A'] },
    { status: 'refund', failReason: 'DOUBLE_SPEND', refundFailReason: null, expected: ['DOUBLE_SPEND', 'N/A'] },
    { status: 'fallback', failReason: null, refundFailReason: null, expected: ['UNKNOWN', 'N/A'] },
    { status: 'fallback', failReason: 'ORDER_EXPIRED', refundFailReason: null, expected: ['ORDER_EXPIRED', 'N/A'] },
  ];
  const v1Status: Record<RequestStatus, string> = {
    waiting: 'waiting',
    depositing: 'pending',
    pending: 'pending',
    submitted: 'pending',
    success: 'success',
    failure: 'failure',
    refund: 'fallback',
    fallback: 'fallback',
  };

  it('applies the fail-reason rules on every status, the same on v3, v1 and GraphQL', async () => {
    const { requestId } = await quote(usdcBridge());
    for (const c of cases) {
      const label = `${c.status} ${c.failReason}/${c.refundFailReason}`;
      const record = await move(requestId, {
        status: c.status,
        failReason: c.failReason,
        refundFailReason: c.refundFailReason,
      });

      const v3 = await statusV3(requestId);
      expect(v3.status, label).toBe(200);
      expect([v3.body.status, v3.body.failReason, v3.body.refundFailReason], label).toEqual([c.status, ...c.expected]);
      expect(v3.body.updatedAt, label).toBe(record.updatedAt);

      const v1 = await statusV1(requestId);
      expect(v1.status, label).toBe(200);
      expect(v1.body, label).toEqual({
        status: v1Status[c.status],
        details: null,
        inTxHashes: [],
        txHashes: [],
        time: record.updatedAt,
        originChainId: A,
        destinationChainId: B,
      });

      const { data, errors } = await graphql(STATUS, { id: requestId });
      expect(errors, label).toBeUndefined();
      expect(data.requestStatus, label).toEqual({
        requestId,
        ...v3.body,
        status: c.status.toUpperCase(),
        quoteCreatedAt: undefined,
      });
    }
  });

  // REST v3 sends details as text, as the reference does (its SDK prints them while polling); GraphQL keeps the object.
  it('returns recorded details as JSON text on REST (GraphQL: as an object)', async () => {
    const { requestId } = await quote(usdcBridge());
    const details = { reason: 'execution reverted', revertData: '0x08c379a0' };
    await move(requestId, { status: 'failure', failReason: 'EXECUTION_REVERTED', details });
    expect(JSON.parse((await statusV3(requestId)).body.details)).toEqual(details);
    expect(JSON.parse((await statusV1(requestId)).body.details)).toEqual(details);
    expect((await graphql(STATUS, { id: requestId })).data.requestStatus.details).toEqual(details);
  });

  it('sends a recorded message as itself on every REST version (v1 too), as docs/api-notes.md says', async () => {
    const { requestId } = await quote(usdcBridge());
    const message = 'The solver could not fill this request';
    await move(requestId, { status: 'failure', failReason: 'SOLVER_BALANCE_TOO_LOW', details: { message } });
    expect((await statusV3(requestId)).body.details).toBe(message);
    expect((await statusV1(requestId)).body.details).toBe(message);
    expect((await call(gateway.url, 'getIntentStatusV2', { query: { requestId } })).body.details).toBe(message);
    expect((await graphql(STATUS, { id: requestId })).data.requestStatus.details).toEqual({ message });
  });

  it('finds a request whatever the letter case of its id', async () => {
    const { requestId } = await quote(usdcBridge());
    const upper = `0x${requestId.slice(2).toUpperCase()}`;
    expect((await statusV3(upper)).body.status).toBe('waiting');
    expect((await graphql(STATUS, { id: upper })).data.requestStatus.requestId).toBe(requestId);
  });

  it('answers polls made at once (read together) each with its own request, as it is when polled', async () => {
    const ids = [(await quote(usdcBridge())).requestId, (await quote(usdcBridge())).requestId];
    await move(ids[0]!, { status: 'pending', fromStatus: 'waiting' });
    const unknown = randomHash();
    const asked = Array.from({ length: 24 }, (_, index) => [ids[0]!, ids[1]!, unknown][index % 3]!);
    const answers = await Promise.all(asked.map((id) => statusV3(id)));
    for (const [index, id] of asked.entries()) {
      const { status, body } = answers[index]!;
      if (id === unknown) expect([status, body.errorCode]).toEqual([404, 'NOT_FOUND']);
      else expect([status, body.status]).toEqual([200, id === ids[0] ? 'pending' : 'waiting']);
    }
    // A move right before the next polls is seen by all of them.
    await move(ids[1]!, { status: 'pending', fromStatus: 'waiting' });
    const after = await Promise.all(Array.from({ length: 8 }, () => statusV3(ids[1]!)));
    expect(after.map((answer) => answer.body.status)).toEqual(Array(8).fill('pending'));
  });

  it('answers 404 NOT_FOUND for an id nobody quoted (GraphQL: null)', async () => {
    const unknown = randomHash();
    for (const response of [await statusV3(unknown), await statusV1(unknown)]) {
      expect(response.status).toBe(404);
      expect(response.body).toEqual({
        message: expect.stringContaining(unknown),
        errorCode: 'NOT_FOUND',
        statusCode: 404,
      });
    }
    const { data, errors } = await graphql(STATUS, { id: unknown });
    expect(errors).toBeUndefined();
    expect(data.requestStatus).toBeNull();
  });

  it('answers 400 INVALID_INPUT for a malformed or missing id', async () => {
    for (const query of [{ requestId: '0x1234' }, { requestId: 'not-an-id' }, {}] as Array<Record<string, string>>) {
      const response = await call(gateway.url, 'getIntentStatus', { query });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ errorCode: 'INVALID_INPUT', statusCode: 400 });
      expect((await call(gateway.url, 'getIntentStatusV1', { query })).status).toBe(400);
    }
    const { data, errors } = await graphql(STATUS, { id: '0x1234' });
    expect(data?.requestStatus ?? null).toBeNull();
    expect(errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
  });
});
