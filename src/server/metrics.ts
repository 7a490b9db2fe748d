import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { formatUnits } from 'viem';
import { DEPOSITS_CURSOR } from '../chain/depositWatcher.js';
import type { ChainClients } from '../chain/clients.js';
import { chainCurrencies, findCurrency } from '../core/chains/requireChain.js';
import type { ChainConfig } from '../core/chains/types.js';
import type { Logger } from '../core/logger.js';
import type { MarketData } from '../core/market.js';
import { GatewayError } from '../core/errors.js';
import type { GatewayMetrics } from '../core/metrics.js';
import { getCursor } from '../store/cursors.repository.js';
import { listReconciliations } from '../store/reconciliations.repository.js';
import type { Tables } from '../store/tables.js';

/** What `/metrics` reads at scrape time. */
export interface MetricSources {
  chains: ChainConfig[];
  market: MarketData;
  clients: ChainClients;
  db: Kysely<Tables>;
  log: Logger;
  /** Subscribers of the status stream (GraphQL subscriptions and `/ws`) in this process. */
  subscriberCount: () => number;
  /**
   * The last block this process's deposit watcher of a chain has read; undefined when none runs here (a gateway
   * that does not lead), and then the stored cursor is read. The stored one lags behind it by up to
   * `CURSOR_WRITE_INTERVAL_MS` of blocks without deposits.
   */
  followedBlock?: (chainId: number) => bigint | undefined;
  /** When set, a scrape must carry `Authorization: Bearer <token>` (`GATEWAY_METRICS_TOKEN`). */
  token?: string | undefined;
}

export interface ServerMetrics extends GatewayMetrics {
  /** This gateway's registry (one per gateway, so two gateways in one process do not share series). */
  readonly registry: Registry;
  /** One HTTP request to a chain's RPC (`createChainClients`' `observeRpc`). */
  observeRpc: (chainId: number, seconds: number, ok: boolean) => void;
  /** Times every HTTP request and serves `GET /metrics`; the scrape reads balances, heads and cursors. */
  register(app: FastifyInstance, sources: MetricSources): void;
}

const latencyBuckets = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const lifecycleBuckets = [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800];

/**
 * The Prometheus side of the gateway: implements the core's `GatewayMetrics` port with prom-client and adds
 * what the server itself sees (HTTP, RPC, stream subscribers, balances, head lag, the event loop). Counters and
 * histograms are updated in place; balances, head lag and subscribers are read when Prometheus scrapes. The
 * families and their labels are listed in docs/metrics.md.
 */
