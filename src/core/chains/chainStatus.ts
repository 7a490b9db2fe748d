import type { Address } from 'viem';

/**
 * What the start-up checks found the solver cannot do (`src/server/chainChecks.ts`): a chain it does not serve
 * (wrong network behind the RPC, contracts without code or not owned by the solver) and tokens it cannot deliver
 * (no approval of the fill contract). Quotes and fills ask before they rely on either.
 */
export interface ChainStatus {
  /** Why the solver does not serve this chain in this run, or null. */
  chainBlocked(chainId: number): string | null;
  /** Why the solver cannot deliver this ERC-20 on this chain now, or null. */
  tokenBlocked(chainId: number, token: Address): string | null;
}
