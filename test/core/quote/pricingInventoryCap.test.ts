/**
 * The inventory cap in `priceRoute`, exactly: a swap's output is the lower of the oracle's conversion and what the
 * pools would pay for the same net input (`MarketSnapshot.inventoryCap`), for both trade types, and what the cap
 * took shows as `usd.inventoryCap`. Same-asset routes ignore it.
 */
import { describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { currencyConfig } from '../../../src/core/chains/currency.js';
import type { UsdPrice } from '../../../src/core/market.js';
import { priceRoute, type InventoryCap, type MarketSnapshot } from '../../../src/core/quote/pricing.js';
import type { ResolvedRoute } from '../../../src/core/vocabulary/route.js';
import { defaultQuoteSettings } from '../../../src/core/settings.js';
import { makeChainConfig } from '../../helpers/chainConfig.js';

const usd = (value: bigint): UsdPrice => ({ answer: value * 10n ** 8n, decimals: 8, updatedAt: 0 });
const usdc = currencyConfig({
  id: 'usdc',
  symbol: 'USDC',
  name: 'USD Coin',
  address: '0x00000000000000000000000000000000000000c1',
  decimals: 6,
});
const usdt = currencyConfig({
  id: 'usdt',
  symbol: 'USDT',
  name: 'Tether',
  address: '0x00000000000000000000000000000000000000c2',
  decimals: 6,
});
const user = '0x00000000000000000000000000000000000000aa' as Address;
const route = (sameAsset = false): ResolvedRoute => ({
  origin: makeChainConfig(1),
  destination: makeChainConfig(2),
  currencyIn: usdc,
  currencyOut: sameAsset ? usdc : usdt,
  user,
  recipient: user,
  refundTo: user,
  operation: sameAsset ? 'bridge' : 'swap',
  routeClass: sameAsset ? 'bridge' : 'stablecoin',
  sameAsset,
  sameChain: false,
  calls: [],
  slippageBps: 0,
});
/** Free gas: only the USD 0.02 flat execution fee, the 2 bps stablecoin swap fee and the 1 bp platform fee are charged. */
const market = (inventoryCap?: InventoryCap): MarketSnapshot => ({
  priceIn: usd(1n),
  priceOut: usd(1n),
  destinationNativePrice: usd(3000n),
  destinationGasPrice: 0n,
  fillGasUnits: 0n,
  fillL1FeeWei: 0n,
  ...(inventoryCap === undefined ? {} : { inventoryCap }),
});
/** A pool that pays 90 % of its input (a 10 % impact), and asks for the inverse, rounded up. */
const ninetyPercent: InventoryCap = {
  outFor: (net) => (net * 9n) / 10n,
  inFor: (out) => (out * 10n + 8n) / 9n,
};
const price = (amount: bigint, tradeType: 'EXACT_INPUT' | 'EXACT_OUTPUT', cap?: InventoryCap, sameAsset = false) =>
  priceRoute({
    route: route(sameAsset),
    params: { amount, tradeType },
    market: market(cap),
    settings: defaultQuoteSettings,
    caller: { apiKey: null },
    trailingVolumeUsdMicros: 0n,
  });

describe('priceRoute with an inventory cap', () => {
  it('EXACT_INPUT: the pools pay less than the oracle, so the output is theirs and the difference is impact', () => {
    const free = price(100_000_000n, 'EXACT_INPUT');
    const capped = price(100_000_000n, 'EXACT_INPUT', ninetyPercent);
    // USD 100 less USD 0.02, 2 bps (0.02) and the 1 bp platform fee: 99.95 at the oracle; the pool pays 90 % of it.
    expect(free.amountOut).toBe(99_950_000n);
    expect(capped.amountOut).toBe(89_955_000n);
    expect(capped.fees).toEqual(free.fees);
    expect(capped.usd.inventoryCap).toBe(9_995_000n);
    expect(free.usd.inventoryCap).toBe(0n);
  });

  it('EXACT_INPUT: pools that would pay more than the oracle do not raise the output', () => {
    const generous: InventoryCap = { outFor: (net) => net * 2n, inFor: (out) => out / 2n };
    const capped = price(100_000_000n, 'EXACT_INPUT', generous);
    expect(capped.amountOut).toBe(99_950_000n);
    expect(capped.usd.inventoryCap).toBe(0n);
  });

  it('EXACT_OUTPUT: the input is what the pools need for the output, plus fees', () => {
    const capped = price(90_000_000n, 'EXACT_OUTPUT', ninetyPercent);
    expect(capped.amountOut).toBe(90_000_000n);
    const net = capped.amountIn - capped.fees.userPays;
    // The smallest net input the pool turns into the output.
    expect(ninetyPercent.outFor(net)).toBeGreaterThanOrEqual(90_000_000n);
    expect(ninetyPercent.outFor(net - 1n)).toBeLessThan(90_000_000n);
  });

  it('pools that cannot carry the amount mark the pricing short (the quote then refuses it)', () => {
    const dry: InventoryCap = { outFor: () => undefined, inFor: () => undefined };
    expect(price(100_000_000n, 'EXACT_INPUT', dry).inventoryCapShort).toBe(true);
    expect(price(90_000_000n, 'EXACT_OUTPUT', dry).inventoryCapShort).toBe(true);
    expect(price(100_000_000n, 'EXACT_INPUT', ninetyPercent).inventoryCapShort).toBeUndefined();
  });

  it('same-asset routes ignore the cap', () => {
    expect(price(100_000_000n, 'EXACT_INPUT', ninetyPercent, true).amountOut).toBe(99_980_000n);
  });
});
