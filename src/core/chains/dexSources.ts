import type { ChainConfig } from './types.js';

/**
 * The one swap source of this gateway: the solver fills every swap from its own inventory at oracle prices.
 * `GET /swap-sources` lists it, and quotes honour `includedSwapSources` / `excludedSwapSources` against it.
 */
export const SWAP_SOURCE = 'solver-inventory';

/** The swap source name of a chain's Uniswap v3 deployment (`dex.uniswapV3`). */
export const UNISWAP_V3_SOURCE = 'uniswap-v3';
/** The swap source name of a chain's Uniswap v2 deployment (`dex.uniswapV2`). */
export const UNISWAP_V2_SOURCE = 'uniswap-v2';

/** Every swap source this gateway knows, in the order lists name them. */
const SWAP_SOURCE_ORDER = [SWAP_SOURCE, UNISWAP_V3_SOURCE, UNISWAP_V2_SOURCE] as const;

/**
 * The swap sources of one chain: the solver's inventory on every chain, and each DEX its `dex` configures. These
 * names are what `includedSwapSources` / `excludedSwapSources` take.
 */
export function swapSourcesOf(chain: Pick<ChainConfig, 'dex'>): string[] {
  return swapSourcesOfAny([chain]);
}

/** The swap sources of any of `chains`, each once, in the order of `swapSourcesOf`. */
export function swapSourcesOfAny(chains: ReadonlyArray<Pick<ChainConfig, 'dex'>>): string[] {
  return SWAP_SOURCE_ORDER.filter(
    (source) =>
      source === SWAP_SOURCE ||
      chains.some(
        (chain) => (source === UNISWAP_V3_SOURCE ? chain.dex?.uniswapV3 : chain.dex?.uniswapV2) !== undefined,
      ),
  );
}
