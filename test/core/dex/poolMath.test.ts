/**
 * The pool math against values the Uniswap contracts' own test suites assert (TickMath, SwapMath), v2 amounts worked
 * by hand, and the swap loop on a pool built in memory: within one range it is one swap step, across a position's
 * edge it changes liquidity, and past the loaded window it answers "insufficient state". The comparison with the
 * deployed contracts, amount for amount, is test/chain/dex/exactness.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { DexMathError, Q96 } from '../../../src/core/dex/fullMath.js';
import { PoolShortfallError, type V3PoolState } from '../../../src/core/dex/poolState.js';
import { computeSwapStep } from '../../../src/core/dex/swapMath.js';
import {
  getSqrtRatioAtTick,
  getTickAtSqrtRatio,
  MAX_SQRT_RATIO,
  MAX_TICK,
  MIN_SQRT_RATIO,
  MIN_TICK,
} from '../../../src/core/dex/tickMath.js';
import { getAmountIn, getAmountOut } from '../../../src/core/dex/v2Math.js';
import { compress, simulateV3Swap, wordOf } from '../../../src/core/dex/v3Swap.js';

describe('TickMath', () => {
  it('gives the contract constants at the ends and 2^96 at tick 0', () => {
    expect(getSqrtRatioAtTick(MIN_TICK)).toBe(MIN_SQRT_RATIO);
    expect(getSqrtRatioAtTick(MIN_TICK + 1)).toBe(4295343490n);
    expect(getSqrtRatioAtTick(MAX_TICK - 1)).toBe(1461373636630004318706518188784493106690254656249n);
    expect(getSqrtRatioAtTick(MAX_TICK)).toBe(MAX_SQRT_RATIO);
    expect(getSqrtRatioAtTick(0)).toBe(Q96);
    expect(() => getSqrtRatioAtTick(MAX_TICK + 1)).toThrow(DexMathError);
  });

  it('inverts getSqrtRatioAtTick: the greatest tick at or below a price', () => {
    expect(getTickAtSqrtRatio(MIN_SQRT_RATIO)).toBe(MIN_TICK);
    expect(getTickAtSqrtRatio(MAX_SQRT_RATIO - 1n)).toBe(MAX_TICK - 1);
    expect(() => getTickAtSqrtRatio(MAX_SQRT_RATIO)).toThrow(DexMathError);
    for (let tick = -887271; tick < MAX_TICK; tick += 7919) {
      const price = getSqrtRatioAtTick(tick);
      expect(getTickAtSqrtRatio(price)).toBe(tick);
      expect(getTickAtSqrtRatio(price - 1n)).toBe(tick - 1);
      expect(getTickAtSqrtRatio(price + 1n)).toBe(tick);
    }
  });
});

describe('SwapMath.computeSwapStep (cases of the contract suite)', () => {
  it.each([
    {
      name: 'amount out capped at the desired amount out',
      args: [
        417332158212080721273783715441582n,
        1452870262520218020823638996n,
        159344665391607089467575320103n,
        -1n,
        1n,
      ],
      expected: { amountIn: 1n, feeAmount: 1n, amountOut: 1n, sqrtRatioNextX96: 417332158212080721273783715441581n },
    },
    {
      name: 'target price of 1 uses partial input amount',
      args: [2n, 1n, 1n, 3915081100057732413702495386755767n, 1n],
      expected: {
        amountIn: 39614081257132168796771975168n,
        feeAmount: 39614120871253040049813n,
        amountOut: 0n,
        sqrtRatioNextX96: 1n,
      },
    },
    {
      name: 'entire input amount taken as fee',
      args: [2413n, 79887613182836312n, 1985041575832132834610021537970n, 10n, 1872n],
      expected: { amountIn: 0n, feeAmount: 10n, amountOut: 0n, sqrtRatioNextX96: 2413n },
    },
    {
      name: 'intermediate insufficient liquidity, zero for one, exact output',
      args: [20282409603651670423947251286016n, (20282409603651670423947251286016n * 11n) / 10n, 1024n, -4n, 3000n],
      expected: {
        amountIn: 26215n,
        feeAmount: 79n,
        amountOut: 0n,
        sqrtRatioNextX96: (20282409603651670423947251286016n * 11n) / 10n,
      },
    },
    {
      name: 'intermediate insufficient liquidity, one for zero, exact output',
      args: [20282409603651670423947251286016n, (20282409603651670423947251286016n * 9n) / 10n, 1024n, -263000n, 3000n],
      expected: {
        amountIn: 1n,
        feeAmount: 1n,
        amountOut: 26214n,
        sqrtRatioNextX96: (20282409603651670423947251286016n * 9n) / 10n,
      },
    },
  ] as const)('$name', ({ args, expected }) => {
    const [current, target, liquidity, remaining, fee] = args;
    expect(computeSwapStep(current, target, liquidity, remaining, fee)).toEqual(expected);
  });
});

describe('v2 getAmountOut / getAmountIn', () => {
  it('floors the output and rounds the input up by one, with the 0.3% fee as 997/1000', () => {
    // 997,000 × 10^6 / (10^9 + 997,000) = 996.0…
    expect(getAmountOut(1000n, 1_000_000n, 1_000_000n)).toBe(996n);
    // 10^6 × 996 × 1000 / ((10^6 − 996) × 997) = 999.99… → 999, + 1
    expect(getAmountIn(996n, 1_000_000n, 1_000_000n)).toBe(1000n);
    expect(() => getAmountOut(0n, 1n, 1n)).toThrow(DexMathError);
    expect(() => getAmountIn(1_000_000n, 1_000_000n, 1_000_000n)).toThrow(DexMathError);
  });
});

const POOL: Address = '0x00000000000000000000000000000000000000aa';

/** A pool at tick 0 with one position of `liquidity` over [−600, 600], spacing 60, `words` loaded each side. */
function onePositionPool(liquidity: bigint, words: number): V3PoolState {
  const bitmap = new Map<number, bigint>();
  const setBit = (tick: number) => {
    const compressed = compress(tick, 60);
    const word = wordOf(compressed);
    bitmap.set(word, (bitmap.get(word) ?? 0n) | (1n << BigInt(compressed & 255)));
  };
  setBit(-600);
  setBit(600);
  return {
    source: 'uniswap-v3',
    address: POOL,
    token0: '0x0000000000000000000000000000000000000001',
    token1: '0x0000000000000000000000000000000000000002',
    fee: 3000,
    tickSpacing: 60,
    sqrtPriceX96: Q96,
    tick: 0,
    liquidity,
    minWord: -words,
    maxWord: words - 1,
    bitmap,
    liquidityNet: new Map([
      [-600, liquidity],
      [600, -liquidity],
    ]),
  };
}

