import type { QuoteSettings } from './chains/types.js';

/**
 * Defaults of the pricing policy. The swap fee stands in for what a DEX route would cost plus the solver's
 * rebalancing: nothing on same-asset routes, a little on stablecoin pairs, more on majors and long-tail tokens.
 */
export const defaultQuoteSettings: QuoteSettings = {
  ttlSeconds: 600,
  refundWindowSeconds: 86_400,
  swapFeeBps: { bridge: 0, stablecoin: 2, major: 5, minor: 30 },
  defaultSlippageBps: { bridge: 0, swap: 50 },
  maxPriceImpactBps: 2_500,
  minSameChainSwapUsdMicros: 50_000n,
  maxTtlSeconds: 3_600,
  // Generous enough for the devnet (its solver holds about USD 40M per chain and its tests fill USD 18M orders);
  // a deployment sets limits that fit its inventory (docs/configuration.md).
  exposure: {
    maxOrderUsdMicros: 50_000_000n * 1_000_000n,
    routes: [],
    outflowWindowSeconds: 3_600,
    maxOutflowUsdMicros: 100_000_000n * 1_000_000n,
    chainOutflowUsdMicros: {},
    maxHoldSeconds: 1_800,
  },
};

/** Largest age (seconds, by the chain's clock) of a feed answer whose currency sets no `maxAgeSeconds` (config file). */
export const DEFAULT_PRICE_MAX_AGE_SECONDS = 3_600;

/** Largest distance (bps) of a stablecoin's feed from its fixed price before quotes and fills on it stop. */
export const DEFAULT_PEG_DEVIATION_BPS = 200;
