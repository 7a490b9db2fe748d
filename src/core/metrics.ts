/**
 * What the core reports for the operator's dashboard. The core only calls this port; `src/server/metrics.ts`
 * implements it with prom-client and serves `/metrics`. Every method is cheap and synchronous: it is called on
 * the quote path and inside the solver's lifecycle, and must never throw or wait.
 */
export interface GatewayMetrics {
  /** A quote (`getQuote`) was answered: `outcome` is `ok` or the error's `errorCode` (`UNEXPECTED` for anything else). */
  quoteAnswered(originChainId: number, destinationChainId: number, outcome: string): void;
  /** The solver moved a request to status `to` (with the failReason it recorded, if any). */
  statusChanged(to: string, failReason: string | null): void;
  /** The fill of a request was broadcast, `seconds` after its deposit was first seen on the origin chain. */
  fillBroadcast(seconds: number): void;
  /** A request reached `success`, `seconds` after its deposit was first seen on the origin chain. */
  depositSucceeded(seconds: number): void;
  /** A webhook delivery attempt ended: `delivered`, `retry` (failed, will be retried), `failed` (for good) or `cancelled`. */
  webhookAttempt(outcome: string): void;
  /** A deposit the solver had used was taken off chain `chainId` by a reorg past its confirmations (a loss). */
  depositReorged(chainId: number): void;
  /** Settlement set a deposit aside whose release the depository refuses (`SettlementRejection`), once per deposit. */
  settlementItemRejected(chainId: number, reason: string): void;
  /**
   * A deposit the solver's own transaction carried names a gateway contract as its depositor, and no requester of
   * that transaction is known: it is held in the depository for the operator instead of refunded.
   */
  strayDepositHeld(chainId: number): void;
  /** The rebalancing job swapped a token's surplus back through the pools (`src/core/inventory/swapBack.ts`): `outcome` is `swapped`, `skipped` or `failed`. */
  swapBack?(chainId: number, symbol: string, outcome: string): void;
}