export function createServerMetrics(): ServerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 20 });

  const http = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'HTTP requests by operation (the contract operationId, or the route), method and status code.',
    labelNames: ['operation', 'method', 'status'] as const,
    buckets: latencyBuckets,
    registers: [registry],
  });
  const quotes = new Counter({
    name: 'gateway_quotes_total',
    help: 'Quotes answered, by route (origin and destination chain) and outcome (ok or the errorCode).',
    labelNames: ['origin_chain_id', 'destination_chain_id', 'outcome'] as const,
    registers: [registry],
  });
  const transitions = new Counter({
    name: 'gateway_request_status_transitions_total',
    help: 'Request status changes made by the solver of this instance, by the new status.',
    labelNames: ['to'] as const,
    registers: [registry],
  });
  const refunds = new Counter({
    name: 'gateway_refunds_total',
    help: 'Requests refunded, by failReason.',
    labelNames: ['fail_reason'] as const,
    registers: [registry],
  });
  const fillBroadcast = new Histogram({
    name: 'gateway_deposit_to_fill_broadcast_seconds',
    help: 'Seconds from a deposit first seen on the origin chain to the broadcast of its fill.',
    buckets: lifecycleBuckets,
    registers: [registry],
  });
  const depositToSuccess = new Histogram({
    name: 'gateway_deposit_to_success_seconds',
    help: 'Seconds from a deposit first seen on the origin chain to its request reaching success.',
    buckets: lifecycleBuckets,
    registers: [registry],
  });
  const webhooks = new Counter({
    name: 'gateway_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: delivered, retry (failed, retried later), failed (for good), cancelled.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const settlementRejections = new Counter({
    name: 'gateway_settlement_items_rejected_total',
    help:
      'Deposits settlement set aside because the depository refuses their release, by chain and reason ' +
      '(ALREADY_RELEASED, UNKNOWN_DEPOSIT, REMOVED_BY_REORG, DEPOSIT_MISMATCH, REVERTED).',
    labelNames: ['chain_id', 'reason'] as const,
    registers: [registry],
  });
  const rpc = new Histogram({
    name: 'gateway_rpc_request_duration_seconds',
    help: 'HTTP requests to each chain RPC (one request may carry a batch of calls).',
    labelNames: ['chain_id'] as const,
    buckets: latencyBuckets,
    registers: [registry],
  });
  const reorgedDeposits = new Counter({
    name: 'gateway_deposits_reorged_total',
    help: 'Deposits the solver had already used (filled or refunded) that a reorg past the confirmation depth took off the chain, by chain: each is a loss.',
    labelNames: ['chain_id'] as const,
    registers: [registry],
  });
  const heldStrayDeposits = new Counter({
    name: 'gateway_stray_deposits_held_total',
    help: "Deposits carried by the solver's own transactions that name a gateway contract as depositor and have no known requester: held in the depository for the operator, by chain.",
    labelNames: ['chain_id'] as const,
    registers: [registry],
  });
  const swapBacks = new Counter({
    name: 'gateway_swap_backs_total',
    help: "The rebalancing job's swaps of a surplus back through the pools, by chain, token and outcome (swapped, skipped: the pools would pay below the oracle by more than the maximum slippage, failed).",
    labelNames: ['chain_id', 'symbol', 'outcome'] as const,
    registers: [registry],
  });
  const rpcErrors = new Counter({
    name: 'gateway_rpc_errors_total',
    help: 'RPC HTTP requests that failed (no answer, timeout, or a non-2xx status), by chain.',
    labelNames: ['chain_id'] as const,
    registers: [registry],
  });

  // Children cached by label values: the quote path records without building a label key on every request.
  type HttpChild = Histogram.Internal<'operation' | 'method' | 'status'>;
  const httpChildren = new Map<string, Map<string, Map<number, HttpChild>>>();
  const httpChild = (operation: string, method: string, status: number) => {
    let byMethod = httpChildren.get(operation);
    if (byMethod === undefined) httpChildren.set(operation, (byMethod = new Map<string, Map<number, HttpChild>>()));
    let byStatus = byMethod.get(method);
    if (byStatus === undefined) byMethod.set(method, (byStatus = new Map<number, HttpChild>()));
    let child = byStatus.get(status);
    if (child === undefined) byStatus.set(status, (child = http.labels(operation, method, String(status))));
    return child;
  };
  const rpcChildren = new Map<number, Histogram.Internal<'chain_id'>>();
  /**
   * Quote counters by route and outcome (`origin:destination:outcome`), for the same reason. Chain ids come from
   * the client, so only the first few hundred routes are kept here (prom-client keeps every series anyway).
   */
  const quoteChildren = new Map<string, Counter.Internal>();

  return {
    registry,
    quoteAnswered(originChainId, destinationChainId, outcome) {
      const key = `${originChainId}:${destinationChainId}:${outcome}`;
      let child = quoteChildren.get(key);
      if (child === undefined) {
        child = quotes.labels(String(originChainId), String(destinationChainId), outcome);
        if (quoteChildren.size < 512) quoteChildren.set(key, child);
      }
      child.inc();
    },
    statusChanged(to, failReason) {
      transitions.labels(to).inc();
      if (to === 'refund') refunds.labels(failReason ?? 'UNKNOWN').inc();
    },
    fillBroadcast(seconds) {
      fillBroadcast.observe(seconds);
    },
    depositSucceeded(seconds) {
      depositToSuccess.observe(seconds);
    },
    webhookAttempt(outcome) {
      webhooks.labels(outcome).inc();
    },
    depositReorged(chainId) {
      reorgedDeposits.labels(String(chainId)).inc();
    },
    settlementItemRejected(chainId, reason) {
      settlementRejections.labels(String(chainId), reason).inc();
    },
    strayDepositHeld(chainId) {
      heldStrayDeposits.labels(String(chainId)).inc();
    },
    swapBack(chainId, symbol, outcome) {
      swapBacks.labels(String(chainId), symbol, outcome).inc();
    },
    observeRpc(chainId, seconds, ok) {
      let child = rpcChildren.get(chainId);
      if (child === undefined) rpcChildren.set(chainId, (child = rpc.labels(String(chainId))));
      child.observe(seconds);
      if (!ok) rpcErrors.labels(String(chainId)).inc();
    },
    register(app, sources) {
      registerScrapedGauges(registry, sources);
      app.addHook('onResponse', async (request, reply) => {
        const operation =
          (request.routeOptions.config as { operationId?: string }).operationId ??
          request.routeOptions.url ??
          'unmatched';
        httpChild(operation, request.method, reply.statusCode).observe(reply.elapsedTime / 1000);
      });
      app.get('/metrics', async (request, reply) => {
        if (sources.token !== undefined) checkMetricsToken(sources.token, request.headers.authorization);
        return reply.type(registry.contentType).send(await registry.metrics());
      });
    },
  };
}

