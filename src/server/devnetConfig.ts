import { zeroAddress } from 'viem';
import type { DevnetDescriptor } from '../chain/devnet.js';
import type { ChainConfig, CurrencyConfig } from '../core/chains/types.js';

const displayNames: Record<string, string> = { 'devnet-a': 'Devnet A', 'devnet-b': 'Devnet B', 'devnet-c': 'Devnet C' };

/** The gateway's chain configuration for a running devnet, from its descriptor. */
export function devnetChainConfigs(descriptor: DevnetDescriptor): ChainConfig[] {
  return descriptor.chains.map((chain) => {
    const native: CurrencyConfig = {
      id: 'eth',
      symbol: 'ETH',
      name: 'Ether',
      address: zeroAddress,
      decimals: 18,
      supportsBridging: true,
      supportsPermit: false,
      featured: true,
      solver: true,
      withdrawalFeeBps: 0,
      depositFeeBps: 0,
      surgeEnabled: false,
      logoURI: '',
      verified: true,
      price: { kind: 'aggregatorV3', feed: chain.nativePriceFeed },
    };
    const currencies: CurrencyConfig[] = chain.tokens.map((token) => ({
      id: token.id,
      symbol: token.symbol,
      name: token.name,
      address: token.address,
      decimals: token.decimals,
      supportsBridging: true,
      supportsPermit: token.supportsPermit,
      featured: token.id !== 'mnr',
      solver: true,
      withdrawalFeeBps: 0,
      depositFeeBps: 0,
      surgeEnabled: false,
      logoURI: '',
      verified: true,
      price: { kind: 'aggregatorV3', feed: token.priceFeed },
    }));
    return {
      id: chain.chainId,
      name: chain.name,
      displayName: displayNames[chain.name] ?? chain.name,
      httpRpcUrl: chain.rpcUrl,
      wsRpcUrl: chain.wsUrl,
      explorerUrl: '',
      explorerName: '',
      explorerPaths: null,
      explorerQueryParams: null,
      nativeCurrency: native,
      currencies,
      contracts: chain.contracts,
      depositEnabled: true,
      tokenSupport: 'All',
      disabled: false,
      partialDisableLimit: 0n,
      blockProductionLagging: false,
      withdrawalFeeBps: 0,
      depositFeeBps: 0,
      surgeEnabled: false,
      iconUrl: null,
      logoUrl: null,
      brandColor: null,
      baseChainId: null,
      statusMessage: null,
      tags: ['devnet'],
      hidden: false,
      confirmations: 1,
    };
  });
}
