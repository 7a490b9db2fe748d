/**
 * What the core reads of users' own transactions: a transaction, its receipt and logs. For requests the user
 * executes without a deposit (a same-chain DEX swap), whose outcome only its receipt tells. The composition root
 * provides it from the chains' RPC clients (`src/chain/chainTransactions.ts`).
 */
import type { Address, Hex } from 'viem';

export interface ChainLog {
  address: Address;
  topics: readonly Hex[];
  data: Hex;
  transactionHash: Hex;
}

export interface ChainTransaction {
  hash: Hex;
  from: Address;
  to: Address | null;
  input: Hex;
  value: bigint;
  /** Null while it is pending. */
  blockNumber: bigint | null;
}

export interface ChainReceipt {
  status: 'success' | 'reverted';
  blockNumber: bigint;
  logs: readonly ChainLog[];
}

export interface ChainTransactions {
  /** The transaction (pending or mined), or null when the chain's node does not know it. */
  transaction(chainId: number, hash: Hex): Promise<ChainTransaction | null>;
  /** The receipt once mined, or null. */
  receipt(chainId: number, hash: Hex): Promise<ChainReceipt | null>;
  /** The receipt once mined, waiting up to `timeoutMs`; null when it was not mined in time. */
  waitForReceipt(chainId: number, hash: Hex, timeoutMs: number): Promise<ChainReceipt | null>;
  /** The logs of `address` with `topics` (null: any) from `fromBlock` to the head. */
  logs(
    chainId: number,
    filter: { address: Address; topics: ReadonlyArray<Hex | null>; fromBlock: bigint },
  ): Promise<ChainLog[]>;
}
