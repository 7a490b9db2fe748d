/**
 * Status streams of one gateway (PGlite, real devnet, solver running): a graphql-ws client and a raw `/ws` client
 * follow a real request through waiting -> pending -> submitted -> success without polling; then the filters,
 * the `/ws` protocol's error frames, unsubscribe, ping and API keys, driven by status changes written straight
 * into the gateway's database (as the solver writes them: `updateRequestStatus`, which appends the outbox row).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, zeroAddress } from 'viem';
import { defaultFieldResolver, type GraphQLObjectType } from 'graphql';
import type { Client } from 'graphql-ws';
import WebSocket from 'ws';
import { hashApiKey } from '../../src/core/apiKeys/authenticate.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import { insertRequest, updateRequestStatus } from '../../src/store/requests.repository.js';
import type { RequestStatus } from '../../src/records/requestStatus.js';
import { rawDataText } from '../../src/ws/rawData.js';
import { startGraphQLApp } from '../graphql/harness.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, requestQuote } from '../helpers/quote.js';
import { newRequest } from '../store/requestFixture.js';
import { collectSubscription, connectGraphQL, connectRaw, wsUrlOf, type RawStreamClient } from './clients.js';

let gateway: TestGateway;
const graphqlClients: Client[] = [];
const rawClients: RawStreamClient[] = [];
const apiKey = 'stream-key-owner';

beforeAll(async () => {
  gateway = await startTestGateway();
  await insertApiKey(gateway.server.database.db, {
    id: 'stream-owner',
    name: 'Stream owner',
    keyHash: hashApiKey(apiKey),
    now: Date.now(),
  });
});
afterEach(async () => {
  await Promise.all(graphqlClients.splice(0).map(async (client) => client.dispose()));
  await Promise.all(rawClients.splice(0).map((client) => client.close()));
});
afterAll(async () => {
  await gateway?.stop();
});

const graphql = (params?: Record<string, unknown>): Client => {
  const client = connectGraphQL(wsUrlOf(gateway.url, '/graphql'), params);
  graphqlClients.push(client);
  return client;
};
const raw = async (query = ''): Promise<RawStreamClient> => {
  const client = await connectRaw(wsUrlOf(gateway.url, `/ws${query}`));
  rawClients.push(client);
  await client.next((m) => m.type === 'connection' && m.status === 'ready');
  return client;
};
const isStatusEvent = (m: Record<string, any>): boolean => m.event === 'request.status.updated';
const statusesOf = (client: RawStreamClient, requestId: string): string[] =>
  client.messages.filter((m) => isStatusEvent(m) && m.data.requestId === requestId).map((m) => m.data.status);

const STATUS_SUBSCRIPTION =
  'subscription($id: ID!) { requestStatus(requestId: $id) { requestId status txHashes inTxHashes failReason } }';
const UPDATES_SUBSCRIPTION =
  'subscription($filter: RequestUpdatesFilterInput!) { requestUpdates(filter: $filter) { requestId status } }';

/** A stored request (as a quote stores it) and a way to move its status as the solver does. */
async function storedRequest(overrides: Parameters<typeof newRequest>[0] = {}) {
  const record = await insertRequest(gateway.server.database.db, newRequest({ createdAt: Date.now(), ...overrides }));
  return {
    id: record.id,
    move: async (status: RequestStatus, extra: { refundFailReason?: string } = {}) => {
      const updated = await updateRequestStatus(gateway.server.database.db, record.id, {
        status,
        now: Date.now(),
        ...extra,
      });
      expect(updated?.status).toBe(status);
    },
  };
}

