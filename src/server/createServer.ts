import websocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import pino from 'pino';
import { privateKeyToAccount } from 'viem/accounts';
import { createChainClients } from '../chain/clients.js';
import { createMarketData } from '../chain/market.js';
import type { CoreContext } from '../core/context.js';
import type { MarketData } from '../core/market.js';
import { createGraphQL } from '../graphql/createGraphQL.js';
import { registerGraphQL } from '../graphql/registerGraphQL.js';
import { registerDocumentation } from '../rest/documentation.js';
import { installErrorHandling } from '../rest/errors.js';
import { createHandlers, type RestContext } from '../rest/handlers/index.js';
import { registerRest } from '../rest/registerRest.js';
import { createDatabase, type Database } from '../store/database.js';
import { createRequestWriter } from '../store/requestWriter.js';
import type { GatewayConfig } from './config.js';
import { checkReadiness } from './readiness.js';
import { createSolverRuntime, type SolverRuntime } from './solverRuntime.js';

export interface GatewayServer {
  /** The Fastify instance (for in-process tests through `app.inject`). */
  readonly app: FastifyInstance;
  readonly core: CoreContext;
  readonly database: Database;
  /** The solver's watchers, senders and lifecycle, unless the solver is disabled. */
  readonly solver: SolverRuntime | null;
  /** Listens on the configured host and port; resolves with the base URL (no trailing slash). */
  start(): Promise<string>;
  /** Closes sockets, subscriptions and the database. Safe to call twice. */
  stop(): Promise<void>;
}

export interface CreateServerOptions {
  /**
   * Wraps the chain reader. Tests use it only to inject faults a real chain cannot produce on demand
   * (for example an unexpected exception); production code never sets it.
   */
  wrapMarket?: (market: MarketData) => MarketData;
}

/**
 * The composition root: one Fastify app on one port serving the REST contract, GraphQL (HTTP and graphql-ws
 * on `/graphql`), the OpenAPI document and docs page, health and readiness. Nothing here is global, so a test
 * can run two gateways in one process.
 */
export async function createServer(config: GatewayConfig, options: CreateServerOptions = {}): Promise<GatewayServer> {
  const logger = pino({ level: config.logLevel, base: { service: 'intent-gateway' } });
  const solver = privateKeyToAccount(config.solverPrivateKey);

  const database = await createDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, schema: config.databaseSchema });
  try {
    await database.migrate();
  } catch (error) {
    await database.close();
    throw error;
  }
  const clients = createChainClients(config.chains);
  const chainMarket = createMarketData({ chains: config.chains, solverAddress: solver.address, clients });
  const market = options.wrapMarket ? options.wrapMarket(chainMarket) : chainMarket;
  const core: CoreContext = {
    config: { chains: config.chains, solverAddress: solver.address, quote: config.quote },
    log: logger,
    now: () => Date.now(),
    db: database.db,
    requestWriter: createRequestWriter(database.db),
    market,
    solver,
  };

  // Per-request access logs only at debug and below: at info they would drown the solver's own log lines.
  const requestLogging = config.logLevel === 'debug' || config.logLevel === 'trace';
  const app = Fastify({
    loggerInstance: logger as FastifyBaseLogger,
    bodyLimit: config.bodyLimit,
    logController: new LogController({ disableRequestLogging: !requestLogging }),
  });
  const solverRuntime = config.solverEnabled ? createSolverRuntime(core, clients, solver) : null;
  if (solverRuntime !== null) core.watchers = solverRuntime.watchers;

  installErrorHandling(app);
  // Request bodies are JSON only: anything else is a 415, not a string handed to validation.
  app.removeContentTypeParser('text/plain');
  await app.register(websocket, { options: { maxPayload: config.bodyLimit } });

  const restContext: RestContext = {
    core,
    readiness: () => checkReadiness(async () => void (await sql`select 1`.execute(database.db)), clients),
  };
  registerRest(app, createHandlers(), restContext);
  registerDocumentation(app);
  const graphql = createGraphQL({ core, graphiql: config.graphiql, maxRequestBodySize: config.bodyLimit });
  const disposeGraphQL = await registerGraphQL(app, graphql);

  let stopped: Promise<void> | null = null;
  return {
    app,
    core,
    database,
    solver: solverRuntime,
    async start() {
      // Finish what a previous run left in flight and follow the chains before taking new quotes.
      await solverRuntime?.start();
      const address = await app.listen({ host: config.host, port: config.port });
      return address.replace('[::1]', '127.0.0.1').replace(/\/$/, '');
    },
    stop() {
      stopped ??= (async () => {
        await solverRuntime?.stop();
        await disposeGraphQL();
        await app.close();
        await database.close();
      })();
      return stopped;
    },
  };
}
