/**
 * Configuration is read here and only here: the environment (this module), the optional JSON config file
 * (`configFile.ts`, merged with the environment's settings), or the devnet descriptor. Every problem is collected
 * and reported at once; the rest of the code receives a parsed `GatewayConfig` and never reads `process.env`.
 */
import { defaultGaslessSettings } from '../core/gasless/settings.js';
import type {
  AppFeeClaimSettings,
  ClaimChainSettings,
  ExecutionRevertSettings,
  GaslessSettings,
  InventorySettings,
  PermitSettings,
  SweepSettings,
} from '../core/chains/settings.js';
import { defaultPermitSettings } from '../core/permits/settings.js';
import { defaultExecutionRevertSettings } from '../core/limits/executionRevertSettings.js';
import { isHex, parseUnits, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { crashPoints, isCrashPoint, type CrashPoint } from '../core/faults.js';
import { DEFAULT_UNKNOWN_DEPOSIT_GRACE_SECONDS, type ChainConfig, type QuoteSettings } from '../core/chains/types.js';
import { defaultQuoteSettings } from '../core/settings.js';
import { defaultSettlementSettings, type SettlementSettings } from '../core/settlement/settler.js';
import { defaultRequestRetentionSettings, type RequestRetentionSettings } from '../core/requests/retention.js';
import { defaultInventorySettings } from '../core/inventory/settings.js';
import { defaultSwapBackSettings, type SwapBackSettings } from '../core/inventory/swapBack.js';
import { defaultSweepSettings } from '../core/depositAddresses/settings.js';
import { defaultReconciliationSettings, type ReconciliationSettings } from '../core/reconciliation/reconciler.js';
import { defaultAppFeeClaimSettings } from '../core/appFees/claimSettings.js';

export interface GatewayConfig {
  host: string;
  port: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** `json` lines or readable `pretty` lines (`GATEWAY_LOG_FORMAT`; default: pretty when stdout is a terminal). */
  logFormat?: 'json' | 'pretty';
  /** PostgreSQL when set; otherwise PGlite in `dataDir` (in memory when that is unset too). */
  databaseUrl: string | undefined;
  dataDir: string | undefined;
  /**
   * PGlite's buffer pool (`GATEWAY_PGLITE_SHARED_BUFFERS`, e.g. `256MB`); unset: 16 MB (the devnet), and 128 MB under
   * a config file (`parseConfigFile`).
   */
  pgliteSharedBuffers?: string;
  /** PostgreSQL schema for the gateway's tables (several gateways can share one database); default `public`. */
  databaseSchema: string | undefined;
  solverPrivateKey: Hex;
  chains: ChainConfig[];
  /** Largest accepted request body in bytes. */
  bodyLimit: number;
  /** Serve GraphiQL at /graphql for browsers. */
  graphiql: boolean;
  /** Pricing policy of quotes (config file `quote`; defaults otherwise). */
  quote: QuoteSettings;
  /** Run the solver (deposit watchers, fills, refunds); `GATEWAY_SOLVER=off` serves the API only. */
  solverEnabled: boolean;
  /** Test only: `GATEWAY_CRASH_AT` kills the process with SIGKILL at this step (`src/core/faults.ts`). */
  crashAt?: CrashPoint | undefined;
  /**
   * Bearer token of the admin operations (`/admin/api-keys`); unset disables them (they answer 404).
   * `GATEWAY_ADMIN_TOKEN`, at least 16 characters.
   */
  adminToken?: string | undefined;
  /**
   * Bearer token `GET /metrics` requires (`GATEWAY_METRICS_TOKEN`, at least 16 characters); unset: `/metrics` is
   * open (keep it off the public interface then).
   */
  metricsToken?: string | undefined;
  /**
   * Webhook URLs may point at private, loopback or link-local addresses (`GATEWAY_WEBHOOKS_ALLOW_PRIVATE=true`).
   * Default false with a config file, true on the devnet (its receivers are local).
   */
  webhooksAllowPrivate?: boolean;
  /** Webhook delivery (`src/core/webhooks`); defaults when absent. */
  webhooks?: WebhookDeliveryConfig;
  /** Request rate limits per API key and per client address (`src/rest/rateLimit.ts`); defaults when absent. */
  rateLimit?: RateLimitConfig;
  /** Gasless execution limits (`GATEWAY_GASLESS_MAX_GAS`, `_KEY_PER_MINUTE`, `_USER_PER_MINUTE`); defaults when absent. */
  gasless?: GaslessSettings;
  /** Permit deposit limits (`GATEWAY_PERMIT_MIN_VALIDITY_SECONDS`, `_REVERT_COOLDOWN_SECONDS`); defaults when absent. */
  permits?: PermitSettings;
  /** The bar on requesters whose calls or gasless batches revert (`GATEWAY_EXECUTION_REVERT_COOLDOWN_SECONDS`). */
  executionReverts?: ExecutionRevertSettings;
  /**
   * Which `X-Forwarded-For` hops to believe for the client address (`GATEWAY_TRUST_PROXY`): false (none, the
   * socket's peer is the client), a number of proxies in front of the gateway, or their addresses / CIDRs.
   */
  trustProxy?: TrustProxy;
  /** Timeouts and caps of the public surfaces (`surfaceLimitsFromEnvironment`); defaults when absent. */
  surfaces?: SurfaceLimitsConfig;
  /**
   * Release of filled deposits to the solver: `GATEWAY_SETTLEMENT_INTERVAL_MS` (default 30000; 5000 on the
   * devnet) and `GATEWAY_SETTLEMENT_MAX_BATCH` (deposits per transaction, default 50).
   */
  settlement?: SettlementSettings;
  /**
   * The ledger's reconciliation with the chains: `GATEWAY_RECONCILIATION_INTERVAL_MS` (default 300000; 10000 on
   * the devnet).
   */
  reconciliation?: ReconciliationSettings;
  /**
   * Removal of never-paid requests: `GATEWAY_REQUEST_RETENTION_HOURS` after the refund window (default 168, 7
   * days; 1 on the devnet), checked every `GATEWAY_REQUEST_RETENTION_INTERVAL_MS` (default 600000).
   */
  requestRetention?: RequestRetentionSettings;
  /**
   * App-fee claims: the minimum claim and the claim fee, in USD, each a default and per-chain overrides
   * (`GATEWAY_APP_FEE_CLAIM_MINIMUM_USD`, `GATEWAY_APP_FEE_CLAIM_FEE_USD`: `"1"`, `"1,8453=0.5"`).
   */
  appFeeClaims?: AppFeeClaimSettings;
  /**
   * Blocks back from the head that `POST /transactions/deposit-address/reindex` rescans for transfers the watcher
   * missed (`GATEWAY_DEPOSIT_ADDRESS_REINDEX_BLOCKS`, default 1000): each block is one block read (native
   * transfers), the logs one filtered `eth_getLogs` per 1000 blocks.
   */
  depositAddressReindexBlocks?: number;
  /**
   * When a transfer to a deposit address is worth sweeping: its sweep's cost times (1 + margin)
   * (`GATEWAY_DEPOSIT_ADDRESS_SWEEP_MARGIN_BPS`, default 10000: worth twice its sweep), and at least a USD floor
   * (`GATEWAY_DEPOSIT_ADDRESS_SWEEP_MINIMUM_USD`, default 0; per chain as `"0.5,8453=0.1"`).
   */
  depositAddressSweep?: SweepSettings;
  /**
   * Rebalancing targets: each chain's share of a currency's inventory in bps (`GATEWAY_INVENTORY_TARGET_BPS`,
   * `"1=5000,8453=5000"`; default equal shares) and the share of its target below which a chain is short
   * (`GATEWAY_INVENTORY_THRESHOLD_BPS`, default 5000).
   */
  inventory?: InventorySettings;
  /**
   * The rebalancing job's swap back of surpluses through the pools (`src/core/inventory/swapBack.ts`): targets
   * (`GATEWAY_SWAP_BACK_TARGETS`, `"mnr=100000,8453:mnr=50000"`: currency id, optionally for one chain, and the
   * balance in whole units above which it is sold; none by default, so nothing is swapped), the most the swap may
   * pay below the oracle (`GATEWAY_SWAP_BACK_MAX_SLIPPAGE_BPS`, default 100) and how often it looks
   * (`GATEWAY_SWAP_BACK_INTERVAL_MS`, default 600000).
   */
  swapBack?: SwapBackSettings;
  /**
   * Seconds a deposit for a request this database does not know waits, from its block, before it is refunded
   * (`GATEWAY_UNKNOWN_DEPOSIT_GRACE_SECONDS`, default 120; 0 on the devnet, where no other gateway can hold the key).
   * Another gateway's request, should its database be another one with the same key, is filled within it.
   */
  unknownDepositGraceSeconds?: number;
  /**
   * The chains are the embedded devnet's (`configFromEnvironment`): a chain that is not the one the database
   * followed is reset rather than refused (`chainIdentity.ts`).
   */
  devnet?: boolean;
}

export type TrustProxy = false | number | string[];

/** Timeouts and caps that keep one client from holding the gateway's connections, memory or storage. */
export interface SurfaceLimitsConfig {
  /** Whole request headers must arrive within this, ms (`GATEWAY_HTTP_HEADERS_TIMEOUT_MS`, default 15000). */
  httpHeadersTimeoutMs: number;
  /** A whole request (headers and body) must arrive within this, ms (`GATEWAY_HTTP_REQUEST_TIMEOUT_MS`, default 30000). */
  httpRequestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this, ms (`GATEWAY_HTTP_KEEP_ALIVE_TIMEOUT_MS`, default 10000). */
  httpKeepAliveTimeoutMs: number;
  /** Websocket connections (graphql-ws and `/ws` together) per client address (`GATEWAY_WS_CONNECTIONS_PER_CLIENT`, default 50). */
  wsConnectionsPerClient: number;
  /** Subscriptions one websocket may hold (`GATEWAY_WS_MAX_SUBSCRIPTIONS`, default 100). */
  wsMaxSubscriptions: number;
  /** A websocket whose unsent data exceeds this many bytes is dropped (`GATEWAY_WS_MAX_BUFFERED_BYTES`, default 4 MiB). */
  wsMaxBufferedBytes: number;
}

export const defaultSurfaceLimits: SurfaceLimitsConfig = {
  httpHeadersTimeoutMs: 15_000,
  httpRequestTimeoutMs: 30_000,
  httpKeepAliveTimeoutMs: 10_000,
  wsConnectionsPerClient: 50,
  wsMaxSubscriptions: 100,
  wsMaxBufferedBytes: 4 * 1024 * 1024,
};

/** Rate limits, counted in the database so every instance sharing it enforces the same totals. */
export interface RateLimitConfig {
  /** `GATEWAY_RATE_LIMIT=off` disables counting altogether (an unknown `x-api-key` is still refused). */
  enabled: boolean;
  /** Length of the fixed counting window, seconds (`GATEWAY_RATE_LIMIT_WINDOW_SECONDS`, default 60). */
  windowSeconds: number;
  /** Requests per minute per client address without a key (`GATEWAY_RATE_LIMIT_ANONYMOUS_PER_MINUTE`). */
  anonymousPerMinute: number;
  /** Requests per minute of a key whose `limits.requestsPerMinute` is unset (`GATEWAY_RATE_LIMIT_KEY_PER_MINUTE`). */
  keyPerMinute: number;
}

/**
 * Defaults high enough that one busy client (the quote benchmark, the test suites) is never limited: they are
 * a ceiling against floods, not a quota. A public deployment lowers them (the reference: 200/min per key).
 */
export const defaultRateLimitConfig: RateLimitConfig = {
  enabled: true,
  windowSeconds: 60,
  anonymousPerMinute: 60_000,
  keyPerMinute: 600_000,
};

/** Webhook delivery settings (the URL policy is `webhooksAllowPrivate`). */
export interface WebhookDeliveryConfig {
  /**
   * 32-byte hex key that seals the keys' webhook signing secrets (`GATEWAY_WEBHOOK_SECRET_KEY`); unset: derived
   * from the solver key (see `src/core/apiKeys/webhookSecret.ts`).
   */
  secretKey: Hex | undefined;
  /** Timeout of one attempt, ms (`GATEWAY_WEBHOOK_TIMEOUT_MS`, default 5000). */
  timeoutMs: number;
  /** First retry delay, doubled per retry, ms (`GATEWAY_WEBHOOK_RETRY_BASE_MS`, default 1000). */
  retryBaseMs: number;
  /** Longest retry delay, ms (`GATEWAY_WEBHOOK_RETRY_MAX_MS`, default 600000). */
  retryMaxMs: number;
  /**
   * Look for due deliveries at least this often, ms (`GATEWAY_WEBHOOK_POLL_MS`, default 1000, 30000 on PGlite); a
   * notification wakes the dispatcher at each commit that enqueues one (LISTEN on PostgreSQL, the worker's on
   * PGlite), and it wakes at the due times it knows.
   */
  pollIntervalMs: number | undefined;
  /** Days a finished delivery and its log are kept (`GATEWAY_WEBHOOK_RETENTION_DAYS`, default 30). */
  retentionDays: number;
  /** Attempts in flight at once per API key (`GATEWAY_WEBHOOK_CONCURRENCY_PER_KEY`, default 4). */
  perKeyConcurrency?: number;
}

function webhooksFromEnvironment(env: Env, problems: string[]): WebhookDeliveryConfig {
  const integer = (name: string, fallback: number, min: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min)
      problems.push(`${name} must be an integer of at least ${min}, got '${raw}'`);
    return Number.isInteger(value) && value >= min ? value : fallback;
  };
  const secretKey = env.GATEWAY_WEBHOOK_SECRET_KEY || undefined;
  if (secretKey !== undefined && !/^0x[0-9a-fA-F]{64}$/.test(secretKey))
    problems.push('GATEWAY_WEBHOOK_SECRET_KEY must be 0x followed by 64 hex digits');
  const poll = env.GATEWAY_WEBHOOK_POLL_MS ? integer('GATEWAY_WEBHOOK_POLL_MS', 1_000, 5) : undefined;
  return {
    secretKey: secretKey as Hex | undefined,
    timeoutMs: integer('GATEWAY_WEBHOOK_TIMEOUT_MS', 5_000, 100),
    retryBaseMs: integer('GATEWAY_WEBHOOK_RETRY_BASE_MS', 1_000, 1),
    retryMaxMs: integer('GATEWAY_WEBHOOK_RETRY_MAX_MS', 600_000, 1),
    pollIntervalMs: poll,
    retentionDays: integer('GATEWAY_WEBHOOK_RETENTION_DAYS', 30, 1),
    perKeyConcurrency: integer('GATEWAY_WEBHOOK_CONCURRENCY_PER_KEY', 4, 1),
  };
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

export type Env = Record<string, string | undefined>;

/**
 * With a config file (real networks) the database is where the solver remembers what it sent: one that vanishes at
 * every restart forgets deposits made while the gateway was down and what it filled but did not settle. So it must
 * be named (`DATABASE_URL` or `GATEWAY_DATA_DIR`), or kept in memory on purpose (`GATEWAY_IN_MEMORY_DATABASE=true`).
 * Returns the problems found (none when fine).
 */
export function durableDatabaseProblems(env: Env): string[] {
  const problems: string[] = [];
  const inMemory = parseBoolean(env, 'GATEWAY_IN_MEMORY_DATABASE', false, problems);
  if (problems.length > 0) return problems;
  if (!env.DATABASE_URL && !env.GATEWAY_DATA_DIR && !inMemory)
    problems.push(
      'no database is configured: set DATABASE_URL (PostgreSQL) or GATEWAY_DATA_DIR (PGlite on disk); ' +
        'a database in memory loses every request at a restart, and with it what the solver filled but has not ' +
        'settled yet (set GATEWAY_IN_MEMORY_DATABASE=true to run so on purpose, for a trial)',
    );
  if (inMemory && (env.DATABASE_URL || env.GATEWAY_DATA_DIR))
    problems.push('GATEWAY_IN_MEMORY_DATABASE=true cannot be set with DATABASE_URL or GATEWAY_DATA_DIR');
  return problems;
}

/** The embedded devnet's settings (`npm start` without a config file), from `DEVNET_BASE_PORT` and `DEVNET_BLOCK_TIME`. */
export interface DevnetSettings {
  /** The first anvil port; the chains take it and the next ones. 0: free ports. */
  basePort: number;
  /** Seconds between blocks; undefined: a block on every transaction. */
  blockTime: number | undefined;
}

/** Reads and checks the devnet's variables; throws a `ConfigError` naming each bad one. */
export function devnetFromEnvironment(env: Env): DevnetSettings {
  const problems: string[] = [];
  const basePort = env.DEVNET_BASE_PORT === undefined ? 8545 : Number(env.DEVNET_BASE_PORT);
  if (!Number.isInteger(basePort) || basePort < 0 || basePort > 65_000)
    problems.push(`DEVNET_BASE_PORT must be an integer 0..65000 (0 = free ports), got '${env.DEVNET_BASE_PORT}'`);
  const blockTime = env.DEVNET_BLOCK_TIME === undefined ? 1 : Number(env.DEVNET_BLOCK_TIME);
  if (env.DEVNET_BLOCK_TIME?.trim() === '' || !Number.isFinite(blockTime) || blockTime < 0)
    problems.push(
      `DEVNET_BLOCK_TIME must be a number of seconds, 0 or more (0 = a block on every transaction), got '${env.DEVNET_BLOCK_TIME}'`,
    );
  if (problems.length > 0) throw new ConfigError(problems);
  return { basePort, blockTime: blockTime > 0 ? blockTime : undefined };
}

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** Settings that come only from the environment, shared by the devnet and config-file modes. */
export function fromEnvironment(env: Env, problems: string[]) {
  const port = env.PORT === undefined ? 4000 : Number(env.PORT);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    problems.push(`PORT must be an integer 0..65535, got '${env.PORT}'`);
  const logLevel = (env.GATEWAY_LOG_LEVEL ?? 'info') as GatewayConfig['logLevel'];
  if (!logLevels.includes(logLevel)) problems.push(`GATEWAY_LOG_LEVEL must be one of ${logLevels.join(', ')}`);
  const logFormat = env.GATEWAY_LOG_FORMAT ?? (process.stdout.isTTY ? 'pretty' : 'json');
  if (logFormat !== 'json' && logFormat !== 'pretty') problems.push('GATEWAY_LOG_FORMAT must be json or pretty');
  const databaseUrl = env.DATABASE_URL || undefined;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) problems.push('DATABASE_URL must be a postgres:// URL');
  if (env.GATEWAY_DATABASE_SCHEMA && !/^[a-z_][a-z0-9_]{0,62}$/.test(env.GATEWAY_DATABASE_SCHEMA)) {
    problems.push('GATEWAY_DATABASE_SCHEMA must be a lower-case SQL identifier');
  }
  const pgliteSharedBuffers = env.GATEWAY_PGLITE_SHARED_BUFFERS || undefined;
  if (pgliteSharedBuffers !== undefined) {
    const problem = pgliteBufferProblem(pgliteSharedBuffers, databaseUrl !== undefined);
    if (problem !== null) problems.push(problem);
  }
  const bodyLimit = env.GATEWAY_BODY_LIMIT === undefined ? 1_048_576 : Number(env.GATEWAY_BODY_LIMIT);
  if (!Number.isInteger(bodyLimit) || bodyLimit < 1024)
    problems.push('GATEWAY_BODY_LIMIT must be an integer of at least 1024 bytes');
  const crashAt = env.GATEWAY_CRASH_AT || undefined;
  if (crashAt !== undefined && !isCrashPoint(crashAt))
    problems.push(`GATEWAY_CRASH_AT must be one of ${crashPoints.join(', ')}`);
  const adminToken = env.GATEWAY_ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && adminToken.length < 16)
    problems.push('GATEWAY_ADMIN_TOKEN must be at least 16 characters');
  const metricsToken = env.GATEWAY_METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && (metricsToken.length < 16 || /\s/.test(metricsToken)))
    problems.push('GATEWAY_METRICS_TOKEN must be at least 16 characters, without spaces');
  return {
    host: env.HOST ?? '127.0.0.1',
    port,
    logLevel,
    logFormat: logFormat as 'json' | 'pretty',
    databaseUrl,
    dataDir: env.GATEWAY_DATA_DIR || undefined,
    ...(pgliteSharedBuffers === undefined ? {} : { pgliteSharedBuffers }),
    databaseSchema: env.GATEWAY_DATABASE_SCHEMA || undefined,
    bodyLimit,
    graphiql: env.GATEWAY_GRAPHIQL !== 'false',
    solverEnabled: env.GATEWAY_SOLVER !== 'off',
    crashAt: crashAt as CrashPoint | undefined,
    adminToken,
    metricsToken,
    webhooksAllowPrivate: parseBoolean(env, 'GATEWAY_WEBHOOKS_ALLOW_PRIVATE', false, problems),
    webhooks: webhooksFromEnvironment(env, problems),
    rateLimit: rateLimitFromEnvironment(env, problems),
    gasless: gaslessFromEnvironment(env, problems),
    permits: permitsFromEnvironment(env, problems),
    executionReverts: executionRevertsFromEnvironment(env, problems),
    trustProxy: parseTrustProxy(env.GATEWAY_TRUST_PROXY, problems),
    surfaces: surfaceLimitsFromEnvironment(env, problems),
    settlement: settlementFromEnvironment(env, problems),
    reconciliation: reconciliationFromEnvironment(env, problems),
    requestRetention: requestRetentionFromEnvironment(env, problems),
    appFeeClaims: appFeeClaimsFromEnvironment(env, problems),
    depositAddressReindexBlocks: reindexBlocksFromEnvironment(env, problems),
    depositAddressSweep: sweepFromEnvironment(env, problems),
    inventory: inventoryFromEnvironment(env, problems),
    swapBack: swapBackFromEnvironment(env, problems),
    unknownDepositGraceSeconds: unknownDepositGraceFromEnvironment(env, problems),
  };
}

