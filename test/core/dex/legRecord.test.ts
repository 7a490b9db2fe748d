import { describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { dexLegRecord, dexLegsOf, type DexLegRecord } from '../../../src/core/dex/legRecord.js';
import type { DexRoute } from '../../../src/core/dex/route.js';
import { jsonify } from '../../../src/core/json.js';

const a = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;

const route: DexRoute = {
  chainId: 31337,
  blockNumber: 123n,
  tokenIn: a(1),
  tokenOut: a(2),
  amountIn: 10n ** 20n,
  amountOut: 5n * 10n ** 16n,
  gasEstimate: 120_000n,
  netAmountOut: 5n * 10n ** 16n,
  midAmountOut: 6n * 10n ** 16n,
  priceImpactBps: 120n,
  hops: [
    {
      source: 'uniswap-v3',
      pool: a(9),
      router: a(8),
      tokenIn: a(1),
      tokenOut: a(2),
      fee: 10_000,
      amountIn: 10n ** 20n,
      amountOut: 5n * 10n ** 16n,
      ticksCrossed: 1,
    },
  ],
};

describe('DEX leg records', () => {
  it('round-trip through the stored quote JSON with amounts as decimal strings', () => {
    const leg: DexLegRecord = dexLegRecord(route, { minAmountOut: 4n * 10n ** 16n, nativeIn: false, nativeOut: true });
    expect(leg).toMatchObject({ source: 'uniswap-v3', router: a(8), routerKind: 'SwapRouter', nativeOut: true });
    const stored = jsonify({ slippageBps: 50, dex: { origin: leg } }) as Record<string, unknown>;
    const origin = (stored.dex as Record<string, Record<string, unknown>>).origin!;
    expect(origin.amountIn).toBe('100000000000000000000');
    expect(origin.minAmountOut).toBe('40000000000000000');
    expect(dexLegsOf(JSON.parse(JSON.stringify(stored)) as Record<string, unknown>)).toEqual({ origin: leg });
  });

  it('reads no leg from a quote without one, or a malformed one', () => {
    expect(dexLegsOf({ slippageBps: 0 })).toEqual({});
    expect(dexLegsOf({ dex: { origin: { amountIn: 5 } } })).toEqual({});
    expect(dexLegsOf(undefined)).toEqual({});
  });
});
