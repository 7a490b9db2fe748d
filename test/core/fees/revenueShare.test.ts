import { describe, expect, it } from 'vitest';
import { revenueShare, type RevenueShareReturnType } from '../../../src/core/fees/index.js';
import type { RouteClass } from '../../../src/core/vocabulary/route.js';

const USD = 1_000_000n;
const M = 1_000_000n * USD;
const FEE = 1_000_000n;

describe('revenueShare', () => {
  it.each<[string, RouteClass, bigint, boolean, bigint, RevenueShareReturnType]>([
    ['unqualified with high volume', 'major', 500n * M, false, FEE, { tier: null, shareBps: 0, amount: 0n }],
    ['no volume', 'major', 0n, true, FEE, { tier: null, shareBps: 0, amount: 0n }],
    ['exactly 10M does not qualify', 'major', 10n * M, true, FEE, { tier: null, shareBps: 0, amount: 0n }],
    [
      '10M + 1 micro-USD: tier1 major 25%',
      'major',
      10n * M + 1n,
      true,
      FEE,
      { tier: 'tier1', shareBps: 2500, amount: 250_000n },
    ],
    ['tier1 bridge 0%', 'bridge', 50n * M, true, FEE, { tier: 'tier1', shareBps: 0, amount: 0n }],
    ['tier1 stablecoin 34%', 'stablecoin', 50n * M, true, FEE, { tier: 'tier1', shareBps: 3400, amount: 340_000n }],
    ['tier1 minor 33.33%', 'minor', 50n * M, true, FEE, { tier: 'tier1', shareBps: 3333, amount: 333_300n }],
    [
      'exactly 100M stays tier1',
      'stablecoin',
      100n * M,
      true,
      FEE,
      { tier: 'tier1', shareBps: 3400, amount: 340_000n },
    ],
    [
      '100M + 1 micro-USD: tier2 stablecoin 67%',
      'stablecoin',
      100n * M + 1n,
      true,
      FEE,
      { tier: 'tier2', shareBps: 6700, amount: 670_000n },
    ],
    ['tier2 bridge 0%', 'bridge', 500n * M, true, FEE, { tier: 'tier2', shareBps: 0, amount: 0n }],
    ['tier2 major 50%', 'major', 500n * M, true, FEE, { tier: 'tier2', shareBps: 5000, amount: 500_000n }],
    ['tier2 minor 66.67%', 'minor', 500n * M, true, FEE, { tier: 'tier2', shareBps: 6667, amount: 666_700n }],
    ['exactly 1B is tier2', 'minor', 1_000n * M, true, FEE, { tier: 'tier2', shareBps: 6667, amount: 666_700n }],
    ['above 1B stays tier2', 'major', 1_000n * M + 1n, true, FEE, { tier: 'tier2', shareBps: 5000, amount: 500_000n }],
    [
      'amount rounds down: 33.33% of 10 units',
      'minor',
      50n * M,
      true,
      10n,
      { tier: 'tier1', shareBps: 3333, amount: 3n },
    ],
    [
      'amount rounds down: 66.67% of 1 unit',
      'minor',
      500n * M,
      true,
      1n,
      { tier: 'tier2', shareBps: 6667, amount: 0n },
    ],
    ['zero fee', 'major', 500n * M, true, 0n, { tier: 'tier2', shareBps: 5000, amount: 0n }],
  ])('%s', (_name, routeClass, volume, qualified, platformFee, expected) => {
    expect(revenueShare({ routeClass, trailing30dVolumeUsdMicros: volume, qualified, platformFee })).toEqual(expected);
  });

  it.each<[string, bigint, bigint]>([
    ['a negative fee', 50n * M, -1n],
    ['a negative volume', -1n, FEE],
  ])('rejects %s with INVALID_INPUT', (_name, volume, platformFee) => {
    expect(() =>
      revenueShare({ routeClass: 'major', trailing30dVolumeUsdMicros: volume, qualified: true, platformFee }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  });
});
