import type { Address, Hex } from 'viem';
import type { ChainContracts, DexPool, UniswapV2Deployment, UniswapV3Deployment } from '../core/chains/types.js';

/** Everything a client of the devnet needs: keys, RPC URLs, contract and token addresses. */
export interface DevnetDescriptor {
  version: 1;
  /** ISO timestamp. */
  createdAt: string;
  solver: DevnetAccount;
  deployer: DevnetAccount;
  /** Funded test users (anvil accounts 2, 3, ...). */
  accounts: DevnetAccount[];
  chains: DevnetChain[];
}

export interface DevnetAccount {
  address: Address;
  privateKey: Hex;
}

export interface DevnetChain {
  chainId: number;
  /** devnet-a, devnet-b, devnet-c, ... in the order of `chains`. */
  name: string;
  rpcUrl: string;
  wsUrl: string;
  /** Seconds between blocks; null = automine. */
  blockTime: number | null;
  /**
   * `op-stack`: the chain has the devnet GasPriceOracle at the OP-stack predeploy and the gateway prices fills'
   * L1 data fee there; absent (descriptors written before it) = `ethereum`.
   */
  feeModel?: 'ethereum' | 'op-stack';
  /** Every gateway contract, the attestation verifier included. */
  contracts: Required<ChainContracts>;
  tokens: DevnetToken[];
  /**
   * Tokens with no price feed and no solver inventory (`LONG`): only DEX pools price and trade them, as a long-tail
   * token on a real chain.
   */
  longTailTokens: DevnetLongTailToken[];
  nativePriceFeed: Address;
  /** Uniswap v3 and v2, deployed from their npm artifacts, and the pools seeded on them. */
  dex: DevnetDex;
}

/** The devnet's Uniswap contracts and pools: the shape of a chain config's `dex`, with every part present. */
export interface DevnetDex {
  uniswapV3: Required<Omit<UniswapV3Deployment, 'swapRouterKind'>> & { pools: DexPool[] };
  uniswapV2: Required<UniswapV2Deployment> & { pools: DexPool[] };
}

export interface DevnetLongTailToken {
  id: string;
  symbol: string;
  name: string;
  address: Address;
  decimals: number;
}

export interface DevnetToken {
  /** Currency group id: the same asset on every devnet chain shares it. */
  id: string;
  symbol: string;
  name: string;
  address: Address;
  decimals: number;
  /** AggregatorV3 feed, 8 decimals, USD. */
  priceFeed: Address;
  supportsPermit: boolean;
}
