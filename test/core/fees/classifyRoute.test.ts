import { describe, expect, it } from 'vitest';
import { classifyRoute, type RouteCurrency } from '../../../src/core/fees/index.js';
import type { RouteClass, RouteOperation } from '../../../src/core/vocabulary/route.js';

const on = (chainId: number, symbol: string, currencyId = symbol.toLowerCase()): RouteCurrency => ({
  chainId,
  currencyId,
  symbol,
});

describe('classifyRoute', () => {
  it.each<[string, RouteCurrency, RouteCurrency, RouteOperation, RouteClass]>([
    // bridge: same group id, or native <-> wrapped
    ['USDC bridged across chains', on(1, 'USDC'), on(8453, 'USDC'), 'bridge', 'bridge'],
    ['ETH bridged across chains', on(1, 'ETH'), on(10, 'ETH'), 'bridge', 'bridge'],
    ['ETH -> WETH cross-chain', on(1, 'ETH'), on(42161, 'WETH'), 'bridge', 'bridge'],
    ['WETH -> ETH cross-chain as a swap', on(42161, 'WETH'), on(1, 'ETH'), 'swap', 'bridge'],
    ['same-chain ETH -> WETH wrap', on(1, 'ETH'), on(1, 'WETH'), 'wrap', 'bridge'],
    ['same-chain WETH -> ETH unwrap', on(1, 'WETH'), on(1, 'ETH'), 'unwrap', 'bridge'],
    ['same-chain POL -> WPOL wrap', on(137, 'POL'), on(137, 'WPOL'), 'wrap', 'bridge'],
    ['USDC.e and USDC sharing a group id', on(137, 'USDC.e', 'usdc'), on(1, 'USDC', 'usdc'), 'bridge', 'bridge'],
    ['lower-case symbols', on(1, 'eth'), on(1, 'weth'), 'wrap', 'bridge'],
    // stablecoin
    ['USDC -> USDT same chain', on(1, 'USDC'), on(1, 'USDT'), 'swap', 'stablecoin'],
    ['USDC -> USDT cross-chain', on(1, 'USDC'), on(8453, 'USDT'), 'swap', 'stablecoin'],
    ['DAI -> PYUSD', on(1, 'DAI'), on(1, 'PYUSD'), 'swap', 'stablecoin'],
    ['USDC.e -> USDT0 (distinct groups)', on(137, 'USDC.e'), on(137, 'USDT0'), 'swap', 'stablecoin'],
    ['USDe -> PlumeUSD, case-insensitive', on(1, 'usde'), on(98866, 'PLUMEUSD'), 'swap', 'stablecoin'],
    ['mUSD -> USDm -> distinct stables', on(1, 'mUSD'), on(1, 'USDm', 'usdm2'), 'swap', 'stablecoin'],
    ['USDS -> USD1', on(1, 'USDS'), on(56, 'USD1'), 'swap', 'stablecoin'],
    ['USDG -> USDH', on(1, 'USDG'), on(999, 'USDH'), 'swap', 'stablecoin'],
    ['pUSD -> USDC', on(98866, 'pUSD'), on(1, 'USDC'), 'swap', 'stablecoin'],
    // major
    ['ETH -> USDC', on(1, 'ETH'), on(8453, 'USDC'), 'swap', 'major'],
    ['USDT -> WETH', on(1, 'USDT'), on(1, 'WETH'), 'swap', 'major'],
    ['WBTC -> SOL', on(1, 'WBTC'), on(792703809, 'SOL'), 'swap', 'major'],
    ['BTC -> WBTC is a swap, not a wrap', on(8253038, 'BTC'), on(1, 'WBTC'), 'swap', 'major'],
    ['BNB -> POL', on(56, 'BNB'), on(137, 'POL'), 'swap', 'major'],
    ['PLUME -> WSOL', on(98866, 'PLUME'), on(792703809, 'WSOL'), 'swap', 'major'],
    ['ETH -> SOL', on(1, 'ETH'), on(792703809, 'SOL'), 'swap', 'major'],
    // minor
    ['MNR -> USDC', on(1, 'MNR'), on(1, 'USDC'), 'swap', 'minor'],
    ['ETH -> MNR', on(1, 'ETH'), on(8453, 'MNR'), 'swap', 'minor'],
    ['MNR -> OTHER', on(1, 'MNR'), on(1, 'OTHER'), 'swap', 'minor'],
    ['WPOL -> USDC (WPOL is not a listed major)', on(137, 'WPOL'), on(137, 'USDC'), 'swap', 'minor'],
    // calls and mislabelled operations are classified by the currency pair
    ['call paying ETH for USDC', on(1, 'ETH'), on(8453, 'USDC'), 'call', 'major'],
    ['call with the same asset', on(1, 'USDC'), on(8453, 'USDC'), 'call', 'bridge'],
    ['call paying MNR', on(1, 'MNR'), on(8453, 'ETH'), 'call', 'minor'],
    ['"wrap" of unrelated tokens', on(1, 'ETH'), on(1, 'USDC'), 'wrap', 'major'],
    ['"bridge" of different stables', on(1, 'USDC'), on(10, 'DAI'), 'bridge', 'stablecoin'],
  ])('%s', (_name, origin, destination, operation, expected) => {
    expect(classifyRoute({ origin, destination, operation })).toBe(expected);
  });
});
