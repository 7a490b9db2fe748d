/**
 * The JSON config file (`npm start -- --config <file>` or `GATEWAY_CONFIG`): its schema, how each chain and
 * currency in it becomes a `ChainConfig`, and how it merges with the environment's settings (`config.ts`). Every
 * problem is collected and reported at once, as for the environment.
 */
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { getAddress, isAddress, parseUnits, zeroAddress } from 'viem';
import { currencyConfig } from '../core/chains/currency.js';
import type { ChainConfig, CurrencyConfig, QuoteSettings } from '../core/chains/types.js';
import { defaultQuoteSettings } from '../core/settings.js';
import { checkDexFile, dexFromFile, dexSchema, type DexFile } from './dexConfig.js';
import {
  exposureFromFile,
  limitsSchema,
  pricesSchema,
  withPriceMaxAge,
  type LimitsFile,
  type PricesFile,
} from './limitsConfig.js';

import {
  ConfigError,
  durableDatabaseProblems,
  fromEnvironment,
  parsePrivateKey,
  type Env,
  type GatewayConfig,
} from './config.js';

const addressPattern = '^0x[0-9a-fA-F]{40}$';
const currencySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'symbol', 'name', 'address', 'decimals'],
  properties: {
    id: { type: 'string', minLength: 1 },
    symbol: { type: 'string', minLength: 1 },
    name: { type: 'string', minLength: 1 },
    address: { type: 'string', pattern: addressPattern },
    decimals: { type: 'integer', minimum: 0, maximum: 36 },
    supportsBridging: { type: 'boolean' },
    supportsPermit: { type: 'boolean' },
    featured: { type: 'boolean' },
    solver: { type: 'boolean' },
    withdrawalFeeBps: { type: 'integer', minimum: 0, maximum: 10000 },
    depositFeeBps: { type: 'integer', minimum: 0, maximum: 10000 },
    surgeEnabled: { type: 'boolean' },
    logoURI: { type: 'string' },
    verified: { type: 'boolean' },
    price: {
      oneOf: [
        {
          type: 'object',
          additionalProperties: false,
          required: ['kind', 'feed'],
          properties: {
            kind: { const: 'aggregatorV3' },
            feed: { type: 'string', pattern: addressPattern },
            maxAgeSeconds: { type: 'integer', minimum: 1 },
          },
        },
        {
          type: 'object',
          additionalProperties: false,
          required: ['kind', 'usd'],
          properties: {
            kind: { const: 'fixed' },
            usd: { type: 'string', pattern: '^[0-9]+(\\.[0-9]+)?$' },
            feed: { type: 'string', pattern: addressPattern },
            maxAgeSeconds: { type: 'integer', minimum: 1 },
            maxDeviationBps: { type: 'integer', minimum: 0, maximum: 10000 },
            allowFixedNative: { type: 'boolean' },
          },
        },
      ],
    },
  },
};
const contractNames = [
  'depository',
  'receiver',
  'multicaller',
  'onlyOwnerMulticaller',
  'approvalProxy',
  'erc20Router',
  'multicall3',
] as const;
const chainSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['id', 'name', 'httpRpcUrl', 'nativeCurrency', 'contracts'],
  properties: {
    id: { type: 'integer', minimum: 1 },
    name: { type: 'string', pattern: '^[a-z0-9-]+$' },
    displayName: { type: 'string' },
    httpRpcUrl: { type: 'string', pattern: '^https?://' },
    wsRpcUrl: { type: 'string', pattern: '^wss?://' },
    fallbackHttpRpcUrls: { type: 'array', items: { type: 'string', pattern: '^https?://' }, maxItems: 8 },
    publicHttpRpcUrl: { type: 'string', pattern: '^https?://' },
    publicWsRpcUrl: { type: 'string', pattern: '^wss?://' },
    pushHeads: { type: 'boolean' },
    explorerUrl: { type: 'string' },
    explorerName: { type: 'string' },
    explorerPaths: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['transaction', 'address', 'token'],
      properties: { transaction: { type: 'string' }, address: { type: 'string' }, token: { type: 'string' } },
    },
    nativeCurrency: currencySchema,
    currencies: { type: 'array', items: currencySchema },
    contracts: {
      type: 'object',
      additionalProperties: false,
      required: [...contractNames],
      properties: Object.fromEntries(
        [...contractNames, 'attestationVerifier', 'batchExecutor', 'depositAddressFactory', 'swapDepositRouter'].map(
          (name) => [name, { type: 'string', pattern: addressPattern }],
        ),
      ),
    },
    dex: dexSchema,
    depositEnabled: { type: 'boolean' },
    tokenSupport: { enum: ['All', 'Limited'] },
    disabled: { type: 'boolean' },
    partialDisableLimit: { type: 'string', pattern: '^[0-9]+$' },
    blockProductionLagging: { type: 'boolean' },
    withdrawalFeeBps: { type: 'integer', minimum: 0, maximum: 10000 },
    depositFeeBps: { type: 'integer', minimum: 0, maximum: 10000 },
    surgeEnabled: { type: 'boolean' },
    iconUrl: { type: ['string', 'null'] },
    logoUrl: { type: ['string', 'null'] },
    brandColor: { type: ['string', 'null'] },
    baseChainId: { type: ['integer', 'null'] },
    statusMessage: { type: ['string', 'null'] },
    tags: { type: 'array', items: { type: 'string' } },
    hidden: { type: 'boolean' },
    confirmations: { type: 'integer', minimum: 0, maximum: 1000 },
    finalityDepth: { type: 'integer', minimum: 1, maximum: 100000 },
    deploymentBlock: { type: 'integer', minimum: 0 },
    blockTime: { type: 'number', exclusiveMinimum: 0, maximum: 3600 },
    feeModel: { enum: ['ethereum', 'op-stack', 'arbitrum'] },
    maxCallsGas: { type: 'integer', minimum: 21000, maximum: 1_000_000_000 },
    maxGaslessGas: { type: 'integer', minimum: 21000, maximum: 1_000_000_000 },
  },
};
const bpsSchema = { type: 'integer', minimum: 0, maximum: 10000 };
const quoteSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ttlSeconds: { type: 'integer', minimum: 10, maximum: 86400 },
    maxTtlSeconds: { type: 'integer', minimum: 10, maximum: 86400 },
    refundWindowSeconds: { type: 'integer', minimum: 0, maximum: 31536000 },
    swapFeeBps: {
      type: 'object',
      additionalProperties: false,
      properties: { bridge: bpsSchema, stablecoin: bpsSchema, major: bpsSchema, minor: bpsSchema },
    },
    defaultSlippageBps: {
      type: 'object',
      additionalProperties: false,
      properties: { bridge: bpsSchema, swap: bpsSchema },
    },
    maxPriceImpactBps: bpsSchema,
    minSameChainSwapUsd: { type: 'string', pattern: '^[0-9]+(\\.[0-9]{1,6})?$' },
    maxInventorySwapUsd: { type: 'string', pattern: '^[0-9]+(\\.[0-9]{1,6})?$' },
    maxDexStateAgeSeconds: { type: 'integer', minimum: 1, maximum: 3600 },
  },
};
const fileSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['chains'],
  properties: {
    $schema: { type: 'string' },
    chains: { type: 'array', minItems: 1, items: chainSchema },
    quote: quoteSchema,
    limits: limitsSchema,
    prices: pricesSchema,
  },
};

