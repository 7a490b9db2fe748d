import { zeroAddress, type Address } from 'viem';
import type { ChainConfig, CurrencyConfig } from '../../src/core/chains/types.js';

/**
 * A deterministic address for `role` on chain `id`: `0x` + the chain id (8 hex digits) + the role (32), so a
 * test can tell every address apart and recompute it (`chainAddress(10, 3)`).
 */
export function chainAddress(id: number, role: number): Address {
  return `0x${id.toString(16).padStart(8, '0')}${role.toString(16).padStart(32, '0')}`;
}

/** Roles of the addresses `makeChainConfig` hands out (the second part of `chainAddress`). */
export const addressRole = {
  depository: 1,
  receiver: 2,
  multicaller: 3,
  onlyOwnerMulticaller: 4,
  approvalProxy: 5,
  erc20Router: 6,
  multicall3: 7,
  usdc: 0x10,
} as const;

/**
 * A complete, valid `ChainConfig` for chain `id` without any node behind it: its RPC URLs point at a closed
 * local port (readiness fails), it has the native ETH and a 6-decimal USDC with permit, both featured solver
 * currencies. `overrides` replace top-level fields (`{ hidden: true }`, `{ currencies: [] }`, ...).
 */
export function makeChainConfig(id: number, overrides: Partial<ChainConfig> = {}): ChainConfig {
  const nativeCurrency: CurrencyConfig = {
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
    logoURI: 'https://assets.example/eth.png',
    verified: true,
    price: { kind: 'fixed', usd: '3000' },
  };
  const usdc: CurrencyConfig = {
    id: 'usdc',
    symbol: 'USDC',
    name: 'USD Coin',
    address: chainAddress(id, addressRole.usdc),
    decimals: 6,
    supportsBridging: true,
    supportsPermit: true,
    featured: true,
    solver: true,
    withdrawalFeeBps: 1,
    depositFeeBps: 2,
    surgeEnabled: false,
    logoURI: 'https://assets.example/usdc.png',
    verified: true,
    price: { kind: 'fixed', usd: '1' },
  };
  return {
    id,
    name: `chain-${id}`,
    displayName: `Chain ${id}`,
    httpRpcUrl: 'http://127.0.0.1:1',
    wsRpcUrl: 'ws://127.0.0.1:1',
    publicHttpRpcUrl: null,
    publicWsRpcUrl: null,
    explorerUrl: `https://explorer-${id}.example`,
    explorerName: `Explorer ${id}`,
    explorerPaths: { transaction: '/tx/{TX_HASH}', address: '/address/{ADDRESS}', token: '/token/{ADDRESS}' },
    explorerQueryParams: null,
    nativeCurrency,
    currencies: [usdc],
    contracts: {
      depository: chainAddress(id, addressRole.depository),
      receiver: chainAddress(id, addressRole.receiver),
      multicaller: chainAddress(id, addressRole.multicaller),
      onlyOwnerMulticaller: chainAddress(id, addressRole.onlyOwnerMulticaller),
      approvalProxy: chainAddress(id, addressRole.approvalProxy),
      erc20Router: chainAddress(id, addressRole.erc20Router),
      multicall3: chainAddress(id, addressRole.multicall3),
    },
    depositEnabled: true,
    tokenSupport: 'Limited',
    disabled: false,
    partialDisableLimit: 0n,
    blockProductionLagging: false,
    withdrawalFeeBps: 0,
    depositFeeBps: 0,
    surgeEnabled: false,
    iconUrl: null,
    logoUrl: null,
    brandColor: null,
    baseChainId: 1,
    statusMessage: null,
    tags: [],
    hidden: false,
    confirmations: 1,
    blockTime: 1,
    ...overrides,
  };
}
