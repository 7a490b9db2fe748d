/**
 * The DEX book of the chains whose config has a `dex` section: every pool between two of the chain's listed
 * tokens, routed through the chain's WETH and USDC, read at start, at each pushed head and on a short poll.
 */
import { zeroAddress, type Address } from 'viem';
import { createDexBook, type DexBook, type DexChainConfig } from '../chain/dex/dexBook.js';
import type { ChainClients } from '../chain/clients.js';
import { DEX_HUB_SYMBOLS, type ChainConfig } from '../core/chains/types.js';
import type { Logger } from '../core/logger.js';

/** The book over `chains` (those without `dex` left out); `undefined` when no chain has one. */
export function createDexLiquidity(params: {
  chains: readonly ChainConfig[];
  clients: ChainClients;
  log: Logger;
  pollIntervalMs?: number;
}): DexBook | undefined {
  const configs = params.chains.flatMap((chain): DexChainConfig[] => {
    const dex = chain.dex;
    if (dex === undefined || (dex.uniswapV3 === undefined && dex.uniswapV2 === undefined)) return [];
    const tokens = chain.currencies.map((c) => c.address).filter((address) => address !== zeroAddress);
    const hubs = DEX_HUB_SYMBOLS.flatMap((symbol): Address[] => {
      const hub = chain.currencies.find((c) => c.symbol.toUpperCase() === symbol && c.address !== zeroAddress);
      return hub === undefined ? [] : [hub.address];
    });
    return [
      {
        chainId: chain.id,
        client: params.clients.get(chain.id)!,
        multicall3: chain.contracts.multicall3,
        ...(dex.uniswapV3 === undefined
          ? {}
          : { uniswapV3: { factory: dex.uniswapV3.factory, router: dex.uniswapV3.swapRouter } }),
        ...(dex.uniswapV2 === undefined
          ? {}
          : { uniswapV2: { factory: dex.uniswapV2.factory, router: dex.uniswapV2.router } }),
        tokens,
        hubs,
      },
    ];
  });
  if (configs.length === 0) return undefined;
  return createDexBook({
    chains: configs,
    log: params.log,
    ...(params.pollIntervalMs === undefined ? {} : { pollIntervalMs: params.pollIntervalMs }),
  });
}
