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
};

/**
 * The one swap source of this gateway: the solver fills every swap from its own inventory at oracle prices.
 * `GET /swap-sources` lists it, and quotes honour `includedSwapSources` / `excludedSwapSources` against it.
 */
export const SWAP_SOURCE = 'solver-inventory';
