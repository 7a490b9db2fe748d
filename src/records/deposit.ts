/** A deposit the watchers saw on an origin chain, as the store keeps it and the core reads it. */

/**
 * `seen`: in a block, not yet deep enough; `confirmed`: past the chain's confirmation depth; `removed`: its
 * block was reorged away; `consumed`: used by a fill or a refund (a second deposit for the id is a double spend).
 */
export type DepositStatus = 'seen' | 'confirmed' | 'removed' | 'consumed';

export interface DepositRecord {
  id: number;
  chainId: number;
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
  blockHash: string;
  /** The request id the deposit carried (there may be no such request). */
  requestId: string;
  /** Who the deposit is for, as the depository's caller named it (or the receiver's caller). */
  depositor: string;
  /** The deposit transaction's sender (`from`), read from the chain; null only for rows older than the column. */
  sender: string | null;
  /**
   * When the solver itself sent the deposit's transaction, what that transaction was (`sweep:<deposit address>`,
   * `permit:<owner>`, `call:<target>`: `src/core/solver/solverCarrier.ts`); null otherwise, and for older rows.
   */
  carrier: string | null;
  /** Token address; the zero address for native deposits. */
  token: string;
  amount: bigint;
  depositIndex: bigint | null;
  status: DepositStatus;
  /**
   * Unix ms when a reorg past the confirmation depth took the deposit off the chain after it was used (a fill or a
   * refund paid for it; status `removed`, its amount booked as a loss); null for every other deposit.
   */
  reorgedAt: number | null;
  createdAt: number;
  updatedAt: number;
}
