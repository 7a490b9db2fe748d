import type { Address, Hex } from 'viem';
import type { ChainContracts } from '../core/chains/types.js';

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
  nativePriceFeed: Address;
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