describe('a devnet request, followed without polling', () => {
  it('graphql-ws and raw /ws clients each see waiting -> pending -> submitted -> success, in order', async () => {
    const [alice] = gateway.devnet.descriptor.accounts;
    const quote = await requestQuote(gateway, alice!, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
    });
    const requestId = quote.steps.at(-1)!.requestId;

    const gql = collectSubscription(graphql(), STATUS_SUBSCRIPTION, { id: requestId });
    const updates = collectSubscription(graphql(), UPDATES_SUBSCRIPTION, { filter: { user: alice!.address } });
    const ws = await raw();
    ws.send({ type: 'subscribe', event: 'request.status.updated', filters: { id: requestId } });
    expect(await ws.next((m) => m.type === 'subscribe')).toEqual({
      type: 'subscribe',
      status: 'success',
      data: { event: 'request.status.updated', filters: { id: requestId } },
    });
    await ws.next(isStatusEvent);
    await expect.poll(() => gql.results.length).toBe(1);

    const receipts = await executeSteps(gateway, quote.steps, alice!);
    await gql.done; // completes by itself after success
    const last = await ws.next((m) => isStatusEvent(m) && m.data.status === 'success', 30_000);

    expect(gql.results.map((r) => r.data?.requestStatus.status)).toEqual([
      'WAITING',
      'PENDING',
      'SUBMITTED',
      'SUCCESS',
    ]);
    expect(statusesOf(ws, requestId)).toEqual(['waiting', 'pending', 'submitted', 'success']);
    const deposit = receipts.get('deposit')!.transactionHash;
    expect(gql.results.at(-1)!.data.requestStatus).toMatchObject({
      requestId,
      inTxHashes: [deposit],
      failReason: 'N/A',
    });
    expect(gql.results.at(-1)!.data.requestStatus.txHashes).toHaveLength(1);
    expect(last).toMatchObject({
      event: 'request.status.updated',
      publishedAt: expect.any(Number),
      data: {
        requestId,
        status: 'success',
        inTxHashes: [deposit],
        txHashes: gql.results.at(-1)!.data.requestStatus.txHashes,
        updatedAt: expect.any(Number),
        originChainId: gateway.devnet.descriptor.chains[0]!.chainId,
        destinationChainId: gateway.devnet.descriptor.chains[1]!.chainId,
        failReason: 'N/A',
        refundFailReason: 'N/A',
        referrer: null,
        depositAddress: null,
      },
    });
    // requestUpdates streams changes only (no current status), and does not complete.
    await expect.poll(() => updates.results.length).toBe(3);
    expect(updates.results.map((r) => r.data?.requestUpdates)).toEqual(
      ['PENDING', 'SUBMITTED', 'SUCCESS'].map((status) => ({ requestId, status })),
    );
  });
});