function unknownDepositGraceFromEnvironment(
  env: Env,
  problems: string[],
  fallback = DEFAULT_UNKNOWN_DEPOSIT_GRACE_SECONDS,
): number {
  const raw = env.GATEWAY_UNKNOWN_DEPOSIT_GRACE_SECONDS;
  const seconds = raw === undefined || raw.trim() === '' ? fallback : Number(raw);
  if (!Number.isInteger(seconds) || seconds < 0 || seconds > 86_400)
    problems.push('GATEWAY_UNKNOWN_DEPOSIT_GRACE_SECONDS must be an integer 0..86400');
  return seconds;
}

function swapBackFromEnvironment(env: Env, problems: string[]): SwapBackSettings {
  const targets = new Map<string, string>();
  const raw = env.GATEWAY_SWAP_BACK_TARGETS;
  if (raw !== undefined && raw.trim() !== '') {
    for (const entry of raw.split(',').map((part) => part.trim())) {
      const match = /^((?:[1-9][0-9]{0,15}:)?[a-z0-9][a-z0-9._-]*)=([0-9]+(?:\.[0-9]+)?)$/.exec(entry);
      if (match === null) {
        problems.push(`GATEWAY_SWAP_BACK_TARGETS: "${entry}" is not [<chainId>:]<currency id>=<whole units>`);
        continue;
      }
      targets.set(match[1]!, match[2]!);
    }
  }
  const slippage = env.GATEWAY_SWAP_BACK_MAX_SLIPPAGE_BPS
    ? Number(env.GATEWAY_SWAP_BACK_MAX_SLIPPAGE_BPS)
    : defaultSwapBackSettings.maxSlippageBps;
  if (!Number.isInteger(slippage) || slippage < 0 || slippage > 5_000)
    problems.push('GATEWAY_SWAP_BACK_MAX_SLIPPAGE_BPS must be an integer 0..5000');
  const interval = env.GATEWAY_SWAP_BACK_INTERVAL_MS
    ? Number(env.GATEWAY_SWAP_BACK_INTERVAL_MS)
    : defaultSwapBackSettings.intervalMs;
  if (!Number.isInteger(interval) || interval < 1_000)
    problems.push('GATEWAY_SWAP_BACK_INTERVAL_MS must be an integer of at least 1000');
  return { targets, maxSlippageBps: slippage, intervalMs: interval };
}

