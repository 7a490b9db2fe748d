import websocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import type { DestinationStream } from 'pino';
import { privateKeyToAccount } from 'viem/accounts';
import { createChainClients } from '../chain/clients.js';
import { createMarketData } from '../chain/market.js';
import { createPermitChain } from '../chain/permits.js';
import { verifyPermitSupport } from './permitSupport.js';
import type { CoreContext } from '../core/context.js';
import type { MarketData } from '../core/market.js';
import { createGraphQL } from '../graphql/createGraphQL.js';
import { registerGraphQL } from '../graphql/registerGraphQL.js';
import { registerDocumentation } from '../rest/documentation.js';
import { installErrorHandling } from '../rest/errors.js';
import type { RestContext } from '../rest/context.js';
import { createHandlers } from '../rest/handlers/index.js';
import { registerDeprecations } from '../rest/deprecation.js';
import { registerRateLimit } from '../rest/rateLimit.js';
import { acceptEmptyJsonBodies } from '../rest/jsonBody.js';
import { registerRest } from '../rest/registerRest.js';
import { createRateLimiter } from '../core/apiKeys/rateLimiter.js';
import { createDatabase, type Database } from '../store/database.js';
import { listenWebhookDeliveries, webhookNotifyChannel } from '../store/webhookDeliveries.repository.js';
import {
  createWebhookDispatcher,
  defaultWebhookSettings,
  type WebhookDispatcher,
} from '../core/webhooks/createWebhookDispatcher.js';
import { deriveWebhookEncryptionKey, sealWebhookSecret } from '../core/apiKeys/webhookSecret.js';
import { warnUnsignableWebhooks } from '../core/webhooks/warnUnsignableWebhooks.js';
import { createRequestWriter } from '../store/requestWriter.js';
import { defaultRateLimitConfig, defaultSurfaceLimits, type GatewayConfig } from './config.js';
import { createEventFollower } from './events.js';
import { createSolverSwitch } from '../core/ports/solverHandle.js';
import { registerExplorer } from './explorer.js';
import { httpServerOptions } from './httpLimits.js';
import { checkChainIdentities } from './chainIdentity.js';
import { createChainChecks, type ChainChecks } from './chainChecks.js';
import { createLogger } from './logger.js';
import { createTableMaintenance, PGLITE_HOLD_MESSAGES, type MaintenanceQuiet } from './tableMaintenance.js';
import { createServerMetrics } from './metrics.js';
import { checkReadiness, withChainChecks, withFillPauses, withSolverHistory } from './readiness.js';
import { createSocketGuard } from '../ws/socketGuard.js';
import { createSolverLeadership } from './solverLeadership.js';
import { createSolverRuntime, type SolverRuntime } from './solverRuntime.js';
import { createDexLiquidity } from './dexLiquidity.js';
import { createChainTransactions } from '../chain/chainTransactions.js';
import { registerStatusWebSocket } from '../ws/statusSocket.js';

/**
 * The webhook dispatcher's poll on PGlite, when `GATEWAY_WEBHOOK_POLL_MS` is not set: a fallback only (see where it
 * is used). PostgreSQL keeps 1 s (other gateways enqueue and claim too; a LISTEN connection can drop).
 */
const PGLITE_WEBHOOK_POLL_INTERVAL_MS = 30_000;

export interface GatewayServer {
  /** The Fastify instance (for in-process tests through `app.inject`). */
  readonly app: FastifyInstance;
  readonly core: CoreContext;
  readonly database: Database;
  /**
   * The solver's watchers, senders and lifecycle while this instance runs the solver: null when the solver is
   * disabled, and, with several gateways on one PostgreSQL, while another instance runs it.
   */
  readonly solver: SolverRuntime | null;
  /** Posts webhook deliveries from the outbox. */
  readonly webhooks: WebhookDispatcher;
  /** The start-up checks of every chain (network, contracts, owner, approvals, price feeds), re-run periodically. */
  readonly chainChecks: ChainChecks;
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
  /** Where log lines go instead of stdout (tests read them). */
  logDestination?: DestinationStream;
  /** PGlite only: how often the tables are vacuumed and analyzed as needed, in ms; default `TABLE_MAINTENANCE_INTERVAL_MS`. */
  tableMaintenanceIntervalMs?: number;
  /** PGlite only: the quiet moment a `VACUUM` or `ANALYZE` waits for; default `TABLE_MAINTENANCE_QUIET`. */
  tableMaintenanceQuiet?: MaintenanceQuiet;
  /** How often the solver's approvals and the price feeds are checked again, in ms; default `CHAIN_CHECK_INTERVAL_MS`. */
  chainCheckIntervalMs?: number;
}

