/** What a quote's route is, shared by the quote, the fees and the limits that judge it. */
import type { Address } from 'viem';
import type { ChainConfig, CurrencyConfig } from '../chains/types.js';
import type { DestinationCall } from '../fill/fillTransaction.js';

/** Platform-fee class of a route (spec "Fee rules" §3). */
export type RouteClass = 'bridge' | 'stablecoin' | 'major' | 'minor';

export type RouteOperation = 'bridge' | 'swap' | 'call' | 'wrap' | 'unwrap';

/** A quote request checked against the catalogue: chains, currencies, addresses and the kind of trade. */
export interface ResolvedRoute {
  origin: ChainConfig;
  destination: ChainConfig;
  currencyIn: CurrencyConfig;
  currencyOut: CurrencyConfig;
  user: Address;
  recipient: Address;
  refundTo: Address;
  operation: RouteOperation | 'send';
  routeClass: RouteClass;
  /** Same asset on both sides (bridge, send, wrap, unwrap): converted 1:1, no oracle. */
  sameAsset: boolean;
  sameChain: boolean;
  calls: DestinationCall[];
  slippageBps: number;
  /** Set for `useDepositAddress` quotes. */
  depositAddress?: { type: 'strict' | 'open'; recoveryAddress: Address | null } | null;
  /** USD value (micro) of the native gas the fill delivers to the recipient (`topupGas`); 0 or absent for none. */
  gasTopupUsdMicros?: bigint;
  /** Swaps: where the output may come from on the destination (absent for same-asset routes). */
  swapSources?: SwapSources;
}

/** The sources a swap's output may come from on the destination: the solver's inventory, and DEX pools. */
export interface SwapSources {
  inventory: boolean;
  /** DEX sources by name (`DexSource`: `uniswap-v3`, `uniswap-v2`). */
  dex: Array<'uniswap-v3' | 'uniswap-v2'>;
}