function inventoryFromEnvironment(env: Env, problems: string[]): InventorySettings {
  const targetBps = new Map<number, number>();
  const raw = env.GATEWAY_INVENTORY_TARGET_BPS;
  if (raw !== undefined && raw.trim() !== '') {
    for (const entry of raw.split(',').map((part) => part.trim())) {
      const match = /^([1-9][0-9]{0,15})=([0-9]{1,5})$/.exec(entry);
      if (match === null || Number(match[2]) > 10_000) {
        problems.push(`GATEWAY_INVENTORY_TARGET_BPS: "${entry}" is not <chainId>=<bps 0..10000>`);
        continue;
      }
      targetBps.set(Number(match[1]), Number(match[2]));
    }
  }
  const threshold = env.GATEWAY_INVENTORY_THRESHOLD_BPS
    ? Number(env.GATEWAY_INVENTORY_THRESHOLD_BPS)
    : defaultInventorySettings.thresholdBps;
  if (!Number.isInteger(threshold) || threshold < 0 || threshold > 10_000)
    problems.push('GATEWAY_INVENTORY_THRESHOLD_BPS must be an integer 0..10000');
  return { targetBps, thresholdBps: threshold };
}

/**
 * A USD amount per chain: `"<default>"` and/or `"<chainId>=<usd>"` entries, comma-separated (`"1,8453=0"`), as
 * micro-USD. Returns the default (`fallback` when not given) and the overrides.
 */