/**
 * The composition root: one Fastify app on one port serving the REST contract, GraphQL (HTTP and graphql-ws
 * on `/graphql`), the OpenAPI document and docs page, health and readiness. Nothing here is global, so a test
 * can run two gateways in one process.
 */
export async function createServer(config: GatewayConfig, options: CreateServerOptions = {}): Promise<GatewayServer> {
  const logger = createLogger(config, options.logDestination);
  const solver = privateKeyToAccount(config.solverPrivateKey);

  const database = await createDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    schema: config.databaseSchema,
    ...(config.pgliteSharedBuffers === undefined ? {} : { pgliteSharedBuffers: config.pgliteSharedBuffers }),
    onPGliteCheckpoint: ({ ms, reason, walBytes }) =>
      logger.info(
        { ms: Math.round(ms), reason, walMiB: Math.round(walBytes / 2 ** 20) },
        PGLITE_HOLD_MESSAGES.checkpoint,
      ),
  });
  try {
    await database.migrate();
  } catch (error) {
    await database.close();
    throw error;
  }
  const metrics = createServerMetrics();
  const clients = createChainClients(config.chains, { observeRpc: metrics.observeRpc });
  const chainMarket = createMarketData({ chains: config.chains, solverAddress: solver.address, clients });
  const market = options.wrapMarket ? options.wrapMarket(chainMarket) : chainMarket;
  const dex = createDexLiquidity({ chains: config.chains, clients, log: logger });
  const now = () => Date.now();
  const webhookConfig = config.webhooks;
  const webhookSettings = {
    ...defaultWebhookSettings,
    allowPrivate: config.webhooksAllowPrivate ?? false,
    encryptionKey:
      webhookConfig?.secretKey === undefined
        ? deriveWebhookEncryptionKey(config.solverPrivateKey)
        : Buffer.from(webhookConfig.secretKey.slice(2), 'hex'),
    ...(webhookConfig === undefined
      ? {}
      : {
          timeoutMs: webhookConfig.timeoutMs,
          retryBaseMs: webhookConfig.retryBaseMs,
          retryMaxMs: webhookConfig.retryMaxMs,
          retentionMs: webhookConfig.retentionDays * 86_400_000,
          ...(webhookConfig.perKeyConcurrency === undefined
            ? {}
            : { perKeyConcurrency: webhookConfig.perKeyConcurrency }),
        }),
    // A notification wakes the dispatcher at each commit that enqueues a delivery, and it wakes at the due times it
    // knows (its retries, the earliest pending delivery); the poll covers the rest. On PGlite every delivery is
    // enqueued by this process and its notifications always arrive, so the poll is only a slow fallback.
    pollIntervalMs:
      webhookConfig?.pollIntervalMs ?? (config.databaseUrl === undefined ? PGLITE_WEBHOOK_POLL_INTERVAL_MS : 1_000),
  };
  const databaseUrl = config.databaseUrl;
  const pgliteListen = database.listen;
  const webhooks = createWebhookDispatcher({
    db: database.db,
    log: logger,
    now,
    settings: webhookSettings,
    metrics,
    ...(databaseUrl === undefined
      ? pgliteListen === undefined
        ? {}
        : {
            subscribe: async (wake: () => void) => {
              const stop = await pgliteListen(webhookNotifyChannel, wake);
              return async () => stop();
            },
          }
      : {
          subscribe: (wake: () => void) =>
            listenWebhookDeliveries({
              databaseUrl,
              schema: config.databaseSchema,
              onDelivery: wake,
              onError: (error) => logger.warn({ err: error }, 'webhook: LISTEN connection failed'),
            }),
        }),
  });
  const events = createEventFollower({ database, databaseUrl: config.databaseUrl, log: logger });
  const tableMaintenance = createTableMaintenance({
    database,
    log: logger,
    ...(options.tableMaintenanceIntervalMs === undefined ? {} : { intervalMs: options.tableMaintenanceIntervalMs }),
    ...(options.tableMaintenanceQuiet === undefined ? {} : { quiet: options.tableMaintenanceQuiet }),
  });
  // The context is built once and never mutated: leadership changes only what `solving` points to.
  const solving = createSolverSwitch();
  let solverRuntime: SolverRuntime | null = null;
  const chainChecks = createChainChecks({
    chains: config.chains,
    clients,
    solver: solver.address,
    log: logger,
    ...(options.chainCheckIntervalMs === undefined ? {} : { intervalMs: options.chainCheckIntervalMs }),
    // A chain found on another network only now (it did not answer at start): its deposits stop being followed.
    onChainBlocked: (chainId) => {
      void solverRuntime?.watchers.get(chainId)?.stop();
      void solverRuntime?.addressWatchers.get(chainId)?.stop();
    },
  });
  const core: CoreContext = {
    config: {
      chains: config.chains,
      solverAddress: solver.address,
      quote: config.quote,
      crashAt: config.crashAt,
      appFeeClaims: config.appFeeClaims,
      depositAddressReindexBlocks: config.depositAddressReindexBlocks,
      depositAddressSweep: config.depositAddressSweep,
      inventory: config.inventory,
      gasless: config.gasless,
      permits: config.permits,
      executionReverts: config.executionReverts,
      unknownDepositGraceSeconds: config.unknownDepositGraceSeconds,
    },
    chainStatus: chainChecks,
    ...(dex === undefined ? {} : { dex }),
    transactions: createChainTransactions(clients),
    log: logger,
    now,
    db: database.db,
    requestWriter: createRequestWriter(database.db),
    market,
    solver,
    metrics,
    permitChain: createPermitChain(config.chains, clients),
    webhooks: { settings: webhookSettings, wake: webhooks.wake },
    events: events.bus,
    solving,
  };

  // Per-request access logs only at debug and below: at info they would drown the solver's own log lines.
  const requestLogging = config.logLevel === 'debug' || config.logLevel === 'trace';
  const fastifyLogger: FastifyBaseLogger = logger; // (typed so, Fastify infers its own logger type for `app`)
  const app = Fastify({
    loggerInstance: fastifyLogger,
    bodyLimit: config.bodyLimit,
    logController: new LogController({ disableRequestLogging: !requestLogging }),
    // Timeouts against slow clients; behind reverse proxies the client address (the rate limit bucket without a
    // key) is taken from X-Forwarded-For, believing only the configured hops.
    ...httpServerOptions(config),
  });
  // The solver runs in one instance at a time: with PostgreSQL, whichever holds the solver lock; with PGlite (one
  // process owns the database) always this one. A standby answers fast fill and indexing with 503.
  const startSolving = async () => {
    const runtime = createSolverRuntime(core, clients, solver, {
      settlement: config.settlement,
      retention: config.requestRetention,
      reconciliation: config.reconciliation,
      swapBack: config.swapBack,
      listen: database.listen,
      served: (chainId) => chainChecks.served(chainId),
      onSharedKey: (chainId, message) => chainChecks.block(chainId, message),
    });
    solverRuntime = runtime;
    // A quote's balance and allowance reads are shared within one head while the chain's feed is live.
    chainMarket.followHeads(runtime.heads);
    dex?.followHeads(runtime.heads);
    solving.attach({
      watchers: runtime.watchers,
      depositAddressWatchers: runtime.addressWatchers,
      fastFiller: runtime.solver,
      selfRefunds: runtime.solver,
      claimPayer: runtime.claimPayer,
      permitDepositor: runtime.permitDepositor,
      gasless: runtime.gasless,
    });
    await runtime.start();
  };
  const stopSolving = async () => {
    const runtime = solverRuntime;
    solverRuntime = null;
    solving.detach();
    chainMarket.followHeads(undefined);
    await runtime?.stop();
  };
  const leadership =
    config.solverEnabled && config.databaseUrl !== undefined
      ? createSolverLeadership({
          databaseUrl: config.databaseUrl,
          schema: config.databaseSchema,
          solverAddress: solver.address,
          log: logger,
          onLead: startSolving,
          onStepDown: stopSolving,
        })
      : null;

  installErrorHandling(app);
  // Request bodies are JSON only: anything else is a 415, not a string handed to validation.
  app.removeContentTypeParser('text/plain');
  acceptEmptyJsonBodies(app);
  await app.register(websocket, { options: { maxPayload: config.bodyLimit } });

  const restContext: Omit<RestContext, 'caller'> = {
    core,
    readiness: async () =>
      withChainChecks(
        withSolverHistory(
          withFillPauses(
            await checkReadiness(async () => void (await sql`select 1`.execute(database.db)), clients),
            solverRuntime?.solver.fillPauses() ?? [],
          ),
          solverRuntime?.history() ?? new Map(),
        ),
        chainChecks.readiness(),
      ),
    admin: {
      token: config.adminToken,
      allowPrivateWebhooks: config.webhooksAllowPrivate ?? false,
      sealWebhookSecret: (apiKeyId, key) => sealWebhookSecret(webhookSettings.encryptionKey, apiKeyId, key),
    },
  };
  const rateLimiter = createRateLimiter(core, config.rateLimit ?? defaultRateLimitConfig);
  registerRateLimit(app, core, rateLimiter);
  registerDeprecations(app);
  registerRest(app, createHandlers(), (request) => ({ ...restContext, caller: request.caller }));
  registerDocumentation(app);
  registerExplorer(app);
  const graphql = createGraphQL({
    core,
    graphiql: config.graphiql,
    maxRequestBodySize: config.bodyLimit,
    adminToken: config.adminToken,
  });
  const socketGuard = createSocketGuard(core, rateLimiter, config.surfaces ?? defaultSurfaceLimits);
  const disposeGraphQL = await registerGraphQL(app, graphql, { guard: socketGuard });
  // One outbox follower per process feeds the GraphQL subscriptions and the reference's `/ws` stream.
  const disposeStatusWebSocket = await registerStatusWebSocket(app, core, { guard: socketGuard });
  metrics.register(app, {
    chains: config.chains,
    market,
    clients,
    db: database.db,
    log: logger,
    subscriberCount: () => events.bus.subscriberCount,
    followedBlock: (chainId) => solverRuntime?.watchers.get(chainId)?.followedBlock(),
    token: config.metricsToken,
  });

  let stopped: Promise<void> | null = null;
  return {
    app,
    core,
    database,
    get solver() {
      return solverRuntime;
    },
    webhooks,
    chainChecks,
    async start() {
      // A saved database on chains it did not follow: reset (devnet) or refuse, before anything reads its state.
      await checkChainIdentities({
        db: database.db,
        chains: config.chains,
        clients,
        devnet: config.devnet ?? false,
        log: logger,
        now: core.now,
      });
      await verifyPermitSupport(config.chains, core.permitChain!, logger);
      // What the solver needs of each chain (its network, contracts, ownership, approvals, fresh feeds) before it
      // follows any: a chain that fails is left out of this run, and the rest serve.
      await chainChecks.start();
      // The pools swaps may route through, in memory before the first quote.
      await dex?.start();
      // Finish what a previous run left in flight and follow the chains before taking new quotes.
      await events.start();
      if (leadership !== null) await leadership.start();
      else if (config.solverEnabled) await startSolving();
      await warnUnsignableWebhooks(core, logger);
      await webhooks.start();
      void tableMaintenance?.start();
      const address = await app.listen({ host: config.host, port: config.port });
      return address.replace('[::1]', '127.0.0.1').replace(/\/$/, '');
    },
    stop() {
      stopped ??= (async () => {
        if (leadership !== null) await leadership.stop();
        else await stopSolving();
        await chainChecks.stop();
        await dex?.stop();
        // Attempts in flight finish and are recorded; the rest stay due in the database for the next start.
        await webhooks.stop();
        await disposeGraphQL();
        await disposeStatusWebSocket();
        await app.close();
        await rateLimiter.close();
        await events.stop();
        await tableMaintenance?.stop();
        await database.close();
      })();
      return stopped;
    },
  };
}
