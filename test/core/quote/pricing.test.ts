/**
 * The quote arithmetic on its own, exactly: trade types, same-asset vs oracle conversion, every fee component
 * and sponsorship, with hand-computed figures. Prices are AggregatorV3-style (8 decimals).
 */
import { describe, expect, it } from 'vitest';
import { zeroAddress, type Address } from 'viem';
import { currencyConfig } from '../../../src/core/chains/currency.js';
import { GatewayError } from '../../../src/core/errors.js';
import type { UsdPrice } from '../../../src/core/market.js';
import { priceRoute, type MarketSnapshot, type PricingParameters } from '../../../src/core/quote/pricing.js';
import type { ResolvedRoute } from '../../../src/core/vocabulary/route.js';
import type { Caller } from '../../../src/core/vocabulary/caller.js';
import { defaultQuoteSettings } from '../../../src/core/settings.js';
import { makeChainConfig } from '../../helpers/chainConfig.js';

const usd = (value: bigint): UsdPrice => ({ answer: value * 10n ** 8n, decimals: 8, updatedAt: 0 });
const eth = currencyConfig({ id: 'eth', symbol: 'ETH', name: 'Ether', address: zeroAddress, decimals: 18 });
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
const mnr = currencyConfig({
  id: 'mnr',
  symbol: 'MNR',
  name: 'Minor',
  address: '0x00000000000000000000000000000000000000c3',
  decimals: 18,
});
const origin = makeChainConfig(1);
const destination = makeChainConfig(2);
const user = '0x00000000000000000000000000000000000000aa' as Address;
const anonymous: Caller = { apiKey: null };
const sponsor: Caller = {
  apiKey: { id: 'k', sponsorshipEnabled: true, revenueShareEligible: true, fastFillLimitUsdMicros: null },
};

/** Execution fee fixed at USD 0.02 + 100,000 gas at 1 gwei with ETH at 3000 = USD 0.32. */
const market = (priceIn: UsdPrice, priceOut: UsdPrice): MarketSnapshot => ({
  priceIn,
  priceOut,
  destinationNativePrice: usd(3000n),
  destinationGasPrice: 1_000_000_000n,
  fillGasUnits: 100_000n,
  fillL1FeeWei: 0n,
});

function route(
  currencyIn = usdc,
  currencyOut = usdc,
  routeClass: ResolvedRoute['routeClass'] = 'bridge',
  slippageBps = 0,
): ResolvedRoute {
  return {
    origin,
    destination,
    currencyIn,
    currencyOut,
    user,
    recipient: user,
    refundTo: user,
    operation: routeClass === 'bridge' ? 'bridge' : 'swap',
    routeClass,
    sameAsset: routeClass === 'bridge',
    sameChain: false,
    calls: [],
    slippageBps,
  };
}

const price = (overrides: Partial<PricingParameters> & Pick<PricingParameters, 'params'>) =>
  priceRoute({
    route: route(),
    market: market(usd(1n), usd(1n)),
    settings: defaultQuoteSettings,
    caller: anonymous,
    trailingVolumeUsdMicros: 0n,
    ...overrides,
  });