function usdPerChain(
  env: Env,
  name: string,
  fallback: bigint,
  problems: string[],
): { defaultMicros: bigint; perChain: Map<number, bigint> } {
  const raw = env[name];
  const perChain = new Map<number, bigint>();
  let defaultMicros = fallback;
  if (raw === undefined || raw.trim() === '') return { defaultMicros, perChain };
  for (const entry of raw.split(',').map((part) => part.trim())) {
    const match = /^(?:([1-9][0-9]{0,15})=)?([0-9]{1,12}(?:\.[0-9]{1,6})?)$/.exec(entry);
    if (match === null) {
      problems.push(`${name}: "${entry}" is neither a USD amount nor <chainId>=<USD amount> (up to 6 decimals)`);
      continue;
    }
    const micros = parseUnits(match[2]!, 6);
    if (match[1] === undefined) defaultMicros = micros;
    else perChain.set(Number(match[1]), micros);
  }
  return { defaultMicros, perChain };
}

function appFeeClaimsFromEnvironment(
  env: Env,
  problems: string[],
  minimumUsdMicros = defaultAppFeeClaimSettings.defaults.minimumUsdMicros,
): AppFeeClaimSettings {
  const minimum = usdPerChain(env, 'GATEWAY_APP_FEE_CLAIM_MINIMUM_USD', minimumUsdMicros, problems);
  const fee = usdPerChain(
    env,
    'GATEWAY_APP_FEE_CLAIM_FEE_USD',
    defaultAppFeeClaimSettings.defaults.feeUsdMicros,
    problems,
  );
  const perChain = new Map<number, Partial<ClaimChainSettings>>();
  for (const [chainId, micros] of minimum.perChain) perChain.set(chainId, { minimumUsdMicros: micros });
  for (const [chainId, micros] of fee.perChain)
    perChain.set(chainId, { ...perChain.get(chainId), feeUsdMicros: micros });
  return {
    ...defaultAppFeeClaimSettings,
    defaults: { minimumUsdMicros: minimum.defaultMicros, feeUsdMicros: fee.defaultMicros },
    perChain,
  };
}

