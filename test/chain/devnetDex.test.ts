/**
 * The devnet's Uniswap liquidity, on real anvil chains: the v3 and v2 contracts are there with code (from the npm
 * artifacts, whose init-code hashes match what the periphery hardcodes), each pool's price is the oracle's to the
 * wei of `sqrtPriceX96`, `QuoterV2` and Router02's `getAmountsOut` answer within 1 % of the oracle, the MNR pool is
 * shallow (500 ETH moves it by double digits) and the deep pools cross initialized ticks on large swaps.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, keccak256, parseUnits, type Address, type PublicClient } from 'viem';
import { startDevnet, type Devnet, type DevnetChain } from '../../src/chain/devnet.js';
import { DEVNET_LONG_PER_WETH, sqrt, sqrtPriceX96Of } from '../../src/chain/devnetDex.js';
import {
  UNISWAP_V2_PAIR_INIT_CODE_HASH,
  UNISWAP_V3_POOL_INIT_CODE_HASH,
  uniswapArtifacts,
  uniswapV2FactoryAbi,
  uniswapV2RouterAbi,
  uniswapV3FactoryAbi,
  uniswapV3PoolAbi,
  uniswapV3QuoterV2Abi,
} from '../../src/chain/uniswapArtifacts.js';

let devnet: Devnet;
beforeAll(async () => {
  devnet = await startDevnet({ chains: [31337, 31338], accountCount: 1 });
});
afterAll(async () => {
  await devnet?.stop();
});

/** Whole-token value of each token in units of 1/1000 of a LONG (LONG has no feed: its v3 pool's price). */
const VALUE: Record<string, bigint> = {
  WETH: 3_000n * 10n ** 8n,
  USDC: 10n ** 8n,
  USDT: 10n ** 8n,
  MNR: 5n * 10n ** 7n,
  LONG: (3_000n * 10n ** 8n) / DEVNET_LONG_PER_WETH.v3,
};

function tokenOf(chain: DevnetChain, address: Address) {
  return [...chain.tokens, ...chain.longTailTokens].find((token) => token.address === address)!;
}

/** What `amountIn` of `tokenIn` is worth in `tokenOut` at the reference prices (`VALUE`, or `longPerWeth` for LONG). */
function atReference(chain: DevnetChain, tokenIn: Address, tokenOut: Address, amountIn: bigint, longPerWeth?: bigint) {
  const a = tokenOf(chain, tokenIn);
  const b = tokenOf(chain, tokenOut);
  const value = (symbol: string) =>
    symbol === 'LONG' && longPerWeth !== undefined ? VALUE.WETH! / longPerWeth : VALUE[symbol]!;
  // LONG's value is rounded to a whole unit above: use the exact ratio for the WETH/LONG pair.
  if (longPerWeth !== undefined && (a.symbol === 'LONG' || b.symbol === 'LONG')) {
    return a.symbol === 'WETH'
      ? (amountIn * longPerWeth * 10n ** BigInt(b.decimals)) / 10n ** BigInt(a.decimals)
      : (amountIn * 10n ** BigInt(b.decimals)) / (longPerWeth * 10n ** BigInt(a.decimals));
  }
  return (amountIn * value(a.symbol) * 10n ** BigInt(b.decimals)) / (value(b.symbol) * 10n ** BigInt(a.decimals));
}

/** `actual` within `bps` of `expected`. */
function expectWithinBps(actual: bigint, expected: bigint, bps: bigint) {
  const distance = actual > expected ? actual - expected : expected - actual;
  expect(distance * 10_000n, `${actual} vs ${expected}`).toBeLessThanOrEqual(expected * bps);
}

const client = (chain: DevnetChain): PublicClient => createPublicClient({ transport: http(chain.rpcUrl) });

async function quoteV3(chain: DevnetChain, tokenIn: Address, tokenOut: Address, fee: number, amountIn: bigint) {
  const { result } = await client(chain).simulateContract({
    address: chain.dex.uniswapV3.quoterV2,
    abi: uniswapV3QuoterV2Abi,
    functionName: 'quoteExactInputSingle',
    args: [{ tokenIn, tokenOut, amountIn, fee, sqrtPriceLimitX96: 0n }],
  });
  return { amountOut: result[0], ticksCrossed: result[2] };
}

