import { describe, expect, it } from 'vitest';
import { platformFee, platformFeeBps } from '../../../src/core/fees/index.js';
import type { RouteClass } from '../../../src/core/vocabulary/route.js';

describe('platformFeeBps', () => {
  it.each<[RouteClass, number]>([
    ['bridge', 0],
    ['stablecoin', 1],
    ['major', 6],
    ['minor', 15],
  ])('%s -> %i bps', (routeClass, bps) => {
    expect(platformFeeBps(routeClass)).toBe(bps);
  });
});

describe('platformFee', () => {
  it.each<[string, bigint, RouteClass, bigint]>([
    ['bridge is free', 1_000_000_000n, 'bridge', 0n],
    ['bridge of 1 unit is free', 1n, 'bridge', 0n],
    ['stablecoin, exact: 1000 USDC', 1_000_000_000n, 'stablecoin', 100_000n],
    ['major, exact: 1 ETH', 10n ** 18n, 'major', 6n * 10n ** 14n],
    ['minor, exact: 10000 units', 10_000n, 'minor', 15n],
    ['zero amount', 0n, 'minor', 0n],
    ['stablecoin rounds up a fraction: 1 unit', 1n, 'stablecoin', 1n],
    ['stablecoin rounds up: 10001 units', 10_001n, 'stablecoin', 2n],
    ['major rounds up: 1667 units (1.0002)', 1_667n, 'major', 2n],
    ['minor rounds up: 667 units (1.0005)', 667n, 'minor', 2n],
    ['minor just below a whole unit: 666 units (0.999)', 666n, 'minor', 1n],
    ['very large amount stays exact', 2n ** 200n * 10_000n, 'minor', 2n ** 200n * 15n],
  ])('%s', (_name, amount, routeClass, expected) => {
    expect(platformFee(amount, routeClass)).toBe(expected);
  });

  it('rejects a negative amount with INVALID_INPUT', () => {
    expect(() => platformFee(-1n, 'minor')).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  });
});