describe('GraphQL subscriptions', () => {
  it('requestStatus of a finished request answers its status and completes', async () => {
    const request = await storedRequest();
    await request.move('success');
    const gql = collectSubscription(graphql(), STATUS_SUBSCRIPTION, { id: request.id });
    await gql.done;
    expect(gql.results.map((r) => r.data?.requestStatus.status)).toEqual(['SUCCESS']);
  });

  it('failure then refund: the stream waits for the refund; failure with a refund fail reason ends it', async () => {
    const refunded = await storedRequest();
    const unrefundable = await storedRequest();
    const a = collectSubscription(graphql(), STATUS_SUBSCRIPTION, { id: refunded.id });
    const b = collectSubscription(graphql(), STATUS_SUBSCRIPTION, { id: unrefundable.id });
    await expect.poll(() => a.results.length + b.results.length).toBe(2);
    for (const request of [refunded, unrefundable]) {
      await request.move('pending');
      await request.move('failure');
    }
    await refunded.move('refund');
    await unrefundable.move('failure', { refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND' });
    await Promise.all([a.done, b.done]);
    expect(a.results.map((r) => r.data.requestStatus.status)).toEqual(['WAITING', 'PENDING', 'FAILURE', 'REFUND']);
    expect(b.results.map((r) => r.data.requestStatus.status)).toEqual(['WAITING', 'PENDING', 'FAILURE', 'FAILURE']);
    expect(a.results.at(-1)!.data.requestStatus.failReason).toBe('UNKNOWN');
  });

  it('requestStatus of an unknown or malformed id fails with NOT_FOUND / INVALID_INPUT', async () => {
    const client = graphql();
    const unknown = collectSubscription(client, STATUS_SUBSCRIPTION, { id: `0x${'ab'.repeat(32)}` });
    await unknown.done;
    expect(unknown.results[0]!.errors).toMatchObject([{ extensions: { code: 'NOT_FOUND' } }]);
    const malformed = collectSubscription(client, STATUS_SUBSCRIPTION, { id: '0x01' });
    await malformed.done;
    expect(malformed.results[0]!.errors).toMatchObject([{ extensions: { code: 'INVALID_INPUT' } }]);
  });

  it('requestUpdates filters by request ids, user, chains, status, referrer and the caller key', async () => {
    const mine = await storedRequest({
      apiKeyId: 'stream-owner',
      referrer: 'my-app',
      user: '0x3333333333333333333333333333333333333333',
    });
    const other = await storedRequest({
      originChainId: 31339,
      recipient: '0x4444444444444444444444444444444444444444',
    });
    const anonymous = graphql();
    const owner = graphql({ apiKey });
    const streams = {
      ids: collectSubscription(anonymous, UPDATES_SUBSCRIPTION, { filter: { requestIds: [other.id] } }),
      user: collectSubscription(anonymous, UPDATES_SUBSCRIPTION, {
        filter: { user: '0x3333333333333333333333333333333333333333' },
      }),
      recipient: collectSubscription(anonymous, UPDATES_SUBSCRIPTION, {
        filter: { user: '0x4444444444444444444444444444444444444444' },
      }),
      origin: collectSubscription(anonymous, UPDATES_SUBSCRIPTION, {
        filter: { originChainId: 31339, requestIds: [mine.id, other.id] },
      }),
      status: collectSubscription(anonymous, UPDATES_SUBSCRIPTION, {
        filter: { status: ['SUBMITTED'], requestIds: [mine.id, other.id] },
      }),
      referrer: collectSubscription(owner, UPDATES_SUBSCRIPTION, { filter: { referrer: 'my-app' } }),
      mine: collectSubscription(owner, UPDATES_SUBSCRIPTION, { filter: { mine: true } }),
    };
    // A subscription is live once the server acknowledged it; wait for the socket round trips.
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const request of [mine, other]) {
      await request.move('pending');
      await request.move('submitted');
    }
    const seen = (name: keyof typeof streams) =>
      streams[name].results.map(
        (r) => `${r.data.requestUpdates.requestId === mine.id ? 'mine' : 'other'}:${r.data.requestUpdates.status}`,
      );
    await expect.poll(() => seen('mine')).toEqual(['mine:PENDING', 'mine:SUBMITTED']);
    await expect.poll(() => seen('ids')).toEqual(['other:PENDING', 'other:SUBMITTED']);
    expect(seen('user')).toEqual(['mine:PENDING', 'mine:SUBMITTED']);
    expect(seen('recipient')).toEqual(['other:PENDING', 'other:SUBMITTED']);
    expect(seen('origin')).toEqual(['other:PENDING', 'other:SUBMITTED']);
    expect(seen('status')).toEqual(['mine:SUBMITTED', 'other:SUBMITTED']);
    expect(seen('referrer')).toEqual(['mine:PENDING', 'mine:SUBMITTED']);
  });

  it('referrer and mine need an API key', async () => {
    const denied = collectSubscription(graphql(), UPDATES_SUBSCRIPTION, { filter: { mine: true } });
    await denied.done;
    expect(denied.results[0]!.errors).toMatchObject([{ extensions: { code: 'UNAUTHORIZED' } }]);
  });
});

describe('/ws protocol', () => {
  it('answers malformed messages with error frames and keeps the socket open', async () => {
    const ws = await raw();
    ws.sendRaw('not json');
    expect(await ws.next(() => true)).toMatchObject({
      type: 'error',
      status: 'error',
      data: { errorCode: 'INVALID_INPUT' },
    });
    ws.sendRaw('[1,2]');
    expect(await ws.next(() => true)).toMatchObject({ type: 'error', status: 'error' });
    ws.send({ type: 'nope' });
    expect(await ws.next(() => true)).toMatchObject({
      type: 'error',
      data: { message: expect.stringContaining('Unknown message type "nope"') },
    });
    ws.send({ type: 'subscribe', event: 'request.created', filters: { id: '0x01' } });
    expect(await ws.next(() => true)).toMatchObject({
      type: 'subscribe',
      status: 'error',
      data: { errorCode: 'INVALID_INPUT', event: 'request.created' },
    });
    ws.send({ type: 'subscribe', event: 'request.status.updated' });
    expect(await ws.next(() => true)).toMatchObject({
      type: 'subscribe',
      status: 'error',
      data: { message: expect.stringContaining('filters.id') },
    });
    ws.send({ type: 'subscribe', event: 'request.status.updated', filters: { id: '0x01' } });
    expect(await ws.next(() => true)).toMatchObject({
      type: 'subscribe',
      status: 'error',
      data: { errorCode: 'INVALID_INPUT', filters: { id: '0x01' } },
    });
    ws.send({ type: 'subscribe', event: 'request.status.updated', filters: { id: `0x${'cd'.repeat(32)}` } });
    expect(await ws.next(() => true)).toMatchObject({
      type: 'subscribe',
      status: 'error',
      data: { errorCode: 'NOT_FOUND' },
    });
    ws.send({ type: 'ping' });
    expect(await ws.next(() => true)).toEqual({ type: 'pong', data: { timestamp: expect.any(Number) } });
    expect(ws.socket.readyState).toBe(ws.socket.OPEN);
  });

  it('unsubscribe stops the events of that request only', async () => {
    const a = await storedRequest();
    const b = await storedRequest();
    const ws = await raw();
    for (const id of [a.id, b.id]) {
      ws.send({ type: 'subscribe', event: 'request.status.updated', filters: { id } });
      await ws.next((m) => isStatusEvent(m) && m.data.requestId === id);
    }
    ws.send({ type: 'unsubscribe', event: 'request.status.updated', filters: { id: a.id } });
    expect(await ws.next((m) => m.type === 'unsubscribe')).toEqual({
      type: 'unsubscribe',
      status: 'success',
      data: { event: 'request.status.updated', filters: { id: a.id } },
    });
    await a.move('pending');
    await b.move('pending');
    await ws.next((m) => isStatusEvent(m) && m.data.requestId === b.id && m.data.status === 'pending');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(statusesOf(ws, a.id)).toEqual(['waiting']);
    expect(statusesOf(ws, b.id)).toEqual(['waiting', 'pending']);
  });

  it('shows the referrer only to the key that quoted the request; an invalid key is refused with 1008', async () => {
    const request = await storedRequest({ apiKeyId: 'stream-owner', referrer: 'my-app' });
    const owner = await raw(`?apiKey=${apiKey}`);
    const stranger = await raw();
    for (const ws of [owner, stranger])
      ws.send({ type: 'subscribe', event: 'request.status.updated', filters: { id: request.id } });
    expect((await owner.next(isStatusEvent)).data.referrer).toBe('my-app');
    expect((await stranger.next(isStatusEvent)).data.referrer).toBeNull();

    const refused = await connectRaw(wsUrlOf(gateway.url, '/ws?apiKey=wrong'));
    rawClients.push(refused);
    const code = await new Promise<number>((resolve) => refused.socket.once('close', (c) => resolve(c)));
    expect(code).toBe(1008);
    expect(refused.messages).toMatchObject([
      { type: 'connection', status: 'error', data: { errorCode: 'UNAUTHORIZED' } },
    ]);
  });

  it('serves the AsyncAPI document', async () => {
    const response = await fetch(`${gateway.url}/documentation/asyncapi.yaml`);
    expect(response.status).toBe(200);
    expect(await response.text()).toMatch(/^asyncapi: 3\.0\.0/);
  });

  it('delivers a committed change within tens of milliseconds (PGlite, woken by its worker at commit)', async () => {
    const request = await storedRequest();
    const ws = await raw();
    ws.send({ type: 'subscribe', event: 'request.status.updated', filters: { id: request.id } });
    await ws.next(isStatusEvent);
    const latencies: number[] = [];
    for (let i = 0; i < 40; i++) {
      const status = i % 2 === 0 ? 'pending' : 'submitted';
      await request.move(status);
      const committed = performance.now();
      await ws.next((m) => isStatusEvent(m) && m.data.status === status);
      latencies.push(ws.arrivals.at(-1)! - committed);
    }
    latencies.sort((x, y) => x - y);
    console.log(
      `pglite commit->/ws subscriber: p50 ${latencies[20]!.toFixed(1)} ms, max ${latencies.at(-1)!.toFixed(1)} ms`,
    );
    expect(latencies[20]).toBeLessThan(50);
  });
});

describe('one execution per status change, document, variables and view (graphql-ws)', () => {
  /** graphql-transport-ws by hand over `ws`, to keep every frame's bytes. */
  async function rawGraphQL(url: string, connectionParams: Record<string, unknown> = {}) {
    const socket = new WebSocket(url, 'graphql-transport-ws');
    const frames: string[] = [];
    socket.on('message', (data) => frames.push(rawDataText(data)));
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ type: 'connection_init', payload: connectionParams }));
    await expect.poll(() => frames.some((f) => f.includes('"connection_ack"'))).toBe(true);
    return {
      frames,
      subscribe: (id: string, query: string, variables: Record<string, unknown>) =>
        socket.send(JSON.stringify({ id, type: 'subscribe', payload: { query, variables } })),
      close: () => socket.close(),
    };
  }

  it('executes each change once per (document, variables, view) and gives every subscriber exactly its own result', async () => {
    // A GraphQL app of its own over the gateway's core (its bus and database), so the test can count resolutions.
    const app = await startGraphQLApp(gateway.server.core);
    const request = await storedRequest({ apiKeyId: 'stream-owner', referrer: 'my-app' });
    const statusField = (app.graphql.schema.getType('RequestStatusRecord') as GraphQLObjectType).getFields()['status']!;
    let resolutions = 0;
    statusField.resolve = (source, args, context, info) => {
      resolutions += 1;
      return defaultFieldResolver(source, args, context, info);
    };
    const documents = {
      hashes: { query: STATUS_SUBSCRIPTION, variables: { id: request.id } },
      dates: {
        query:
          'subscription($id: ID!) { requestStatus(requestId: $id) { status updatedAt depositAddress { address } } }',
        variables: { id: request.id },
      },
      withHashes: {
        query:
          'subscription($id: ID!, $h: Boolean!) { requestStatus(requestId: $id) { status txHashes @include(if: $h) } }',
        variables: { id: request.id, h: true },
      },
      withoutHashes: {
        query:
          'subscription($id: ID!, $h: Boolean!) { requestStatus(requestId: $id) { status txHashes @include(if: $h) } }',
        variables: { id: request.id, h: false },
      },
    };
    const clients: Array<Awaited<ReturnType<typeof rawGraphQL>>> = [];
    const subscribers: Array<{ client: (typeof clients)[number]; id: string; document: keyof typeof documents }> = [];
    try {
      // 2 views (the owner's key, no key; the GraphQL record has no owner-only field, but the views are rendered
      // apart) x 4 (document, variables) x 2 subscribers, two operations per socket.
      for (const params of [{ apiKey }, {}]) {
        for (let copy = 0; copy < 4; copy++) {
          const client = await rawGraphQL(app.wsUrl, params);
          clients.push(client);
          for (const [index, name] of (Object.keys(documents) as Array<keyof typeof documents>).entries()) {
            if (index % 2 !== copy % 2) continue;
            const id = `${name}-${subscribers.length}`;
            client.subscribe(id, documents[name].query, documents[name].variables);
            subscribers.push({ client, id, document: name });
          }
        }
      }
      const nexts = (s: (typeof subscribers)[number]): string[] =>
        s.client.frames.filter((f) => f.startsWith(`{"id":"${s.id}","type":"next"`));
      await expect.poll(() => subscribers.every((s) => nexts(s).length === 1)).toBe(true);
      // The first message is each subscriber's own snapshot, executed for it alone.
      expect(resolutions).toBe(subscribers.length);
      const keys = new Set(subscribers.map((s) => s.document));
      const views = 2;
      const statuses: RequestStatus[] = ['pending', 'submitted', 'success'];
      for (const [index, status] of statuses.entries()) {
        const before = resolutions;
        await request.move(status, {});
        await expect.poll(() => subscribers.every((s) => nexts(s).length === index + 2)).toBe(true);
        // Once per (document, variables) and view for the change, whatever the number of subscribers.
        expect(resolutions - before).toBe(keys.size * views);
      }
      await expect
        .poll(() => subscribers.every((s) => s.client.frames.includes(`{"id":"${s.id}","type":"complete"}`)))
        .toBe(true);
      // Every subscriber got its own document's result, byte for byte what a query of the same selection answers.
      for (const s of subscribers) {
        const { query, variables } = documents[s.document];
        const response = await fetch(`${app.url}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: query.replace(/^subscription/, 'query'), variables }),
        });
        const body = await response.text();
        expect(nexts(s).at(-1)).toBe(`{"id":"${s.id}","type":"next","payload":${body}}`);
        const payloads = nexts(s).map((f) => JSON.parse(f).payload.data.requestStatus);
        expect(payloads.map((p) => p.status)).toEqual(['WAITING', 'PENDING', 'SUBMITTED', 'SUCCESS']);
        expect(Object.keys(payloads[0]).sort()).toEqual(
          {
            hashes: ['failReason', 'inTxHashes', 'requestId', 'status', 'txHashes'],
            dates: ['depositAddress', 'status', 'updatedAt'],
            withHashes: ['status', 'txHashes'],
            withoutHashes: ['status'],
          }[s.document],
        );
      }
    } finally {
      for (const client of clients) client.close();
      await app.stop();
    }
  });
});