describe('sqrt', () => {
  it('is the floor of the square root, exactly, for small and 256-bit values', () => {
    for (const n of [0n, 1n, 2n, 3n, 4n, 15n, 16n, 17n, 99n, 10n ** 18n, 2n ** 96n, 2n ** 128n - 1n]) {
      const root = sqrt(n);
      expect(root * root <= n && (root + 1n) * (root + 1n) > n, `sqrt(${n})`).toBe(true);
    }
    const big = 2n ** 255n + 12345n;
    const root = sqrt(big);
    expect(root * root <= big && (root + 1n) * (root + 1n) > big).toBe(true);
    expect(sqrtPriceX96Of(1n, 1n)).toBe(2n ** 96n);
    expect(sqrtPriceX96Of(1n, 4n)).toBe(2n ** 97n);
    expect(() => sqrt(-1n)).toThrow(RangeError);
  });
});

describe('devnet Uniswap deployment', () => {
  it('uses the published artifacts, whose pool and pair init-code hashes are the ones the periphery hardcodes', () => {
    const artifacts = uniswapArtifacts();
    expect(keccak256(artifacts.v3Pool.bytecode)).toBe(UNISWAP_V3_POOL_INIT_CODE_HASH);
    expect(keccak256(artifacts.v2Pair.bytecode)).toBe(UNISWAP_V2_PAIR_INIT_CODE_HASH);
    for (const periphery of [artifacts.swapRouter, artifacts.quoterV2, artifacts.positionManager]) {
      expect(periphery.bytecode).toContain(UNISWAP_V3_POOL_INIT_CODE_HASH.slice(2));
    }
    expect(artifacts.v2Router02.bytecode).toContain(UNISWAP_V2_PAIR_INIT_CODE_HASH.slice(2));
  });

  it('has every contract and pool with code on every chain, at the same addresses, found by the factories', async () => {
    const [first, second] = devnet.descriptor.chains;
    expect(second!.dex).toEqual(first!.dex);
    expect(second!.longTailTokens).toEqual(first!.longTailTokens);
    expect(first!.longTailTokens.map((t) => [t.id, t.symbol, t.decimals])).toEqual([['long', 'LONG', 18]]);
    expect(first!.dex.uniswapV3.pools.map((pool) => pool.fee)).toEqual([500, 100, 3_000, 10_000]);
    expect(first!.dex.uniswapV2.pools).toHaveLength(1);

    for (const chain of devnet.descriptor.chains) {
      const { uniswapV3: v3, uniswapV2: v2 } = chain.dex;
      const addresses = [
        v3.factory,
        v3.swapRouter,
        v3.quoterV2,
        v3.positionManager,
        v2.factory,
        v2.router,
        ...v3.pools.map((pool) => pool.address),
        ...v2.pools.map((pool) => pool.address),
      ];
      for (const address of addresses) {
        const code = await client(chain).getCode({ address });
        expect(code?.length ?? 0, address).toBeGreaterThan(2);
      }
      for (const pool of v3.pools) {
        expect(BigInt(pool.token0) < BigInt(pool.token1)).toBe(true);
        const found = await client(chain).readContract({
          address: v3.factory,
          abi: uniswapV3FactoryAbi,
          functionName: 'getPool',
          args: [pool.token1, pool.token0, pool.fee],
        });
        expect(found).toBe(pool.address);
      }
      for (const pool of v2.pools) {
        const found = await client(chain).readContract({
          address: v2.factory,
          abi: uniswapV2FactoryAbi,
          functionName: 'getPair',
          args: [pool.token0, pool.token1],
        });
        expect(found).toBe(pool.address);
      }
      const weth = chain.tokens.find((t) => t.id === 'weth')!.address;
      expect(
        await client(chain).readContract({ address: v2.router, abi: uniswapV2RouterAbi, functionName: 'WETH' }),
      ).toBe(weth);
    }
  });

  it('initializes each v3 pool at the oracle price exactly (LONG at its set price)', async () => {
    for (const chain of devnet.descriptor.chains) {
      for (const pool of chain.dex.uniswapV3.pools) {
        const [sqrtPriceX96] = await client(chain).readContract({
          address: pool.address,
          abi: uniswapV3PoolAbi,
          functionName: 'slot0',
        });
        const t0 = tokenOf(chain, pool.token0);
        const t1 = tokenOf(chain, pool.token1);
        // Equal-value raw amounts: one whole token0 and its worth in token1.
        const isLong = t0.symbol === 'LONG' || t1.symbol === 'LONG';
        const amount0 = 10n ** BigInt(t0.decimals) * (isLong ? 1n : VALUE[t1.symbol]!);
        const amount1 = isLong
          ? atReference(chain, pool.token0, pool.token1, 10n ** BigInt(t0.decimals), DEVNET_LONG_PER_WETH.v3)
          : 10n ** BigInt(t1.decimals) * VALUE[t0.symbol]!;
        expect(sqrtPriceX96, `${t0.symbol}/${t1.symbol}`).toBe(sqrtPriceX96Of(amount0, amount1));
      }
    }
  });

  it('QuoterV2 prices each v3 pool, both ways, within 1 % of the oracle (less the pool fee)', async () => {
    for (const chain of devnet.descriptor.chains) {
      for (const pool of chain.dex.uniswapV3.pools) {
        for (const [tokenIn, tokenOut] of [
          [pool.token0, pool.token1],
          [pool.token1, pool.token0],
        ] as const) {
          // About USD 30 in: small against every pool, so the answer is the pool's price less its fee.
          const amountIn = atReference(chain, chain.tokens.find((t) => t.id === 'usdc')!.address, tokenIn, 30_000_000n);
          const { amountOut } = await quoteV3(chain, tokenIn, tokenOut, pool.fee, amountIn);
          const reference = atReference(chain, tokenIn, tokenOut, amountIn, DEVNET_LONG_PER_WETH.v3);
          expectWithinBps((amountOut * 1_000_000n) / (1_000_000n - BigInt(pool.fee)), reference, 100n);
        }
      }
    }
  });

  it("Router02's getAmountsOut prices the v2 WETH/LONG pair at its set price, 0.5 % off the v3 pool's", async () => {
    for (const chain of devnet.descriptor.chains) {
      const pair = chain.dex.uniswapV2.pools[0]!;
      for (const [tokenIn, tokenOut] of [
        [pair.token0, pair.token1],
        [pair.token1, pair.token0],
      ] as const) {
        const amountIn = 10n ** BigInt(tokenOf(chain, tokenIn).decimals) / 100n;
        const amounts = await client(chain).readContract({
          address: chain.dex.uniswapV2.router,
          abi: uniswapV2RouterAbi,
          functionName: 'getAmountsOut',
          args: [amountIn, [tokenIn, tokenOut]],
        });
        const reference = atReference(chain, tokenIn, tokenOut, amountIn, DEVNET_LONG_PER_WETH.v2);
        expectWithinBps((amounts[1]! * 1_000n) / 997n, reference, 100n);
      }
    }
  });

  it('is shallow on WETH/MNR (500 ETH loses at least 10 %) and deep on WETH/USDC, where large swaps cross ticks', async () => {
    const chain = devnet.descriptor.chains[0]!;
    const weth = chain.tokens.find((t) => t.id === 'weth')!.address;
    const mnr = chain.tokens.find((t) => t.id === 'mnr')!.address;
    const usdc = chain.tokens.find((t) => t.id === 'usdc')!.address;
    const amountIn = parseUnits('500', 18);

    const toMnr = await quoteV3(chain, weth, mnr, 3_000, amountIn);
    const mnrAtOracle = atReference(chain, weth, mnr, amountIn);
    expect(toMnr.amountOut * 10n).toBeLessThanOrEqual(mnrAtOracle * 9n);
    expect(toMnr.ticksCrossed).toBeGreaterThan(0);

    const toUsdc = await quoteV3(chain, weth, usdc, 500, amountIn);
    expectWithinBps(toUsdc.amountOut, atReference(chain, weth, usdc, amountIn), 100n);
    expect(toUsdc.ticksCrossed).toBeGreaterThan(0);
  });
});
