import { zeroAddress } from 'viem';
import type { Chain, ChainConfig, CoreConfig, CurrencyConfig } from './types.js';

export interface GetChainsParameters {
  /** Comma-separated ids of hidden chains to include (the reference's `includeChains`). */
  includeChains?: string | null | undefined;
}

export type GetChainsReturnType = Chain[];

/**
 * The chain catalogue: every configured chain that is not hidden, plus hidden chains named in
 * `includeChains`. Backs `GET /chains` and the GraphQL `chains` field.
 */
export function getChains(
  ctx: { config: Pick<CoreConfig, 'chains' | 'solverAddress'> },
  params: GetChainsParameters = {},
): GetChainsReturnType {
  const included = new Set(
    (params.includeChains ?? '')
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part.length > 0),
  );
  return ctx.config.chains
    .filter((chain) => !chain.hidden || included.has(String(chain.id)) || included.has(chain.name))
    .map((chain) => toChain(chain, ctx.config.solverAddress));
}

function toChain(chain: ChainConfig, solverAddress: Chain['solverAddresses'][number]): Chain {
  const native = chain.nativeCurrency;
  const all: CurrencyConfig[] = [native, ...chain.currencies];
  return {
    id: chain.id,
    name: chain.name,
    displayName: chain.displayName,
    httpRpcUrl: chain.publicHttpRpcUrl ?? '',
    wsRpcUrl: chain.publicWsRpcUrl ?? '',
    explorerUrl: chain.explorerUrl,
    explorerName: chain.explorerName,
    explorerPaths: chain.explorerPaths,
    explorerQueryParams: chain.explorerQueryParams,
    depositEnabled: chain.depositEnabled,
    tokenSupport: chain.tokenSupport,
    disabled: chain.disabled,
    partialDisableLimit: chain.partialDisableLimit,
    blockProductionLagging: chain.blockProductionLagging,
    currency: {
      id: native.id,
      symbol: native.symbol,
      name: native.name,
      address: zeroAddress,
      decimals: native.decimals,
      supportsBridging: native.supportsBridging,
    },
    withdrawalFee: chain.withdrawalFeeBps,
    depositFee: chain.depositFeeBps,
    surgeEnabled: chain.surgeEnabled,
    featuredTokens: all
      .filter((c) => c.featured)
      .map((c) => ({
        id: c.id,
        symbol: c.symbol,
        name: c.name,
        address: c.address,
        decimals: c.decimals,
        supportsBridging: c.supportsBridging,
        metadata: { logoURI: c.logoURI },
      })),
    erc20Currencies: chain.currencies.map((c) => ({
      id: c.id,
      symbol: c.symbol,
      name: c.name,
      address: c.address,
      decimals: c.decimals,
      supportsBridging: c.supportsBridging,
      supportsPermit: c.supportsPermit,
      withdrawalFee: c.withdrawalFeeBps,
      depositFee: c.depositFeeBps,
      surgeEnabled: c.surgeEnabled,
    })),
    solverCurrencies: all
      .filter((c) => c.solver)
      .map((c) => ({ id: c.id, symbol: c.symbol, name: c.name, address: c.address, decimals: c.decimals })),
    iconUrl: chain.iconUrl,
    logoUrl: chain.logoUrl,
    brandColor: chain.brandColor,
    contracts: {
      multicall3: chain.contracts.multicall3,
      multicaller: chain.contracts.multicaller,
      onlyOwnerMulticaller: chain.contracts.onlyOwnerMulticaller,
      serviceReceiver: chain.contracts.receiver,
      relayReceiver: chain.contracts.receiver,
      erc20Router: chain.contracts.erc20Router,
      approvalProxy: chain.contracts.approvalProxy,
      v3: { erc20Router: chain.contracts.erc20Router, approvalProxy: chain.contracts.approvalProxy },
    },
    vmType: 'evm',
    baseChainId: chain.baseChainId,
    statusMessage: chain.statusMessage,
    solverAddresses: [solverAddress],
    tags: chain.tags,
    protocol: {
      v2: { chainId: chain.name, depository: chain.contracts.depository, depositoryVault: chain.contracts.depository },
    },
  };
}