describe('the v3 swap loop', () => {
  const liquidity = 10n ** 21n;

  it('within one range is one swap step', () => {
    const pool = onePositionPool(liquidity, 1);
    const result = simulateV3Swap(pool, { zeroForOne: true, amountSpecified: 10n ** 18n });
    const step = computeSwapStep(Q96, getSqrtRatioAtTick(-600), liquidity, 10n ** 18n, 3000n);
    expect(result).toMatchObject({
      amountIn: 10n ** 18n,
      amountOut: step.amountOut,
      sqrtPriceX96After: step.sqrtRatioNextX96,
      tickAfter: getTickAtSqrtRatio(step.sqrtRatioNextX96),
      ticksCrossed: 0,
      complete: true,
    });
  });

  it('crosses the position edge and drains its liquidity: the rest of the range is empty, the price reaches its limit', () => {
    const pool = onePositionPool(liquidity, 3500);
    const result = simulateV3Swap(pool, { zeroForOne: false, amountSpecified: 10n ** 24n });
    const inRange = computeSwapStep(Q96, getSqrtRatioAtTick(600), liquidity, 10n ** 24n, 3000n);
    expect(result.ticksCrossed).toBe(1);
    expect(result.liquidityAfter).toBe(0n);
    expect(result.complete).toBe(false);
    expect(result.amountOut).toBe(inRange.amountOut);
    expect(result.amountIn).toBe(inRange.amountIn + inRange.feeAmount);
    expect(result.sqrtPriceX96After).toBe(MAX_SQRT_RATIO - 1n);
  });

  it('exact output buys exactly the amount', () => {
    const pool = onePositionPool(liquidity, 1);
    const result = simulateV3Swap(pool, { zeroForOne: true, amountSpecified: -(10n ** 18n) });
    expect(result.amountOut).toBe(10n ** 18n);
    const back = simulateV3Swap(pool, { zeroForOne: true, amountSpecified: result.amountIn });
    expect(back.amountOut).toBeGreaterThanOrEqual(10n ** 18n);
  });

  it('answers "insufficient state" when the swap walks past the loaded words', () => {
    const pool = onePositionPool(liquidity, 1);
    const error = (() => {
      try {
        simulateV3Swap(pool, { zeroForOne: true, amountSpecified: 10n ** 24n });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(PoolShortfallError);
    expect((error as PoolShortfallError).shortfall).toBe('insufficient-state');
  });
});
