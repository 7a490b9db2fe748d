import type { RouteClass, RouteOperation } from '../vocabulary/route.js';
/** One side of a route: the chain and the currency as the catalogue names it. */
export interface RouteCurrency {
  chainId: number;
  /** Currency group id (`eth`, `usdc`, ...): the same asset on several chains shares it. */
  currencyId: string;
  symbol: string;
}

export interface ClassifyRouteParameters {
  origin: RouteCurrency;
  destination: RouteCurrency;
  operation: RouteOperation;
}

/** Stablecoins of the spec's "Stablecoin swap" row, lower case. */
export const STABLECOIN_SYMBOLS: ReadonlySet<string> = new Set(
  [
    'USDC',
    'USDC.e',
    'USDT',
    'USDT0',
    'DAI',
    'USDe',
    'USDS',
    'USD1',
    'PYUSD',
    'USDG',
    'mUSD',
    'USDm',
    'USDH',
    'pUSD',
    'PlumeUSD',
  ].map((symbol) => symbol.toLowerCase()),
);

/** Tokens of the spec's "Major swap" row, lower case. */
export const MAJOR_SYMBOLS: ReadonlySet<string> = new Set(
  ['ETH', 'WETH', 'BTC', 'WBTC', 'SOL', 'WSOL', 'POL', 'BNB', 'PLUME'].map((symbol) => symbol.toLowerCase()),
);

/**
 * Wrapped native tokens converted 1:1 through a single contract, mapped to their native symbol (lower case).
 * WBTC is deliberately absent: it is a custodial token, not a wrap of a native coin.
 */
const WRAPPED_NATIVE: ReadonlyMap<string, string> = new Map([
  ['weth', 'eth'],
  ['wsol', 'sol'],
  ['wpol', 'pol'],
  ['wbnb', 'bnb'],
  ['wplume', 'plume'],
]);

const unwrapSymbol = (symbol: string): string => {
  const lower = symbol.toLowerCase();
  return WRAPPED_NATIVE.get(lower) ?? lower;
};

/**
 * Classifies a route for the platform fee.
 *
 * - `bridge` (0%): both sides are the same asset: the same currency group id (on any chains), or a
 *   native coin and its wrapped token (ETH <-> WETH, ...), same-chain wrap/unwrap or cross-chain.
 * - `stablecoin`: both sides are listed stablecoins.
 * - `major`: both sides are majors, or one major and one stablecoin.
 * - `minor`: anything else.
 *
 * The `operation` label is not trusted to lower the fee: a `wrap`/`unwrap`/`bridge`/`call` whose currencies
 * are different assets is classified by the currency pair like a swap. Symbols match case-insensitively.
 */
export function classifyRoute({ origin, destination }: ClassifyRouteParameters): RouteClass {
  if (origin.currencyId.toLowerCase() === destination.currencyId.toLowerCase()) return 'bridge';
  if (unwrapSymbol(origin.symbol) === unwrapSymbol(destination.symbol)) return 'bridge';

  const kind = (symbol: string): 'stable' | 'major' | 'other' => {
    const lower = symbol.toLowerCase();
    if (STABLECOIN_SYMBOLS.has(lower)) return 'stable';
    if (MAJOR_SYMBOLS.has(lower)) return 'major';
    return 'other';
  };
  const from = kind(origin.symbol);
  const to = kind(destination.symbol);
  if (from === 'other' || to === 'other') return 'minor';
  if (from === 'stable' && to === 'stable') return 'stablecoin';
  return 'major';
}