/** `false`, a hop count, or a comma-separated list of proxy addresses / CIDRs; `true` (every hop) is refused. */
function parseTrustProxy(raw: string | undefined, problems: string[]): TrustProxy {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (/^[0-9]+$/.test(raw)) return Number(raw) === 0 ? false : Number(raw);
  const list = raw.split(',').map((entry) => entry.trim());
  if (raw !== 'true' && list.every((entry) => /^[0-9a-fA-F:.]+(\/[0-9]{1,3})?$/.test(entry) && /[.:]/.test(entry)))
    return list;
  problems.push(
    `GATEWAY_TRUST_PROXY must be false, the number of proxies in front of the gateway, or their addresses/CIDRs (comma-separated), got '${raw}'` +
      (raw === 'true'
        ? ': true would believe every X-Forwarded-For hop, so any client could choose its rate limit bucket'
        : ''),
  );
  return false;
}

function surfaceLimitsFromEnvironment(env: Env, problems: string[]): SurfaceLimitsConfig {
  const integer = (name: string, fallback: number, min: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < min) {
      problems.push(`${name} must be an integer of at least ${min}, got '${raw}'`);
      return fallback;
    }
    return value;
  };
  const d = defaultSurfaceLimits;
  return {
    httpHeadersTimeoutMs: integer('GATEWAY_HTTP_HEADERS_TIMEOUT_MS', d.httpHeadersTimeoutMs, 100),
    httpRequestTimeoutMs: integer('GATEWAY_HTTP_REQUEST_TIMEOUT_MS', d.httpRequestTimeoutMs, 100),
    httpKeepAliveTimeoutMs: integer('GATEWAY_HTTP_KEEP_ALIVE_TIMEOUT_MS', d.httpKeepAliveTimeoutMs, 100),
    wsConnectionsPerClient: integer('GATEWAY_WS_CONNECTIONS_PER_CLIENT', d.wsConnectionsPerClient, 1),
    wsMaxSubscriptions: integer('GATEWAY_WS_MAX_SUBSCRIPTIONS', d.wsMaxSubscriptions, 1),
    wsMaxBufferedBytes: integer('GATEWAY_WS_MAX_BUFFERED_BYTES', d.wsMaxBufferedBytes, 1024),
  };
}