describe('priceRoute', () => {
  it('EXACT_INPUT bridge: output = input - execution fee (USD 0.32 = 320000 USDC units), no other fee', () => {
    const pricing = price({ params: { amount: 100_000_000n, tradeType: 'EXACT_INPUT' } });
    expect(pricing.fees.execution).toBe(320_000n);
    expect(pricing.fees.executionParts).toEqual({
      flatMicros: 20_000n,
      destinationGasMicros: 300_000n,
      originGasMicros: 0n,
      gasTopupMicros: 0n,
      gasUnits: 100_000n,
      gasPriceWei: 1_000_000_000n,
      l1FeeWei: 0n,
    });
    expect([pricing.fees.swap, pricing.fees.platform, pricing.fees.app]).toEqual([0n, 0n, 0n]);
    expect(pricing.amountIn).toBe(100_000_000n);
    expect(pricing.amountOut).toBe(99_680_000n);
    expect(pricing.minimumAmountOut).toBe(99_680_000n);
  });

  it('gas top-up: USD 2 of ETH at 3000 (rounded down) charged in the execution fee with its call gas', () => {
    const pricing = price({
      route: { ...route(), gasTopupUsdMicros: 2_000_000n },
      params: { amount: 100_000_000n, tradeType: 'EXACT_INPUT' },
    });
    // 2 / 3000 ETH = 666,666,666,666,666.67 wei, rounded down.
    expect(pricing.gasTopup).toEqual({ amount: 666_666_666_666_666n, usdMicros: 2_000_000n });
    // USD 0.02 + 140,000 gas at 1 gwei (USD 0.42) + USD 2.
    expect(pricing.fees.execution).toBe(2_440_000n);
    expect(pricing.fees.executionParts).toMatchObject({ gasTopupMicros: 2_000_000n, gasUnits: 140_000n });
    expect(pricing.usd.execution).toBe(2_440_000n);
    expect(pricing.amountOut).toBe(97_560_000n);
    expect(price({ params: { amount: 100_000_000n, tradeType: 'EXACT_INPUT' } }).gasTopup).toBeNull();
  });

  it("OP-stack destination: the fill's L1 data fee is part of the execution fee (USD 0.30 more for 1e14 wei)", () => {
    const pricing = price({
      params: { amount: 100_000_000n, tradeType: 'EXACT_INPUT' },
      market: { ...market(usd(1n), usd(1n)), fillL1FeeWei: 100_000_000_000_000n },
    });
    expect(pricing.fees.execution).toBe(620_000n);
    expect(pricing.fees.executionParts).toMatchObject({
      destinationGasMicros: 600_000n,
      l1FeeWei: 100_000_000_000_000n,
    });
    expect(pricing.amountOut).toBe(99_380_000n);
  });

  it('EXACT_OUTPUT and EXPECTED_OUTPUT find the smallest input that delivers the amount', () => {
    for (const tradeType of ['EXACT_OUTPUT', 'EXPECTED_OUTPUT'] as const) {
      const pricing = price({
        route: route(usdc, usdt, 'stablecoin', 50),
        params: { amount: 50_000_000n, tradeType, appFees: [{ recipient: user, fee: '100' }] },
      });
      expect(pricing.amountOut).toBe(50_000_000n);
      const fees = pricing.fees.userPays;
      expect(pricing.amountIn - fees).toBeGreaterThanOrEqual(50_000_000n);
      // One unit less would not be enough: fees at amountIn - 1 leave less than the output.
      const smaller = price({
        route: route(usdc, usdt, 'stablecoin', 50),
        params: { amount: pricing.amountIn - 1n, tradeType: 'EXACT_INPUT', appFees: [{ recipient: user, fee: '100' }] },
      });
      expect(smaller.amountOut).toBeLessThan(50_000_000n);
      expect(pricing.minimumAmountOut).toBe(
        tradeType === 'EXACT_OUTPUT' ? 50_000_000n : (50_000_000n * 9_950n) / 10_000n,
      );
    }
  });

  it('swap at oracle prices with the platform and swap fees of the route class, rounded up', () => {
    // 1 ETH at 3000 -> USDC, major class: platform 6 bps, swap 5 bps of the input.
    const pricing = price({
      route: route(eth, usdc, 'major'),
      market: market(usd(3000n), usd(1n)),
      params: { amount: 10n ** 18n, tradeType: 'EXACT_INPUT' },
    });
    expect(pricing.fees.platform).toBe(600_000_000_000_000n);
    expect(pricing.fees.swap).toBe(500_000_000_000_000n);
    // USD 0.32 of ETH at 3000, rounded up to the wei.
    expect(pricing.fees.execution).toBe(106_666_666_666_667n);
    const net = 10n ** 18n - 600_000_000_000_000n - 500_000_000_000_000n - 106_666_666_666_667n;
    expect(pricing.amountOut).toBe((net * 3000n) / 10n ** 12n);
    expect(pricing.usd).toMatchObject({
      in: 3_000_000_000n,
      platform: 1_800_000n,
      swap: 1_500_000n,
      execution: 320_000n,
    });
  });

  it('minor swaps pay 0.15% platform fee and the minor swap fee', () => {
    const pricing = price({
      route: route(mnr, usdc, 'minor'),
      market: market({ answer: 50_000_000n, decimals: 8, updatedAt: 0 }, usd(1n)),
      params: { amount: 1_000n * 10n ** 18n, tradeType: 'EXACT_INPUT' },
    });
    expect(pricing.fees.platformBps).toBe(15);
    expect(pricing.fees.platform).toBe(1_500_000_000_000_000_000n);
    expect(pricing.fees.swap).toBe((1_000n * 10n ** 18n * BigInt(defaultQuoteSettings.swapFeeBps.minor)) / 10_000n);
  });

  it('app fees are on top, per recipient, rounded down', () => {
    const second = '0x00000000000000000000000000000000000000bb';
    const pricing = price({
      params: {
        amount: 100_000_001n,
        tradeType: 'EXACT_INPUT',
        appFees: [
          { recipient: user, fee: '100' },
          { recipient: second, fee: '25' },
        ],
      },
    });
    expect(pricing.fees.appFees.map((fee) => fee.amount)).toEqual([1_000_000n, 250_000n]);
    expect(pricing.amountOut).toBe(100_000_001n - 320_000n - 1_250_000n);
  });

  it('sponsorship: selected components are paid by the sponsor, so the user receives more', () => {
    const params = {
      amount: 100_000_000n,
      tradeType: 'EXACT_INPUT' as const,
      appFees: [{ recipient: user, fee: '50' }],
    };
    // Every component but the app fee, which the user always pays.
    const all = price({ caller: sponsor, params: { ...params, subsidizeFees: true } });
    expect(all.fees.sponsored).toBe(320_000n);
    expect(all.amountOut).toBe(100_000_000n - 500_000n);
    const execution = price({
      caller: sponsor,
      params: { ...params, subsidizeFees: true, sponsoredFeeComponents: ['execution'] },
    });
    expect(execution.fees.sponsored).toBe(320_000n);
    expect(execution.amountOut).toBe(100_000_000n - 500_000n);
    expect(() =>
      price({
        caller: sponsor,
        params: { ...params, subsidizeFees: true, sponsoredFeeComponents: ['execution', 'app'] },
      }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', data: 'sponsoredFeeComponents' }));
    // A cap of USD 0.10 sponsors 100000 units of the execution fee only.
    const capped = price({
      caller: sponsor,
      params: { ...params, subsidizeFees: true, maxSubsidizationAmount: 100_000n },
    });
    expect(capped.sponsorship.capHit).toBe(true);
    expect(capped.fees.sponsored).toBe(100_000n);
  });

  it('sponsorship needs a key that has it enabled', () => {
    expect(() => price({ params: { amount: 100_000_000n, tradeType: 'EXACT_INPUT', subsidizeFees: true } })).toThrow(
      expect.objectContaining({ code: 'FORBIDDEN' }),
    );
  });

  it('revenue share of a qualifying key is computed on the platform fee', () => {
    const pricing = price({
      route: route(usdc, usdt, 'stablecoin'),
      caller: sponsor,
      trailingVolumeUsdMicros: 50_000_000n * 1_000_000n,
      params: { amount: 1_000_000_000n, tradeType: 'EXACT_INPUT' },
    });
    expect(pricing.fees.platform).toBe(100_000n);
    expect(pricing.fees.revenueShare).toEqual({ tier: 'tier1', shareBps: 3400, amount: 34_000n });
  });

  it('an input that fees use up fails AMOUNT_TOO_LOW', () => {
    const error = (() => {
      try {
        price({ params: { amount: 320_000n, tradeType: 'EXACT_INPUT' } });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('AMOUNT_TOO_LOW');
  });

  it('same asset with different decimals converts 1:1 by scaling', () => {
    const usdc18 = { ...usdc, decimals: 18 };
    const pricing = price({ route: route(usdc, usdc18), params: { amount: 10_000_000n, tradeType: 'EXACT_INPUT' } });
    expect(pricing.amountOut).toBe((10_000_000n - 320_000n) * 10n ** 12n);
  });
});
