/** Extra gas on top of an estimate for the gateway's own transactions: state can move before inclusion. */
const GAS_MARGIN_PERCENT = 20n;

/**
 * The gas limit for a transaction estimated at `estimate` units: the estimate plus `GAS_MARGIN_PERCENT`, rounded up
 * (a limit one unit short is a revert; one unit over costs nothing unless used). Used by every sender of the
 * gateway's transactions (fills, refunds, permit deposits, gasless batches, the chain sender's own estimates), so
 * they agree.
 */
export function withGasMargin(estimate: bigint): bigint {
  return (estimate * (100n + GAS_MARGIN_PERCENT) + 99n) / 100n;
}