type QuoteFile = Partial<
  Omit<
    QuoteSettings,
    'swapFeeBps' | 'defaultSlippageBps' | 'minSameChainSwapUsdMicros' | 'exposure' | 'maxInventorySwapUsdMicros'
  >
> & {
  swapFeeBps?: Partial<QuoteSettings['swapFeeBps']>;
  defaultSlippageBps?: Partial<QuoteSettings['defaultSlippageBps']>;
  minSameChainSwapUsd?: string;
  maxInventorySwapUsd?: string;
};

/** The quote settings of a config file over the defaults. */
function quoteSettingsFromFile(file: QuoteFile | undefined): QuoteSettings {
  const { swapFeeBps, defaultSlippageBps, minSameChainSwapUsd, maxInventorySwapUsd, ...rest } = file ?? {};
  return {
    ...defaultQuoteSettings,
    ...rest,
    swapFeeBps: { ...defaultQuoteSettings.swapFeeBps, ...swapFeeBps },
    defaultSlippageBps: { ...defaultQuoteSettings.defaultSlippageBps, ...defaultSlippageBps },
    minSameChainSwapUsdMicros:
      minSameChainSwapUsd === undefined
        ? defaultQuoteSettings.minSameChainSwapUsdMicros
        : parseUnits(minSameChainSwapUsd, 6),
    ...(maxInventorySwapUsd === undefined ? {} : { maxInventorySwapUsdMicros: parseUnits(maxInventorySwapUsd, 6) }),
  };
}

