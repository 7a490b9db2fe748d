/**
 * Route search over pools in memory (shaped like the devnet's): the best source per hop, the two-hop paths through
 * the hubs, source filtering, the mid price and impact, and the shortfalls ("insufficient state" when the price would
 * leave the loaded window, "no pool" when nothing trades the pair).
 */
import { describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { devnetShapedPools, TOKENS } from '../../../bench/dexPools.js';
import type { PoolState } from '../../../src/core/dex/poolState.js';
import { swapExactIn } from '../../../src/core/dex/poolSwap.js';
import { indexPools, quoteExactIn, quoteExactOut, type QuoteExactInParameters } from '../../../src/core/dex/route.js';

const pools = devnetShapedPools();
const state = indexPools(31337, 7n, pools);
const routers = {
  'uniswap-v3': '0x00000000000000000000000000000000000000c3',
  'uniswap-v2': '0x00000000000000000000000000000000000000c2',
} as const satisfies QuoteExactInParameters['routers'];
const hubs = [TOKENS.weth, TOKENS.usdc];
const E18 = 10n ** 18n;
const poolAt = (address: Address): PoolState => pools.find((p) => p.address === address)!;
const V3_LONG = '0x00000000000000000000000000000000000000a3';
const V2_LONG = '0x00000000000000000000000000000000000000b1';

const quote = (tokenIn: Address, tokenOut: Address, amountIn: bigint, extra: Partial<QuoteExactInParameters> = {}) =>
  quoteExactIn(state, { tokenIn, tokenOut, amountIn, hubs, routers, ...extra });

describe('quoteExactIn over pools in memory', () => {
  it('takes the pool that pays more for the hop, and says which source, pool and router', () => {
    const amountIn = E18 / 10n;
    const result = quote(TOKENS.weth, TOKENS.long, amountIn);
    if (!result.ok) throw new Error(result.shortfall);
    const v3 = swapExactIn(poolAt(V3_LONG), TOKENS.weth, amountIn).amountOut;
    const v2 = swapExactIn(poolAt(V2_LONG), TOKENS.weth, amountIn).amountOut;
    expect(result.route.amountOut).toBe(v3 > v2 ? v3 : v2);
    expect(result.route.hops).toHaveLength(1);
    const [hop] = result.route.hops;
    expect(hop).toMatchObject({
      source: v3 > v2 ? 'uniswap-v3' : 'uniswap-v2',
      pool: v3 > v2 ? V3_LONG : V2_LONG,
      router: v3 > v2 ? routers['uniswap-v3'] : routers['uniswap-v2'],
      amountIn,
    });
    expect(result.route.blockNumber).toBe(7n);
  });

  it('honours the sources it is given', () => {
    const v2Only = quote(TOKENS.weth, TOKENS.long, E18, { sources: ['uniswap-v2'] });
    const v3Only = quote(TOKENS.weth, TOKENS.long, E18, { sources: ['uniswap-v3'] });
    if (!v2Only.ok || !v3Only.ok) throw new Error('no route');
    expect(v2Only.route.hops.map((h) => h.source)).toEqual(['uniswap-v2']);
    expect(v2Only.route.amountOut).toBe(swapExactIn(poolAt(V2_LONG), TOKENS.weth, E18).amountOut);
    expect(v3Only.route.hops.map((h) => h.source)).toEqual(['uniswap-v3']);
    expect(v3Only.route.amountOut).toBe(swapExactIn(poolAt(V3_LONG), TOKENS.weth, E18).amountOut);
  });

  it('routes a pair without a pool through a hub, hop after hop', () => {
    const amountIn = 1000n * 10n ** 6n;
    const result = quote(TOKENS.usdc, TOKENS.mnr, amountIn);
    if (!result.ok) throw new Error(result.shortfall);
    const { hops } = result.route;
    expect(hops.map((h) => [h.tokenIn, h.tokenOut])).toEqual([
      [TOKENS.usdc, TOKENS.weth],
      [TOKENS.weth, TOKENS.mnr],
    ]);
    expect(hops[1]!.amountIn).toBe(hops[0]!.amountOut);
    const weth = swapExactIn(poolAt('0x00000000000000000000000000000000000000a1'), TOKENS.usdc, amountIn).amountOut;
    const mnr = swapExactIn(poolAt('0x00000000000000000000000000000000000000a2'), TOKENS.weth, weth).amountOut;
    expect(result.route.amountOut).toBe(mnr);
  });

  it('measures impact against the mid price: about the fees for a small amount, more for a large one', () => {
    const small = quote(TOKENS.weth, TOKENS.mnr, E18 / 1000n);
    const large = quote(TOKENS.weth, TOKENS.mnr, 30n * E18);
    if (!small.ok || !large.ok) throw new Error('no route');
    // 1,500 MNR per WETH at the mid price.
    expect(small.route.midAmountOut).toBeGreaterThan(1499n * 10n ** 15n);
    expect(small.route.midAmountOut).toBeLessThan(1501n * 10n ** 15n);
    expect(small.route.priceImpactBps).toBe(30n);
    expect(large.route.priceImpactBps).toBeGreaterThan(100n);
    expect(large.route.hops[0]!.ticksCrossed).toBeGreaterThan(0);
  });

  it('compares routes net of gas when told what gas costs', () => {
    const amountIn = E18 / 100n;
    const gross = quote(TOKENS.weth, TOKENS.long, amountIn);
    const net = quote(TOKENS.weth, TOKENS.long, amountIn, { costOfGas: (gas) => gas * 10n ** 12n });
    if (!gross.ok || !net.ok) throw new Error('no route');
    expect(net.route.netAmountOut).toBe(net.route.amountOut - net.route.gasEstimate * 10n ** 12n);
    expect(net.route.netAmountOut).toBeLessThanOrEqual(gross.route.amountOut);
  });

  it('says "insufficient state" rather than price past the loaded ticks, and "no pool" for an unknown pair', () => {
    const huge = quote(TOKENS.mnr, TOKENS.usdc, 10n ** 30n, { sources: ['uniswap-v3'] });
    expect(huge).toMatchObject({ ok: false, shortfall: 'insufficient-state' });
    const unknown = quote('0x00000000000000000000000000000000000000ff', TOKENS.usdc, E18);
    expect(unknown).toMatchObject({ ok: false, shortfall: 'no-pool' });
  });

  it('buys an exact output for the least input, hops priced from the last', () => {
    const amountOut = 500n * 10n ** 18n;
    const result = quoteExactOut(state, { tokenIn: TOKENS.usdc, tokenOut: TOKENS.mnr, amountOut, hubs, routers });
    if (!result.ok) throw new Error(result.shortfall);
    const { hops, amountIn } = result.route;
    expect(result.route.amountOut).toBe(amountOut);
    expect(hops[1]!.amountOut).toBe(amountOut);
    expect(hops[0]!.amountOut).toBe(hops[1]!.amountIn);
    expect(hops[0]!.amountIn).toBe(amountIn);
    // Selling that input buys at least the output; one unit less of it buys less.
    const forward = quoteExactIn(state, { tokenIn: TOKENS.usdc, tokenOut: TOKENS.mnr, amountIn, hubs, routers });
    if (!forward.ok) throw new Error(forward.shortfall);
    expect(forward.route.amountOut).toBeGreaterThanOrEqual(amountOut);
    const v2 = quoteExactOut(state, {
      tokenIn: TOKENS.weth,
      tokenOut: TOKENS.long,
      amountOut: 10n ** 18n,
      hubs,
      routers,
      sources: ['uniswap-v2'],
    });
    if (!v2.ok) throw new Error(v2.shortfall);
    expect(swapExactIn(poolAt(V2_LONG), TOKENS.weth, v2.route.amountIn).amountOut).toBeGreaterThanOrEqual(10n ** 18n);
    expect(swapExactIn(poolAt(V2_LONG), TOKENS.weth, v2.route.amountIn - 1n).amountOut).toBeLessThan(10n ** 18n);
  });
});
