import { zeroAddress } from 'viem';
import type { DevnetDescriptor } from '../chain/devnet.js';
import { currencyConfig } from '../core/chains/currency.js';
import type { ChainConfig } from '../core/chains/types.js';

/**
 * The devnet's feeds keep the answers they were deployed with (nothing updates them), so their answers may be as
 * old as the devnet: a month instead of the hour a config file defaults to. Tests that attack stale prices set less.
 */
const DEVNET_PRICE_MAX_AGE_SECONDS = 30 * 86_400;

const displayNames: Record<string, string> = { 'devnet-a': 'Devnet A', 'devnet-b': 'Devnet B', 'devnet-c': 'Devnet C' };

/** The gateway's chain configuration for a running devnet, from its descriptor. */
export function devnetChainConfigs(descriptor: DevnetDescriptor): ChainConfig[] {
  return descriptor.chains.map((chain) => {
    const native = currencyConfig({
      id: 'eth',
      symbol: 'ETH',
      name: 'Ether',
      address: zeroAddress,
      decimals: 18,
      price: { kind: 'aggregatorV3', feed: chain.nativePriceFeed, maxAgeSeconds: DEVNET_PRICE_MAX_AGE_SECONDS },
    });
    const currencies = chain.tokens.map((token) =>
      currencyConfig({
        id: token.id,
        symbol: token.symbol,
        name: token.name,
        address: token.address,
        decimals: token.decimals,
        supportsPermit: token.supportsPermit,
        // The minor token is listed but not featured, like a long-tail token on a real chain; so is PUSD, the
        // EIP-2612-only stable that is there to run `eip2612` permit deposits.
        featured: token.id !== 'mnr' && token.id !== 'pusd',
        price: { kind: 'aggregatorV3', feed: token.priceFeed, maxAgeSeconds: DEVNET_PRICE_MAX_AGE_SECONDS },
      }),
    );
    // Long-tail tokens have no feed and no solver inventory: listed, neither featured nor bridged nor accepted
    // directly as input; only DEX pools price them.
    const longTail = chain.longTailTokens.map((token) =>
      currencyConfig({
        id: token.id,
        symbol: token.symbol,
        name: token.name,
        address: token.address,
        decimals: token.decimals,
        featured: false,
        supportsBridging: false,
        solver: false,
      }),
    );
    return {
      id: chain.chainId,
      name: chain.name,
      displayName: displayNames[chain.name] ?? chain.name,
      httpRpcUrl: chain.rpcUrl,
      wsRpcUrl: chain.wsUrl,
      // The devnet's nodes are local and keyless: wallets and the SDK read receipts from them directly.
      publicHttpRpcUrl: chain.rpcUrl,
      publicWsRpcUrl: chain.wsUrl,
      pushHeads: true,
      explorerUrl: '',
      explorerName: '',
      explorerPaths: null,
      explorerQueryParams: null,
      nativeCurrency: native,
      currencies: [...currencies, ...longTail],
      contracts: chain.contracts,
      dex: chain.dex,
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
      // The devnet's chains are the gateway's own from their first block.
      deploymentBlock: 0,
      // Interval mining uses the descriptor's block time; automine (tests) makes blocks at once.
      blockTime: chain.blockTime ?? 1,
      feeModel: chain.feeModel ?? 'ethereum',
    };
  });
}
