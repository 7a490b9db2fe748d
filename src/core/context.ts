import type { Kysely } from 'kysely';
import type { LocalAccount } from 'viem';
import type { RequestWriter } from '../store/requestWriter.js';
import type { Tables } from '../store/tables.js';
import type { CoreConfig } from './chains/types.js';
import type { RequestEventBus } from './events/requestEventBus.js';
import type { Logger } from './logger.js';
import type { MarketData } from './market.js';
import type { GatewayMetrics } from './metrics.js';
import type { WebhookSettings } from './webhooks/createWebhookDispatcher.js';
import type { DepositWatcher, FastFillLifecycle, GaslessLifecycle } from './solver/ports.js';
import type { PermitChain, PermitDepositor } from './permits/ports.js';

/**
 * What every core operation receives: configuration and the services it may use.
 * Built once by the composition root (`src/server`); never a module-level singleton.
 */
export interface CoreContext {
  config: CoreConfig;
  log: Logger;
  /** Current time in Unix milliseconds (injectable for tests). */
  now: () => number;
  /** The gateway's database (PGlite or PostgreSQL). */
  db: Kysely<Tables>;
  /** Stores new requests with group commit (the quote path). */
  requestWriter: RequestWriter;
  /** Prices, gas, balances and estimates read from the chains. */
  market: MarketData;
  /** The solver's key: signs order ids (`includeProtocolData`) and request attestations. */
  solver: Pick<LocalAccount, 'address' | 'signMessage'>;
  /**
   * The deposit watcher of each origin chain it follows, by chain id (`POST /transactions/index` and
   * `/transactions/single` reach them). Absent when the gateway runs without the solver's intake (for
   * example a quote-only deployment): those operations then answer `SERVICE_UNAVAILABLE`.
   */
  watchers?: ReadonlyMap<number, DepositWatcher>;
  /** Rescans a chain for one deposit address's transfers (`POST /transactions/deposit-address/reindex`), by chain id. */
  depositAddressWatchers?: ReadonlyMap<
    number,
    { rescan(address: string, blocks: bigint): Promise<number>; rescanning(): boolean }
  >;
  /** The running solver, for fast fills; absent when the gateway runs without the solver. */
  fastFiller?: FastFillLifecycle;
  /** The running solver's sender of gasless batches (`POST /execute`); absent when the gateway runs without it. */
  gasless?: GaslessLifecycle;
  /** The outbox follower that streams status changes (GraphQL subscriptions, `/ws`); absent: streams answer `SERVICE_UNAVAILABLE`. */
  events?: RequestEventBus;
  /**
   * Webhook delivery: its settings (URL policy, the secret-sealing key) and a wake-up of this process's
   * dispatcher. Absent: the webhook operations answer `SERVICE_UNAVAILABLE`.
   */
  webhooks?: { settings: WebhookSettings; wake(): void };
  /** The solver's payer of app-fee claims, woken when a claim is authorized; absent: it finds it at its next pass. */
  claimPayer?: { wake(): void };
  /** Reads permit support and nonces from the chains (`usePermit` quotes, `POST /execute/permits`); absent: refused. */
  permitChain?: PermitChain;
  /** Submits accepted permit deposits; absent when the gateway runs without the solver (`SERVICE_UNAVAILABLE`). */
  permitDepositor?: PermitDepositor;
  /** Counters and histograms for `/metrics`; absent: nothing is recorded. */
  metrics?: GatewayMetrics;
}
