/**
 * The config file's `limits` and `prices` sections, parsed for `config.ts`: exposure
 * limits into `QuoteSettings.exposure`, and the default maximum age of price feed answers applied to every feed
 * that sets none. USD amounts are decimal strings in the file and micro-USD in the core.
 */
import { parseUnits } from 'viem';
import type { ChainConfig, ExposureLimits, PriceSource } from '../core/chains/types.js';
import { DEFAULT_PRICE_MAX_AGE_SECONDS, defaultQuoteSettings } from '../core/settings.js';

const usdSchema = { type: 'string', pattern: '^[0-9]+(\\.[0-9]{1,6})?$' };

/** JSON schema of the file's `limits` object. */
export const limitsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    maxOrderUsd: usdSchema,
    routes: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['maxOrderUsd'],
        properties: {
          originChainId: { type: 'integer', minimum: 1 },
          destinationChainId: { type: 'integer', minimum: 1 },
          originCurrency: { type: 'string', minLength: 1 },
          destinationCurrency: { type: 'string', minLength: 1 },
          maxOrderUsd: usdSchema,
        },
      },
    },
    outflow: {
      type: 'object',
      additionalProperties: false,
      properties: {
        windowSeconds: { type: 'integer', minimum: 1, maximum: 2_592_000 },
        maxUsd: usdSchema,
        chains: { type: 'object', propertyNames: { pattern: '^[1-9][0-9]*$' }, additionalProperties: usdSchema },
      },
    },
    maxHoldSeconds: { type: 'integer', minimum: 1, maximum: 2_592_000 },
  },
};

/** JSON schema of the file's `prices` object. */
export const pricesSchema = {
  type: 'object',
  additionalProperties: false,
  properties: { maxAgeSeconds: { type: 'integer', minimum: 1 } },
};

export interface LimitsFile {
  maxOrderUsd?: string;
  routes?: Array<{
    originChainId?: number;
    destinationChainId?: number;
    originCurrency?: string;
    destinationCurrency?: string;
    maxOrderUsd: string;
  }>;
  outflow?: { windowSeconds?: number; maxUsd?: string; chains?: Record<string, string> };
  maxHoldSeconds?: number;
}

export interface PricesFile {
  maxAgeSeconds?: number;
}

const usd = (value: string): bigint => parseUnits(value, 6);

/** The exposure limits of a (schema-valid) `limits` object over the defaults. */
export function exposureFromFile(file: LimitsFile | undefined): ExposureLimits {
  const defaults = defaultQuoteSettings.exposure;
  if (file === undefined) return defaults;
  return {
    maxOrderUsdMicros: file.maxOrderUsd === undefined ? defaults.maxOrderUsdMicros : usd(file.maxOrderUsd),
    routes: (file.routes ?? []).map(({ maxOrderUsd, originCurrency, destinationCurrency, ...chains }) => ({
      ...chains,
      ...(originCurrency === undefined ? {} : { originCurrency: originCurrency.toLowerCase() }),
      ...(destinationCurrency === undefined ? {} : { destinationCurrency: destinationCurrency.toLowerCase() }),
      maxOrderUsdMicros: usd(maxOrderUsd),
    })),
    outflowWindowSeconds: file.outflow?.windowSeconds ?? defaults.outflowWindowSeconds,
    maxOutflowUsdMicros: file.outflow?.maxUsd === undefined ? defaults.maxOutflowUsdMicros : usd(file.outflow.maxUsd),
    chainOutflowUsdMicros: Object.fromEntries(
      Object.entries(file.outflow?.chains ?? {}).map(([id, value]) => [Number(id), usd(value)]),
    ),
    maxHoldSeconds: file.maxHoldSeconds ?? defaults.maxHoldSeconds,
  };
}

/** Every feed without its own `maxAgeSeconds` gets the file's default (or `DEFAULT_PRICE_MAX_AGE_SECONDS`). */
export function withPriceMaxAge(chains: ChainConfig[], file: PricesFile | undefined): ChainConfig[] {
  const maxAgeSeconds = file?.maxAgeSeconds ?? DEFAULT_PRICE_MAX_AGE_SECONDS;
  const withAge = (price: PriceSource | undefined): PriceSource | undefined => {
    if (price === undefined || price.maxAgeSeconds !== undefined) return price;
    if (price.kind === 'fixed' && price.feed === undefined) return price;
    return { ...price, maxAgeSeconds };
  };
  return chains.map((chain) => {
    const currency = <T extends ChainConfig['nativeCurrency']>(c: T): T => {
      const price = withAge(c.price);
      return price === undefined ? c : { ...c, price };
    };
    return { ...chain, nativeCurrency: currency(chain.nativeCurrency), currencies: chain.currencies.map(currency) };
  });
}
