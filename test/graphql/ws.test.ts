/**
 * graphql-ws on `/graphql` of a real Fastify app (port 0), with a real graphql-ws client over `ws`: queries run
 * through the same schema and core as HTTP, subscriptions reach the core (test/events covers the streams), and
 * disposing closes open connections as "going away" and refuses new ones.
 */
import Fastify from 'fastify';
import { createClient, type Client, type FormattedExecutionResult } from 'graphql-ws';
import WebSocket from 'ws';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createGraphQL } from '../../src/graphql/createGraphQL.js';
import { registerGraphQL } from '../../src/graphql/registerGraphQL.js';
import { makeChainConfig } from '../helpers/chainConfig.js';
import { makeCore, startGraphQLApp, type GraphQLApp } from './harness.js';

const { core } = makeCore([makeChainConfig(10), makeChainConfig(20, { hidden: true })]);
let server: GraphQLApp;
const clients: Client[] = [];

beforeAll(async () => {
  server = await startGraphQLApp(core);
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map(async (client) => client.dispose()));
});
afterAll(async () => {
  await server?.stop();
});

function connect(url: string, options: { connectionParams?: Record<string, unknown> } = {}): Client {
  const client = createClient({
    url,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    ...options,
  });
  clients.push(client);
  return client;
}

/** Every result of one operation, until the server completes it. */
async function collect(
  client: Client,
  query: string,
  variables?: Record<string, unknown>,
): Promise<FormattedExecutionResult<Record<string, unknown>, unknown>[]> {
  const results: FormattedExecutionResult<Record<string, unknown>, unknown>[] = [];
  for await (const result of client.iterate({ query, variables })) results.push(result);
  return results;
}

describe('graphql-ws on /graphql', () => {
  it('runs a chains query over the socket', async () => {
    const client = connect(server.wsUrl);
    const results = await collect(
      client,
      'query($include: [String!]) { chains(includeChains: $include) { id vmType partialDisableLimit } }',
      {
        include: ['20'],
      },
    );
    expect(results).toEqual([
      {
        data: {
          chains: [
            { id: 10, vmType: 'EVM', partialDisableLimit: '0' },
            { id: 20, vmType: 'EVM', partialDisableLimit: '0' },
          ],
        },
      },
    ]);
  });

  it('runs the requestStatus subscription through the core (a malformed id fails with INVALID_INPUT)', async () => {
    // No API key: this harness has no database to look one up in.
    const client = connect(server.wsUrl);
    const results = await collect(
      client,
      'subscription($id: ID!) { requestStatus(requestId: $id) { status updatedAt } }',
      { id: '0x01' },
    );
    expect(results).toHaveLength(1);
    expect(results[0]!.data).toBeUndefined();
    expect(results[0]!.errors).toMatchObject([{ path: ['requestStatus'], extensions: { code: 'INVALID_INPUT' } }]);
  });

  it('reports validation errors of an operation without closing the socket', async () => {
    const client = connect(server.wsUrl);
    await expect(collect(client, '{ chains { nope } }')).rejects.toEqual([
      expect.objectContaining({ message: 'Cannot query field "nope" on type "Chain". Did you mean "name"?' }),
    ]);
    await expect(collect(client, '{ chains {')).rejects.toEqual([
      expect.objectContaining({ message: expect.stringMatching(/^Syntax Error/) }),
    ]);
    expect(await collect(client, '{ chains { id } }')).toEqual([{ data: { chains: [{ id: 10 }] } }]);
  });
});

describe('registration', () => {
  it('refuses an app without @fastify/websocket', async () => {
    const app = Fastify();
    try {
      await expect(registerGraphQL(app, createGraphQL({ core }))).rejects.toThrow(/register @fastify\/websocket/);
    } finally {
      await app.close();
    }
  });
});

describe('dispose', () => {
  it('closes open connections with 1001 and refuses new ones', async () => {
    const own = await startGraphQLApp(core);
    try {
      let closed: { code: number; reason: string } | undefined;
      const client = createClient({
        url: own.wsUrl,
        webSocketImpl: WebSocket,
        retryAttempts: 0,
        lazy: false,
        onNonLazyError: () => {},
        on: { closed: (event) => void (closed = event as { code: number; reason: string }) },
      });
      clients.push(client);
      await new Promise<void>((resolve) => client.on('connected', () => resolve()));

      await own.dispose();
      await expect.poll(() => closed?.code).toBe(1001);

      const late = new WebSocket(own.wsUrl, 'graphql-transport-ws');
      const code = await new Promise<number>((resolve) => late.once('close', (c) => resolve(c)));
      expect(code).toBe(1001);
    } finally {
      await own.stop();
    }
  });

  it('is not needed for app.close() to end open connections', async () => {
    const own = await startGraphQLApp(core);
    let closed: { code: number } | undefined;
    const client = createClient({
      url: own.wsUrl,
      webSocketImpl: WebSocket,
      retryAttempts: 0,
      lazy: false,
      onNonLazyError: () => {},
      on: { closed: (event) => void (closed = event as { code: number }) },
    });
    clients.push(client);
    await new Promise<void>((resolve) => client.on('connected', () => resolve()));
    await own.app.close();
    // @fastify/websocket's own preClose closes every socket, without a code (1005).
    await expect.poll(() => closed?.code).toBe(1005);
  });
});