function sweepFromEnvironment(env: Env, problems: string[]): SweepSettings {
  const raw = env.GATEWAY_DEPOSIT_ADDRESS_SWEEP_MARGIN_BPS;
  const marginBps = raw ? Number(raw) : defaultSweepSettings.marginBps;
  if (!Number.isInteger(marginBps) || marginBps < 0 || marginBps > 1_000_000)
    problems.push('GATEWAY_DEPOSIT_ADDRESS_SWEEP_MARGIN_BPS must be an integer 0..1000000');
  const minimum = usdPerChain(
    env,
    'GATEWAY_DEPOSIT_ADDRESS_SWEEP_MINIMUM_USD',
    defaultSweepSettings.minimumUsdMicros,
    problems,
  );
  return { marginBps, minimumUsdMicros: minimum.defaultMicros, minimumUsdMicrosPerChain: minimum.perChain };
}

function reindexBlocksFromEnvironment(env: Env, problems: string[]): number {
  const raw = env.GATEWAY_DEPOSIT_ADDRESS_REINDEX_BLOCKS;
  const blocks = raw ? Number(raw) : 1_000;
  if (!Number.isInteger(blocks) || blocks < 1 || blocks > 100_000)
    problems.push('GATEWAY_DEPOSIT_ADDRESS_REINDEX_BLOCKS must be an integer 1..100000');
  return blocks;
}