/** Gauges read when Prometheus scrapes: each read is bounded by the RPC timeout and a failed one is left out. */
function registerScrapedGauges(registry: Registry, sources: MetricSources): void {
  const { chains, market, clients, db, log } = sources;
  new Gauge({
    name: 'gateway_stream_subscribers',
    help: 'Open status stream subscriptions (GraphQL subscriptions and /ws) in this process.',
    registers: [registry],
    collect() {
      this.set(sources.subscriberCount());
    },
  });
  new Gauge({
    name: 'gateway_solver_balance',
    help: "The solver's balance per chain and currency, in whole units of the currency (e.g. 1250.5 USDC).",
    labelNames: ['chain_id', 'currency'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      await Promise.all(
        chains.flatMap((chain) =>
          chainCurrencies(chain).map(async (currency) => {
            try {
              const balance = await market.solverBalance(chain.id, currency.address);
              this.labels(String(chain.id), currency.symbol).set(Number(formatUnits(balance, currency.decimals)));
            } catch (error) {
              log.debug(
                { err: error, chainId: chain.id, currency: currency.symbol },
                'metrics: solver balance not read',
              );
            }
          }),
        ),
      );
    },
  });
  new Gauge({
    name: 'gateway_ledger_drift',
    help:
      "The solver's balance on chain less the ledger's (and what is incoming), per chain and currency, in whole " +
      'units, at the latest settled reconciliation (0 when the ledger and the chain agree).',
    labelNames: ['chain_id', 'currency'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      try {
        for (const check of await listReconciliations(db)) {
          const chain = chains.find((candidate) => candidate.id === check.chainId);
          const currency = chain === undefined ? undefined : findCurrency(chain, check.currency);
          if (currency === undefined) continue;
          this.labels(String(check.chainId), currency.symbol).set(Number(formatUnits(check.drift, currency.decimals)));
        }
      } catch (error) {
        log.debug({ err: error }, 'metrics: ledger drift not read');
      }
    },
  });
  new Gauge({
    name: 'gateway_chain_head_lag_blocks',
    help: "Blocks between a chain's head and the last block the deposit watchers have read.",
    labelNames: ['chain_id'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      await Promise.all(
        chains.map(async (chain) => {
          try {
            const client = clients.get(chain.id);
            if (client === undefined) return;
            const followed = sources.followedBlock?.(chain.id);
            const [head, read] = await Promise.all([
              client.getBlockNumber({ cacheTime: 0 }),
              followed ?? getCursor(db, chain.id, DEPOSITS_CURSOR).then((cursor) => cursor?.blockNumber),
            ]);
            if (read === undefined) return;
            this.labels(String(chain.id)).set(Number(head > read ? head - read : 0n));
          } catch (error) {
            log.debug({ err: error, chainId: chain.id }, 'metrics: head lag not read');
          }
        }),
      );
    },
  });
}

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * `GATEWAY_METRICS_TOKEN`: the scrape must send `Authorization: Bearer <token>` (Prometheus' `authorization`
 * setting of a scrape job). Compared in constant time over SHA-256 digests. 401 without it, 403 when wrong.
 */
function checkMetricsToken(token: string, authorization: string | undefined): void {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '');
  if (match === null)
    throw new GatewayError('UNAUTHORIZED', '/metrics needs an Authorization: Bearer <GATEWAY_METRICS_TOKEN> header');
  if (!timingSafeEqual(digest(match[1]!), digest(token)))
    throw new GatewayError('FORBIDDEN', 'The metrics token is not valid');
}
