import type { AddressInfo } from 'node:net';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import type { ChainConfig } from '../../src/core/chains/types.js';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createChainClients } from '../../src/chain/clients.js';
import { createMarketData } from '../../src/chain/market.js';
import type { CoreContext } from '../../src/core/context.js';
import type { Logger } from '../../src/core/logger.js';
import { defaultQuoteSettings } from '../../src/core/settings.js';
import { createGraphQL, type GatewayGraphQL } from '../../src/graphql/createGraphQL.js';
import { registerGraphQL, type DisposeGraphQL } from '../../src/graphql/registerGraphQL.js';
import { createSolverSwitch } from '../../src/core/ports/solverHandle.js';

export interface LogEntry {
  level: keyof Logger;
  obj: object;
  msg: string | undefined;
}

/** A core logger that records what it is given. */
export function captureLogger(): { log: Logger; entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at = (level: keyof Logger) => (obj: object, msg?: string) => void entries.push({ level, obj, msg });
  return { log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, entries };
}

/** A stand-in for a dependency these GraphQL-only tests never use: any access fails loudly. */
function absent<T extends object>(name: string): T {
  return new Proxy({} as T, {
    get: () => {
      throw new Error(`the GraphQL harness has no ${name}`);
    },
  });
}

/** A core over hand-made chains, with a recording logger. */
export function makeCore(chains: ChainConfig[]): { core: CoreContext; entries: LogEntry[] } {
  const { log, entries } = captureLogger();
  const solver = privateKeyToAccount(generatePrivateKey());
  const core: CoreContext = {
    config: { chains, solverAddress: solver.address, quote: defaultQuoteSettings },
    log,
    now: () => Date.now(),
    // The real chain reader over the hand-made chains' RPC URLs (nothing answers there: these tests never read chains).
    market: createMarketData({ chains, solverAddress: solver.address, clients: createChainClients(chains) }),
    db: absent<CoreContext['db']>('database'),
    requestWriter: absent<CoreContext['requestWriter']>('request writer'),
    solver,
    solving: createSolverSwitch(),
  };
  return { core, entries };
}

export interface GraphQLApp {
  app: FastifyInstance;
  graphql: GatewayGraphQL;
  url: string;
  wsUrl: string;
  dispose: DisposeGraphQL;
  stop(): Promise<void>;
}

/**
 * A real Fastify app on 127.0.0.1 port 0, set up the way the composition root does it: @fastify/websocket
 * first, then registerGraphQL. `routes` may add other routes before it listens.
 */
export async function startGraphQLApp(core: CoreContext, routes?: (app: FastifyInstance) => void): Promise<GraphQLApp> {
  const app = Fastify();
  try {
    await app.register(websocket);
    routes?.(app);
    const graphql = createGraphQL({ core });
    const dispose = await registerGraphQL(app, graphql, { keepAlive: 0 });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as AddressInfo;
    return {
      app,
      graphql,
      url: `http://127.0.0.1:${port}`,
      wsUrl: `ws://127.0.0.1:${port}/graphql`,
      dispose,
      async stop() {
        await dispose();
        await app.close();
      },
    };
  } catch (error) {
    await app.close();
    throw error;
  }
}

export interface GraphQLResponse {
  data?: any;
  errors?: Array<{ message: string; path?: Array<string | number>; extensions?: Record<string, unknown> }>;
}

/** POSTs an operation to `/graphql`; returns the HTTP status and the parsed body. */
export async function post(
  url: string,
  query: string,
  variables?: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: GraphQLResponse }> {
  const response = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  const text = await response.text();
  expect(response.headers.get('content-type'), text).toMatch(/json/);
  return { status: response.status, body: JSON.parse(text) as GraphQLResponse };
}