type CurrencyFile = Omit<Partial<CurrencyConfig>, 'address'> &
  Pick<CurrencyConfig, 'id' | 'symbol' | 'name' | 'decimals'> & { address: string };
type ChainFile = Omit<
  Partial<ChainConfig>,
  'partialDisableLimit' | 'nativeCurrency' | 'currencies' | 'contracts' | 'maxCallsGas' | 'maxGaslessGas' | 'dex'
> & {
  dex?: DexFile;
  id: number;
  maxCallsGas?: number;
  maxGaslessGas?: number;
  name: string;
  httpRpcUrl: string;
  partialDisableLimit?: string;
  nativeCurrency: CurrencyFile;
  currencies?: CurrencyFile[];
  contracts: Record<string, string>;
};

function currencyFromFile(c: CurrencyFile, native: boolean): CurrencyConfig {
  const { address, price, ...rest } = c;
  return currencyConfig({
    ...rest,
    address: native ? zeroAddress : getAddress(address),
    ...(price ? { price: price.feed === undefined ? price : { ...price, feed: getAddress(price.feed) } } : {}),
  });
}

/** Fills the optional chain fields with the defaults a self-hosted deployment expects. */
function chainFromFile(c: ChainFile): ChainConfig {
  const contracts = Object.fromEntries(
    Object.entries(c.contracts).map(([k, v]) => [k, getAddress(v)]),
  ) as unknown as ChainConfig['contracts'];
  return {
    id: c.id,
    name: c.name,
    displayName: c.displayName ?? c.name,
    httpRpcUrl: c.httpRpcUrl,
    wsRpcUrl: c.wsRpcUrl ?? c.httpRpcUrl.replace(/^http/, 'ws'),
    pushHeads: c.pushHeads ?? c.wsRpcUrl !== undefined,
    ...(c.fallbackHttpRpcUrls === undefined || c.fallbackHttpRpcUrls.length === 0
      ? {}
      : { fallbackHttpRpcUrls: c.fallbackHttpRpcUrls }),
    publicHttpRpcUrl: c.publicHttpRpcUrl ?? null,
    publicWsRpcUrl: c.publicWsRpcUrl ?? null,
    explorerUrl: c.explorerUrl ?? '',
    explorerName: c.explorerName ?? '',
    explorerPaths: c.explorerPaths ?? null,
    explorerQueryParams: c.explorerQueryParams ?? null,
    nativeCurrency: currencyFromFile(c.nativeCurrency, true),
    currencies: (c.currencies ?? []).map((x) => currencyFromFile(x, false)),
    contracts,
    ...(c.dex === undefined ? {} : { dex: dexFromFile(c.dex)! }),
    depositEnabled: c.depositEnabled ?? true,
    tokenSupport: c.tokenSupport ?? 'All',
    disabled: c.disabled ?? false,
    partialDisableLimit: BigInt(c.partialDisableLimit ?? '0'),
    blockProductionLagging: c.blockProductionLagging ?? false,
    withdrawalFeeBps: c.withdrawalFeeBps ?? 0,
    depositFeeBps: c.depositFeeBps ?? 0,
    surgeEnabled: c.surgeEnabled ?? false,
    iconUrl: c.iconUrl ?? null,
    logoUrl: c.logoUrl ?? null,
    brandColor: c.brandColor ?? null,
    baseChainId: c.baseChainId ?? null,
    statusMessage: c.statusMessage ?? null,
    tags: c.tags ?? [],
    hidden: c.hidden ?? false,
    confirmations: c.confirmations ?? 2,
    ...(c.finalityDepth === undefined ? {} : { finalityDepth: c.finalityDepth }),
    ...(c.deploymentBlock === undefined ? {} : { deploymentBlock: c.deploymentBlock }),
    blockTime: c.blockTime ?? 2,
    feeModel: c.feeModel ?? 'ethereum',
    ...(c.maxCallsGas === undefined ? {} : { maxCallsGas: BigInt(c.maxCallsGas) }),
    ...(c.maxGaslessGas === undefined ? {} : { maxGaslessGas: BigInt(c.maxGaslessGas) }),
  };
}

