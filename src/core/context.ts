import type { Kysely } from 'kysely';
import type { LocalAccount } from 'viem';
import type { RequestWriter } from '../store/requestWriter.js';
import type { Tables } from '../store/tables.js';
import type { CoreConfig } from './chains/types.js';
import type { RequestEventBus } from './ports/requestEventBus.js';
import type { Logger } from './logger.js';
import type { MarketData } from './market.js';
import type { GatewayMetrics } from './metrics.js';
import type { WebhookSettings } from './ports/webhookSettings.js';
import type { PermitChain } from './ports/permits.js';
import type { SolverHandle } from './ports/solverHandle.js';
import type { ChainStatus } from './chains/chainStatus.js';
import type { DexLiquidity } from './dex/liquidity.js';
import type { ChainTransactions } from './chains/chainTransactions.js';

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
   * The solver running in this instance, if any (deposit watchers, deposit-address watchers, fast fill, gasless
   * batches, the claim payer, the permit depositor). Built once and never replaced; while this instance runs no
   * solver (a standby, a quote-only deployment) `solving.running` is undefined and the operations that need it
   * answer `SERVICE_UNAVAILABLE`.
   */
  solving: SolverHandle;
  /** The outbox follower that streams status changes (GraphQL subscriptions, `/ws`); absent: streams answer `SERVICE_UNAVAILABLE`. */
  events?: RequestEventBus;
  /**
   * Webhook delivery: its settings (URL policy, the secret-sealing key) and a wake-up of this process's
   * dispatcher. Absent: the webhook operations answer `SERVICE_UNAVAILABLE`.
   */
  webhooks?: { settings: WebhookSettings; wake(): void };
  /** Reads permit support and nonces from the chains (`usePermit` quotes, `POST /execute/permits`); absent: refused. */
  permitChain?: PermitChain;
  /** Counters and histograms for `/metrics`; absent: nothing is recorded. */
  metrics?: GatewayMetrics;
  /** What the start-up checks found the solver cannot serve; absent: every chain and token is served. */
  chainStatus?: ChainStatus;
  /** The DEX pools of the chains with a `dex` section, priced from memory; absent: no DEX routes. */
  dex?: DexLiquidity;
  /** Reads of users' own transactions: the receipts of same-chain DEX swaps, which no deposit announces. */
  transactions?: ChainTransactions;
}
