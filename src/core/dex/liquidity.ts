/**
 * What the core asks of DEX liquidity: exact quotes priced from pool state held in memory (no RPC call), and a
 * fresh read of a chain's pools when a decision must rest on live state (a fill re-priced just before it is sent).
 * The composition root provides it from `src/chain/dex/dexBook.ts`; the core never reads pools itself.
 */
import type { Address } from 'viem';
import type { DexSource } from './poolState.js';
import type { DexChainState, DexQuote } from './route.js';

export interface DexQuoteParameters {
  chainId: number;
  tokenIn: Address;
  tokenOut: Address;
  /** Default every source configured on the chain. */
  sources?: readonly DexSource[];
  /** The cost of `gas` units in tokenOut's smallest unit, to compare routes net of gas. */
  costOfGas?: (gas: bigint) => bigint;
  /** Whether a route may mix sources across its hops; default false (one router call executes it). */
  mixSources?: boolean;
}

export interface DexQuoteExactInParameters extends DexQuoteParameters {
  amountIn: bigint;
}

export interface DexQuoteExactOutParameters extends DexQuoteParameters {
  amountOut: bigint;
}

export interface DexLiquidity {
  /** The chains whose pools are held (those with a `dex` section). */
  chainIds(): readonly number[];
  /** The state held for the chain, if any, and when it was read (Unix ms). */
  state(chainId: number): DexChainState | undefined;
  readAt(chainId: number): number | undefined;
  /** The best exact-input route on the state in memory; no RPC call. */
  quoteExactIn(params: DexQuoteExactInParameters): DexQuote;
  /** The route that buys exactly `amountOut` for the least input, on the state in memory; no RPC call. */
  quoteExactOut(params: DexQuoteExactOutParameters): DexQuote;
  /**
   * Reads the chain's pool state at `blockNumber` (default the latest) into memory; resolves with the state now
   * held. Concurrent calls share one read.
   */
  refresh(chainId: number, blockNumber?: bigint): Promise<DexChainState>;
}
