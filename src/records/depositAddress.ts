/** A deposit address and the transfers it received, as the store keeps them and the core reads them. */
import type { JsonObject } from './json.js';

export type DepositAddressType = 'strict' | 'open';

export interface DepositAddressRecord {
  chainId: number;
  address: string;
  type: DepositAddressType;
  /** The factory's `key`: the request id (strict) or a hash of the route and parties (open). */
  saltKey: string;
  recoveryAddress: string | null;
  /** Strict: the order it is bound to; open: the quote that first handed it out. */
  requestId: string;
  /** The quoted input currency. */
  currency: string;
  /** Null: no automatic refunds (open without `refundTo`); the zero address: refund the detected depositor. */
  refundTo: string | null;
  /** What a re-quote needs (open): the quote's parameters, amounts as decimal strings. */
  params: JsonObject;
  createdAt: number;
  reindexedAt: number | null;
}

/**
 * `dust`: worth less than sweeping it costs (`src/core/depositAddresses/sweepWorth.ts`): left at the address, and
 * taken along (`swept`, `dustSweepId` set) by the sweep of a later transfer there that makes the sum worth it.
 */
export type TransferStatus = 'seen' | 'confirmed' | 'removed' | 'unsupported' | 'sweeping' | 'swept' | 'held' | 'dust';

export interface SweepLeg {
  id: string;
  depositor: string;
  amount: bigint;
}

export interface TransferRecord {
  id: number;
  chainId: number;
  address: string;
  txHash: string;
  /** -1 for a native transfer (the transaction itself). */
  logIndex: number;
  blockNumber: bigint;
  blockHash: string;
  token: string;
  amount: bigint;
  /** The sender of the transfer (the transaction's `from`, or the ERC-20 `Transfer`'s `from`). */
  depositor: string;
  status: TransferStatus;
  requestId: string | null;
  supersedesRequestId: string | null;
  sweepId: string | null;
  legs: SweepLeg[] | null;
  /** A `dust` transfer taken along by a later transfer's sweep: that sweep's id. */
  dustSweepId: string | null;
  createdAt: number;
  updatedAt: number;
}

/** What a request record shows of its deposit address (`depositAddress`, `supersededByRequestId`). */
export interface RequestDepositAddress {
  address: string;
  type: DepositAddressType;
  depositor: string | null;
  depositTxHash: string | null;
  recoveryAddress: string | null;
  refundTo: string | null;
  supersededByRequestId: string | null;
}
