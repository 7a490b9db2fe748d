/** The last comparison of the solver's ledger with its balance on chain, per chain and currency. */

export interface ReconciliationRecord {
  chainId: number;
  currency: string;
  blockNumber: bigint;
  onChain: bigint;
  ledger: bigint;
  incoming: bigint;
  /** onChain - (ledger + incoming). */
  drift: bigint;
  checkedAt: number;
  /** The last check that found transactions in flight and compared nothing, when after `checkedAt`. */
  inFlightAt: number | null;
}