/** Parses a config file's JSON text plus the environment; throws `ConfigError` listing every problem. */
export function parseConfigFile(text: string, env: Env, source = 'config file'): GatewayConfig {
  const problems: string[] = [];
  const base = fromEnvironment(env, problems);
  const solverPrivateKey = parsePrivateKey(env.GATEWAY_SOLVER_PRIVATE_KEY, 'GATEWAY_SOLVER_PRIVATE_KEY', problems);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ConfigError([...problems, `${source} is not valid JSON: ${(error as Error).message}`]);
  }
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(fileSchema);
  if (!validate(parsed)) {
    for (const e of validate.errors ?? []) {
      const where = `${source}${e.instancePath.replace(/\//g, '.') || ' (root)'}`;
      if (e.keyword === 'additionalProperties')
        problems.push(`${where}: unknown field '${String(e.params.additionalProperty)}'`);
      else if (e.keyword === 'required') problems.push(`${where}: missing '${String(e.params.missingProperty)}'`);
      else problems.push(`${where}: ${e.message ?? 'invalid'}`);
    }
    throw new ConfigError(problems);
  }
  const file = parsed as { chains: ChainFile[]; quote?: QuoteFile; limits?: LimitsFile; prices?: PricesFile };
  const ids = new Set<number>();
  const names = new Set<string>();
  for (const [i, chain] of file.chains.entries()) {
    if (ids.has(chain.id)) problems.push(`${source}.chains.${i}.id: chain id ${chain.id} is configured twice`);
    if (names.has(chain.name))
      problems.push(`${source}.chains.${i}.name: chain name '${chain.name}' is configured twice`);
    ids.add(chain.id);
    names.add(chain.name);
    const nativePrice = chain.nativeCurrency.price;
    // A native currency's USD price moves; a fixed one, unchecked, prices every fill's gas and every native
    // delivery at a number that is wrong the moment the market moves. Allowed only when the operator says so.
    if (nativePrice?.kind === 'fixed' && nativePrice.feed === undefined && nativePrice.allowFixedNative !== true) {
      problems.push(
        `${source}.chains.${i}.nativeCurrency.price: a fixed price for the native currency ${chain.nativeCurrency.symbol} ` +
          `needs a feed that checks it ("feed": "0x…") or "allowFixedNative": true to accept it unchecked ` +
          `(see "Price sources for chains without Chainlink" in docs/real-networks.md)`,
      );
    }
    checkDexFile(chain.dex, `${source}.chains.${i}.dex`, problems);
    for (const [j, currency] of (chain.currencies ?? []).entries()) {
      if (!isAddress(currency.address) || currency.address.toLowerCase() === zeroAddress) {
        problems.push(`${source}.chains.${i}.currencies.${j}.address: an ERC-20 needs a non-zero address`);
      }
    }
  }
  const quote = { ...quoteSettingsFromFile(file.quote), exposure: exposureFromFile(file.limits) };
  if (quote.ttlSeconds > quote.maxTtlSeconds)
    problems.push(`${source}.quote.ttlSeconds: ${quote.ttlSeconds} is above maxTtlSeconds ${quote.maxTtlSeconds}`);
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    ...base,
    // A deployment on PGlite keeps a week of quotes (the retention's default): its buffer pool is PostgreSQL's
    // default, where the devnet keeps 16 MB for its memory (`GATEWAY_PGLITE_SHARED_BUFFERS`).
    ...(base.databaseUrl === undefined && base.pgliteSharedBuffers === undefined
      ? { pgliteSharedBuffers: DEPLOYMENT_PGLITE_SHARED_BUFFERS }
      : {}),
    solverPrivateKey,
    chains: withPriceMaxAge(file.chains.map(chainFromFile), file.prices),
    quote,
  };
}

/** PGlite's buffer pool under a config file unless set (see docs/performance.md, "PGlite: the buffer pool"). */
export const DEPLOYMENT_PGLITE_SHARED_BUFFERS = '128MB';

/** Reads the config file named by `--config <path>` or `GATEWAY_CONFIG`; null means "run the devnet". */
export function configFilePath(argv: string[], env: Env): string | null {
  const flag = argv.indexOf('--config');
  if (flag >= 0) return argv[flag + 1] ?? null;
  return env.GATEWAY_CONFIG || null;
}

export function loadConfigFile(path: string, env: Env): GatewayConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError([`cannot read config file ${path}: ${(error as Error).message}`]);
  }
  // The file's problems and the database's are reported together, as every other problem of the configuration.
  const database = durableDatabaseProblems(env);
  let config: GatewayConfig;
  try {
    config = parseConfigFile(text, env, path);
  } catch (error) {
    if (error instanceof ConfigError && database.length > 0) throw new ConfigError([...error.problems, ...database]);
    throw error;
  }
  if (database.length > 0) throw new ConfigError(database);
  return config;
}