function settlementFromEnvironment(
  env: Env,
  problems: string[],
  intervalMs = defaultSettlementSettings.intervalMs,
): SettlementSettings {
  const interval = env.GATEWAY_SETTLEMENT_INTERVAL_MS ? Number(env.GATEWAY_SETTLEMENT_INTERVAL_MS) : intervalMs;
  if (!Number.isInteger(interval) || interval < 100)
    problems.push('GATEWAY_SETTLEMENT_INTERVAL_MS must be an integer of at least 100');
  const maxBatch = env.GATEWAY_SETTLEMENT_MAX_BATCH
    ? Number(env.GATEWAY_SETTLEMENT_MAX_BATCH)
    : defaultSettlementSettings.maxBatch;
  if (!Number.isInteger(maxBatch) || maxBatch < 1 || maxBatch > 500)
    problems.push('GATEWAY_SETTLEMENT_MAX_BATCH must be an integer 1..500');
  return { intervalMs: interval, maxBatch };
}

function reconciliationFromEnvironment(
  env: Env,
  problems: string[],
  intervalMs = defaultReconciliationSettings.intervalMs,
): ReconciliationSettings {
  const interval = env.GATEWAY_RECONCILIATION_INTERVAL_MS ? Number(env.GATEWAY_RECONCILIATION_INTERVAL_MS) : intervalMs;
  if (!Number.isInteger(interval) || interval < 1000)
    problems.push('GATEWAY_RECONCILIATION_INTERVAL_MS must be an integer of at least 1000');
  return { intervalMs: interval };
}

function requestRetentionFromEnvironment(
  env: Env,
  problems: string[],
  retentionHours = defaultRequestRetentionSettings.retentionMs / 3_600_000,
): RequestRetentionSettings {
  const hours = env.GATEWAY_REQUEST_RETENTION_HOURS ? Number(env.GATEWAY_REQUEST_RETENTION_HOURS) : retentionHours;
  if (!Number.isInteger(hours) || hours < 0 || hours > 87_600)
    problems.push('GATEWAY_REQUEST_RETENTION_HOURS must be an integer 0..87600');
  const interval = env.GATEWAY_REQUEST_RETENTION_INTERVAL_MS
    ? Number(env.GATEWAY_REQUEST_RETENTION_INTERVAL_MS)
    : defaultRequestRetentionSettings.intervalMs;
  if (!Number.isInteger(interval) || interval < 1_000)
    problems.push('GATEWAY_REQUEST_RETENTION_INTERVAL_MS must be an integer of at least 1000');
  return { ...defaultRequestRetentionSettings, retentionMs: hours * 3_600_000, intervalMs: interval };
}

function parseBoolean(env: Env, name: string, fallback: boolean, problems: string[]): boolean {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  if (value === 'true') return true;
  if (value === 'false') return false;
  problems.push(`${name} must be true or false, got '${value}'`);
  return fallback;
}

function rateLimitFromEnvironment(env: Env, problems: string[]): RateLimitConfig {
  const integer = (name: string, fallback: number, min: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min) {
      problems.push(`${name} must be an integer of at least ${min}, got '${raw}'`);
      return fallback;
    }
    return value;
  };
  const mode = env.GATEWAY_RATE_LIMIT ?? 'on';
  if (mode !== 'on' && mode !== 'off') problems.push(`GATEWAY_RATE_LIMIT must be on or off, got '${mode}'`);
  return {
    enabled: mode !== 'off',
    windowSeconds: integer('GATEWAY_RATE_LIMIT_WINDOW_SECONDS', defaultRateLimitConfig.windowSeconds, 1),
    anonymousPerMinute: integer(
      'GATEWAY_RATE_LIMIT_ANONYMOUS_PER_MINUTE',
      defaultRateLimitConfig.anonymousPerMinute,
      1,
    ),
    keyPerMinute: integer('GATEWAY_RATE_LIMIT_KEY_PER_MINUTE', defaultRateLimitConfig.keyPerMinute, 1),
  };
}

function gaslessFromEnvironment(env: Env, problems: string[]): GaslessSettings {
  const integer = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < 1) {
      problems.push(`${name} must be a positive integer, got '${raw}'`);
      return fallback;
    }
    return value;
  };
  return {
    maxGas: BigInt(integer('GATEWAY_GASLESS_MAX_GAS', Number(defaultGaslessSettings.maxGas))),
    keyPerMinute: integer('GATEWAY_GASLESS_KEY_PER_MINUTE', defaultGaslessSettings.keyPerMinute),
    userPerMinute: integer('GATEWAY_GASLESS_USER_PER_MINUTE', defaultGaslessSettings.userPerMinute),
  };
}

function permitsFromEnvironment(env: Env, problems: string[]): PermitSettings {
  const integer = (name: string, fallback: number, min: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isSafeInteger(value) || value < min || value > 86_400) {
      problems.push(`${name} must be a whole number of seconds from ${min} to 86400, got '${raw}'`);
      return fallback;
    }
    return value;
  };
  return {
    minValiditySeconds: integer('GATEWAY_PERMIT_MIN_VALIDITY_SECONDS', defaultPermitSettings.minValiditySeconds, 1),
    revertCooldownSeconds: integer(
      'GATEWAY_PERMIT_REVERT_COOLDOWN_SECONDS',
      defaultPermitSettings.revertCooldownSeconds,
      0,
    ),
  };
}

