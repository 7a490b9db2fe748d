/**
 * `npx tsx bench/dexMath.ts`: the time of one DEX quote from memory. Prices random amounts through pools shaped like
 * the devnet's, built in memory (`dexPools.ts`): a single v3 pool, a v2 pair, a full route search (direct and
 * through WETH and USDC, every source), and a two-hop v3 route; prints p50 / p99 in µs (on a shared machine, the rare
 * quote preempted by another process makes any higher quantile noise) and the share of
 * quotes that crossed initialized ticks. No chain: this measures the math and the route search alone.
 *
 *   npx tsx bench/dexMath.ts [--quotes 20000]
 */
import { parseArgs } from 'node:util';
import { machineDescription, positiveInteger, runBench } from './cli.js';
import { devnetShapedPools, TOKENS } from './dexPools.js';
import type { PoolState } from '../src/core/dex/poolState.js';
import { swapExactIn } from '../src/core/dex/poolSwap.js';
import { indexPools, quoteExactIn } from '../src/core/dex/route.js';

const USAGE = 'usage: npx tsx bench/dexMath.ts [--quotes 20000]';

/** A small seeded generator (mulberry32), so runs are comparable. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Amounts from 10^-4 to 10^2 whole tokens (18 decimals), log-uniform. */
function amounts(count: number, next: () => number): bigint[] {
  return Array.from({ length: count }, () => BigInt(Math.floor(10 ** (14 + next() * 6))));
}

function summary(name: string, nanos: bigint[], crossed: number): string {
  const sorted = [...nanos].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const at = (q: number) => Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!) / 1000;
  const share = ((100 * crossed) / sorted.length).toFixed(0);
  return `${name.padEnd(34)} p50 ${at(0.5).toFixed(1).padStart(6)} µs  p99 ${at(0.99).toFixed(1).padStart(6)} µs  crossed ticks ${share.padStart(3)}%`;
}

function measure(count: number, run: (amount: bigint) => number): { nanos: bigint[]; crossed: number } {
  const list = amounts(count, random(42));
  for (const amount of list.slice(0, 1000)) run(amount); // warm-up
  const nanos: bigint[] = [];
  let crossed = 0;
  for (const amount of list) {
    const start = process.hrtime.bigint();
    const ticks = run(amount);
    nanos.push(process.hrtime.bigint() - start);
    if (ticks > 0) crossed++;
  }
  return { nanos, crossed };
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { quotes: { type: 'string', default: '20000' } } });
  const count = positiveInteger('--quotes', values.quotes);
  const pools = devnetShapedPools();
  const state = indexPools(31337, 1n, pools);
  const pool = (address: string): PoolState => pools.find((p) => p.address === address)!;
  const routers = {
    'uniswap-v3': '0x00000000000000000000000000000000000000c3',
    'uniswap-v2': '0x00000000000000000000000000000000000000c2',
  } as const;
  const hubs = [TOKENS.weth, TOKENS.usdc];
  const swap = (p: PoolState, tokenIn: `0x${string}`) => (amount: bigint) => {
    try {
      return swapExactIn(p, tokenIn, amount).ticksCrossed;
    } catch {
      return 0;
    }
  };
  const route = (tokenIn: `0x${string}`, tokenOut: `0x${string}`, scale: bigint) => (amount: bigint) => {
    const quote = quoteExactIn(state, { tokenIn, tokenOut, amountIn: amount / scale, hubs, routers });
    return quote.ok ? quote.route.hops.reduce((n, hop) => n + hop.ticksCrossed, 0) : 0;
  };

  console.log(`DEX quote from memory, ${count} random amounts each (${machineDescription()})`);
  const cases: [string, (amount: bigint) => number][] = [
    ['v3 pool, WETH → MNR (0.3%)', swap(pool('0x00000000000000000000000000000000000000a2'), TOKENS.weth)],
    ['v3 pool, WETH → USDC (0.05%)', swap(pool('0x00000000000000000000000000000000000000a1'), TOKENS.weth)],
    ['v2 pair, WETH → LONG', swap(pool('0x00000000000000000000000000000000000000b1'), TOKENS.weth)],
    ['route search, WETH → LONG', route(TOKENS.weth, TOKENS.long, 1n)],
    ['route search, USDC → MNR (2 hops)', route(TOKENS.usdc, TOKENS.mnr, 10n ** 9n)],
    ['route search, MNR → LONG (2 hops)', route(TOKENS.mnr, TOKENS.long, 1n)],
  ];
  for (const [name, run] of cases) {
    const { nanos, crossed } = measure(count, run);
    console.log(summary(name, nanos, crossed));
  }
  return 0;
}

runBench(main, USAGE);