function executionRevertsFromEnvironment(env: Env, problems: string[]): ExecutionRevertSettings {
  const name = 'GATEWAY_EXECUTION_REVERT_COOLDOWN_SECONDS';
  const raw = env[name];
  if (raw === undefined || raw === '') return defaultExecutionRevertSettings;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0 || value > 604_800) {
    problems.push(`${name} must be a whole number of seconds from 0 to 604800, got '${raw}'`);
    return defaultExecutionRevertSettings;
  }
  return { cooldownSeconds: value };
}

/** Parses a private key, adding a problem (never the key itself) when it is malformed. */
export function parsePrivateKey(value: string | undefined, name: string, problems: string[]): Hex {
  if (!value) {
    problems.push(`${name} is required (the solver's private key, 0x + 64 hex digits)`);
    return '0x';
  }
  if (!isHex(value) || value.length !== 66) {
    problems.push(`${name} must be 0x followed by 64 hex digits`);
    return '0x';
  }
  try {
    privateKeyToAccount(value);
  } catch {
    problems.push(`${name} is not a valid secp256k1 private key`);
  }
  return value;
}

/** Where the gateway will listen (`HOST`, `PORT`), read before anything starts; throws the environment's problems. */
export function listenAddressFromEnvironment(env: Env): { host: string; port: number } {
  const problems: string[] = [];
  const { host, port } = fromEnvironment(env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  return { host, port };
}

/** Environment-only settings with chains and solver supplied by the caller (the devnet). */
export function configFromEnvironment(env: Env, chains: ChainConfig[], solverPrivateKey: Hex): GatewayConfig {
  const problems: string[] = [];
  const base = fromEnvironment(env, problems);
  if (problems.length > 0) throw new ConfigError(problems);
  // The devnet's webhook receivers are local: private URLs are allowed unless the environment says otherwise.
  const webhooksAllowPrivate = env.GATEWAY_WEBHOOKS_ALLOW_PRIVATE !== 'false';
  // The devnet settles every few seconds, so a demo sees its deposits come back to the solver.
  const settlement = settlementFromEnvironment(env, problems, 5_000);
  // The devnet reconciles its ledger every ten seconds.
  const reconciliation = reconciliationFromEnvironment(env, problems, 10_000);
  // The devnet keeps never-paid requests an hour after their refund window, so a long demo stays small.
  const requestRetention = requestRetentionFromEnvironment(env, problems, 1);
  // Devnet app fees are cents: a claim of one cent is allowed.
  const appFeeClaims = appFeeClaimsFromEnvironment(env, problems, 10_000n);
  // The devnet's chains are this process's own: no other gateway holds its solver key, so a deposit for an unknown
  // request is refunded at once.
  const unknownDepositGraceSeconds = unknownDepositGraceFromEnvironment(env, problems, 0);
  return {
    ...base,
    webhooksAllowPrivate,
    solverPrivateKey,
    chains,
    quote: defaultQuoteSettings,
    settlement,
    reconciliation,
    requestRetention,
    appFeeClaims,
    unknownDepositGraceSeconds,
    devnet: true,
  };
}

export type { Address };

/**
 * What `npm run keys` needs: the database, the webhook URL policy, and what seals webhook signing secrets
 * (`GATEWAY_WEBHOOK_SECRET_KEY`, else `GATEWAY_SOLVER_PRIVATE_KEY`, as the gateway derives it; neither: not
 * sealed). Throws `ConfigError`.
 */
export function keysCliConfigFromEnvironment(env: Env): Pick<
  GatewayConfig,
  'databaseUrl' | 'dataDir' | 'databaseSchema' | 'webhooksAllowPrivate' | 'webhooks'
> & {
  solverPrivateKey: Hex | undefined;
} {
  const problems: string[] = [];
  const base = fromEnvironment(env, problems);
  const solverPrivateKey = env.GATEWAY_SOLVER_PRIVATE_KEY
    ? parsePrivateKey(env.GATEWAY_SOLVER_PRIVATE_KEY, 'GATEWAY_SOLVER_PRIVATE_KEY', problems)
    : undefined;
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    databaseUrl: base.databaseUrl,
    dataDir: base.dataDir,
    databaseSchema: base.databaseSchema,
    webhooksAllowPrivate: base.webhooksAllowPrivate,
    webhooks: base.webhooks,
    solverPrivateKey,
  };
}

/** PGlite's `shared_buffers` bounds: PostgreSQL's least, and the most PGlite 0.5's 32-bit WASM heap starts with. */
const PGLITE_BUFFERS_MIN_KB = 128;
const PGLITE_BUFFERS_MAX_KB = 1024 * 1024;

/** What is wrong with a `GATEWAY_PGLITE_SHARED_BUFFERS` value, or null. */
function pgliteBufferProblem(value: string, postgres: boolean): string | null {
  if (postgres)
    return "GATEWAY_PGLITE_SHARED_BUFFERS applies to PGlite only: with DATABASE_URL, size PostgreSQL's shared_buffers on its server";
  const match = /^([1-9][0-9]{0,9})(kB|MB|GB)$/.exec(value);
  const kilobytes = match === null ? NaN : Number(match[1]) * { kB: 1, MB: 1024, GB: 1024 * 1024 }[match[2]!]!;
  if (!(kilobytes >= PGLITE_BUFFERS_MIN_KB && kilobytes <= PGLITE_BUFFERS_MAX_KB))
    return 'GATEWAY_PGLITE_SHARED_BUFFERS must be a size from 128kB to 1GB, written as PostgreSQL writes it (e.g. 256MB)';
  return null;
}
