/**
 * The DEX book's pool math against the deployed Uniswap contracts (the npm packages' bytecode, on the devnet), at
 * the same block, to the wei: every v3 pool against `QuoterV2.quoteExactInputSingle`, the v2 pair against Router02
 * `getAmountsOut`, two-hop v3 routes against `QuoterV2.quoteExactInput`, over random amounts from dust to twice what
 * the pool holds (so many cross initialized ticks, and some exhaust a pool). Then: a quote makes no RPC call, a
 * refresh after the pools moved is again exact, a refresh whose windows hold is one `eth_call`, a head pushed by the
 * node refreshes the book, and a window too narrow for the swap answers "insufficient state".
 */
import { describe, expect, it } from 'vitest';
import {
  createPublicClient,
  encodeFunctionData,
  encodePacked,
  decodeFunctionResult,
  erc20Abi,
  http,
  maxUint256,
  parseAbi,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { createDexBook, type DexChainConfig } from '../../../src/chain/dex/dexBook.js';
import { multicallAt, type PoolCall } from '../../../src/chain/dex/poolCalls.js';
import { readPoolStates } from '../../../src/chain/dex/readPoolStates.js';
import { createHeadFeed } from '../../../src/chain/heads.js';
import type { PoolState, V3PoolState } from '../../../src/core/dex/poolState.js';
import { swapExactIn, swapExactOut } from '../../../src/core/dex/poolSwap.js';
import { simulateV3Swap } from '../../../src/core/dex/v3Swap.js';
import { PoolShortfallError } from '../../../src/core/dex/poolState.js';
import { useDevnet } from '../../helpers/anvil.js';
import type { Logger } from '../../../src/core/logger.js';

const quoterAbi = parseAbi([
  'struct QuoteExactInputSingleParams { address tokenIn; address tokenOut; uint256 amountIn; uint24 fee; uint160 sqrtPriceLimitX96; }',
  'function quoteExactInputSingle(QuoteExactInputSingleParams params) returns (uint256 amountOut, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate)',
  'struct QuoteExactOutputSingleParams { address tokenIn; address tokenOut; uint256 amount; uint24 fee; uint160 sqrtPriceLimitX96; }',
  'function quoteExactOutputSingle(QuoteExactOutputSingleParams params) returns (uint256 amountIn, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate)',
  'function quoteExactInput(bytes path, uint256 amountIn) returns (uint256 amountOut, uint160[] sqrtPriceX96AfterList, uint32[] initializedTicksCrossedList, uint256 gasEstimate)',
]);
const routerV2Abi = parseAbi([
  'function getAmountsOut(uint256 amountIn, address[] path) view returns (uint256[] amounts)',
  'function getAmountsIn(uint256 amountOut, address[] path) view returns (uint256[] amounts)',
]);
const swapRouterAbi = parseAbi([
  'struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient; uint256 deadline; uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }',
  'function exactInputSingle(ExactInputSingleParams params) payable returns (uint256 amountOut)',
]);

/** A small seeded generator (mulberry32), so a failure reproduces. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `count` amounts log-uniform from `max` / 10^9 to `max` (at least 1). */
function randomAmounts(next: () => number, count: number, max: bigint): bigint[] {
  const scale = 10n ** 12n;
  return Array.from({ length: count }, () => {
    const fraction = BigInt(Math.floor(10 ** (12 - 9 * next()))); // 10^3 … 10^12 of 10^12
    const amount = (max * fraction) / scale;
    return amount > 0n ? amount : 1n;
  });
}

/**
 * Calls sent through Multicall3 at `block`, 10 at a time: a quote costs the pool's swap in gas, and one that walks
 * an emptied range to the price limit costs over a million.
 */
async function callAll(
  client: PublicClient,
  multicall3: Address,
  calls: PoolCall[],
  block: bigint,
): Promise<(Hex | undefined)[]> {
  const answers: (Hex | undefined)[] = [];
  for (let i = 0; i < calls.length; i += 10)
    answers.push(...(await multicallAt(client, multicall3, calls.slice(i, i + 10), block)));
  return answers;
}

const AMOUNTS_PER_DIRECTION = 110;

/** Debug and info are dropped; a warning (a pool the book could not read) is shown. */
const log: Logger = {
  debug: () => {},
  info: () => {},
  warn: (obj, msg) => console.warn(msg, obj),
  error: (obj, msg) => console.error(msg, obj),
};

describe('DEX book exactness against the deployed Uniswap contracts', () => {
  const devnet = useDevnet();

  function bookConfig(client: PublicClient, extra: Partial<DexChainConfig> = {}): DexChainConfig {
    const { chain } = devnet;
    const tokens = [...chain.tokens, ...chain.longTailTokens].map((t) => t.address);
    const symbol = (s: string) => chain.tokens.find((t) => t.symbol === s)!.address;
    return {
      chainId: chain.chainId,
      client,
      multicall3: chain.contracts.multicall3,
      uniswapV3: { factory: chain.dex.uniswapV3.factory, router: chain.dex.uniswapV3.swapRouter },
      uniswapV2: { factory: chain.dex.uniswapV2.factory, router: chain.dex.uniswapV2.router },
      tokens,
      hubs: [symbol('WETH'), symbol('USDC')],
      ...extra,
    };
  }

  /** Compares every pool of `pools` in both directions with the contracts at `block`; returns the counts. */
  async function compareSingleHops(pools: readonly PoolState[], block: bigint, seed: number) {
    const { chain, publicClient } = devnet;
    const next = random(seed);
    const counts = { 'uniswap-v3': 0, 'uniswap-v2': 0, crossing: 0, exhausted: 0, outsideWindow: 0 };
    for (const pool of pools) {
      for (const [tokenIn, tokenOut] of [
        [pool.token0, pool.token1],
        [pool.token1, pool.token0],
      ] as const) {
        const held = await publicClient.readContract({
          address: tokenIn,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [pool.address],
          blockNumber: block,
        });
        const amounts = randomAmounts(next, AMOUNTS_PER_DIRECTION, 2n * held);
        const calls: PoolCall[] = amounts.map((amountIn) =>
          pool.source === 'uniswap-v3'
            ? {
                target: chain.dex.uniswapV3.quoterV2,
                callData: encodeFunctionData({
                  abi: quoterAbi,
                  functionName: 'quoteExactInputSingle',
                  args: [{ tokenIn, tokenOut, amountIn, fee: pool.fee, sqrtPriceLimitX96: 0n }],
                }),
              }
            : {
                target: chain.dex.uniswapV2.router,
                callData: encodeFunctionData({
                  abi: routerV2Abi,
                  functionName: 'getAmountsOut',
                  args: [amountIn, [tokenIn, tokenOut]],
                }),
              },
        );
        const answers = await callAll(publicClient, chain.contracts.multicall3, calls, block);
        amounts.forEach((amountIn, i) => {
          const answer = answers[i];
          const context = `${pool.source} ${pool.address} ${tokenIn} → ${tokenOut}, ${amountIn} at block ${block}`;
          if (pool.source === 'uniswap-v3') {
            // The swap loop itself, complete or not: the quoter answers what a partial swap would pay too.
            let simulated;
            try {
              simulated = simulateV3Swap(pool, { zeroForOne: tokenIn === pool.token0, amountSpecified: amountIn });
            } catch (error) {
              if (!(error instanceof PoolShortfallError)) throw error;
              expect(error.shortfall, context).toBe('insufficient-state');
              counts.outsideWindow++;
              return;
            }
            expect(answer, context).toBeDefined();
            const [amountOut, sqrtPriceX96After, ticksCrossed] = decodeFunctionResult({
              abi: quoterAbi,
              functionName: 'quoteExactInputSingle',
              data: answer!,
            });
            expect(simulated.amountOut, context).toBe(amountOut);
            expect(simulated.sqrtPriceX96After, context).toBe(sqrtPriceX96After);
            if (ticksCrossed > 0) counts.crossing++;
            if (!simulated.complete) counts.exhausted++;
            counts['uniswap-v3']++;
          } else {
            let ours: bigint | undefined;
            try {
              ours = swapExactIn(pool, tokenIn, amountIn).amountOut;
            } catch (error) {
              if (!(error instanceof PoolShortfallError)) throw error;
            }
            const theirs =
              answer === undefined
                ? undefined
                : decodeFunctionResult({ abi: routerV2Abi, functionName: 'getAmountsOut', data: answer })[1];
            // Both refuse (an output of zero) or both answer the same.
            expect(ours ?? 0n, context).toBe(theirs ?? 0n);
            counts['uniswap-v2']++;
          }
        });
      }
    }
    return counts;
  }

  it('equals QuoterV2 and getAmountsOut to the wei over random amounts, tick crossings included', async () => {
    const { publicClient } = devnet;
    const book = createDexBook({ chains: [bookConfig(publicClient)], log });
    const state = await book.refresh(devnet.chain.chainId);
    const v3 = state.pools.filter((p) => p.source === 'uniswap-v3');
    const v2 = state.pools.filter((p) => p.source === 'uniswap-v2');
    expect(v3.length).toBeGreaterThanOrEqual(4);
    expect(v2.length).toBeGreaterThanOrEqual(1);
    const counts = await compareSingleHops(state.pools, state.blockNumber, 1);
    console.info('exactness', counts);
    expect(counts['uniswap-v3']).toBeGreaterThanOrEqual(200);
    expect(counts['uniswap-v2']).toBeGreaterThanOrEqual(200);
    expect(counts.crossing).toBeGreaterThanOrEqual(20);
  });

  it('prices exact outputs as QuoterV2.quoteExactOutputSingle and getAmountsIn do', async () => {
    const { chain, publicClient } = devnet;
    const book = createDexBook({ chains: [bookConfig(publicClient)], log });
    const state = await book.refresh(chain.chainId);
    const next = random(4);
    const counts = { 'uniswap-v3': 0, 'uniswap-v2': 0, refused: 0 };
    for (const pool of state.pools) {
      for (const [tokenIn, tokenOut] of [
        [pool.token0, pool.token1],
        [pool.token1, pool.token0],
      ] as const) {
        const held = await publicClient.readContract({
          address: tokenOut,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [pool.address],
          blockNumber: state.blockNumber,
        });
        const amounts = randomAmounts(next, 60, held);
        const calls: PoolCall[] = amounts.map((amount) =>
          pool.source === 'uniswap-v3'
            ? {
                target: chain.dex.uniswapV3.quoterV2,
                callData: encodeFunctionData({
                  abi: quoterAbi,
                  functionName: 'quoteExactOutputSingle',
                  args: [{ tokenIn, tokenOut, amount, fee: pool.fee, sqrtPriceLimitX96: 0n }],
                }),
              }
            : {
                target: chain.dex.uniswapV2.router,
                callData: encodeFunctionData({
                  abi: routerV2Abi,
                  functionName: 'getAmountsIn',
                  args: [amount, [tokenIn, tokenOut]],
                }),
              },
        );
        const answers = await callAll(publicClient, chain.contracts.multicall3, calls, state.blockNumber);
        amounts.forEach((amountOut, i) => {
          const context = `${pool.source} ${pool.address} ${tokenIn} → ${tokenOut}, out ${amountOut}`;
          let ours: bigint | undefined;
          try {
            ours = swapExactOut(pool, tokenIn, amountOut).amountIn;
          } catch (error) {
            if (!(error instanceof PoolShortfallError)) throw error;
            if (error.shortfall === 'insufficient-state') return;
          }
          const answer = answers[i];
          const theirs =
            answer === undefined
              ? undefined
              : pool.source === 'uniswap-v3'
                ? decodeFunctionResult({ abi: quoterAbi, functionName: 'quoteExactOutputSingle', data: answer })[0]
                : decodeFunctionResult({ abi: routerV2Abi, functionName: 'getAmountsIn', data: answer })[0];
          // Both refuse (the pool cannot deliver that much) or both ask the same input.
          expect(ours, context).toBe(theirs);
          if (ours === undefined) counts.refused++;
          else counts[pool.source]++;
        });
      }
    }
    console.info('exact output', counts);
    expect(counts['uniswap-v3']).toBeGreaterThanOrEqual(200);
    expect(counts['uniswap-v2']).toBeGreaterThanOrEqual(100);
  });

  it('equals QuoterV2.quoteExactInput on two-hop v3 routes found by the route search', async () => {
    const { chain, publicClient } = devnet;
    const book = createDexBook({ chains: [bookConfig(publicClient)], log });
    const state = await book.refresh(chain.chainId);
    const symbol = (s: string) => [...chain.tokens, ...chain.longTailTokens].find((t) => t.symbol === s)!;
    const next = random(2);
    let compared = 0;
    // Whole tokens of input at most: from dust to more than the shallow pools hold.
    for (const [from, to, most] of [
      ['USDC', 'MNR', 1_000_000n],
      ['MNR', 'USDC', 1_000_000n],
      ['USDC', 'LONG', 100_000n],
      ['LONG', 'USDC', 100_000n],
      ['USDT', 'WETH', 1_000_000n],
    ] as const) {
      const tokenIn = symbol(from);
      const tokenOut = symbol(to);
      const amounts = randomAmounts(next, 60, most * 10n ** BigInt(tokenIn.decimals));
      const routes = amounts.map((amountIn) =>
        book.quoteExactIn({
          chainId: chain.chainId,
          tokenIn: tokenIn.address,
          tokenOut: tokenOut.address,
          amountIn,
          sources: ['uniswap-v3'],
        }),
      );
      const priced = routes.flatMap((quote) => (quote.ok && quote.route.hops.length === 2 ? [quote.route] : []));
      const calls = priced.map((route) => {
        const [first, second] = route.hops as [(typeof route.hops)[0], (typeof route.hops)[0]];
        const path = encodePacked(
          ['address', 'uint24', 'address', 'uint24', 'address'],
          [first.tokenIn, first.fee, first.tokenOut, second.fee, second.tokenOut],
        );
        return {
          target: chain.dex.uniswapV3.quoterV2,
          callData: encodeFunctionData({
            abi: quoterAbi,
            functionName: 'quoteExactInput',
            args: [path, route.amountIn],
          }),
        };
      });
      const answers = await callAll(publicClient, chain.contracts.multicall3, calls, state.blockNumber);
      priced.forEach((route, i) => {
        const [amountOut] = decodeFunctionResult({
          abi: quoterAbi,
          functionName: 'quoteExactInput',
          data: answers[i]!,
        });
        expect(route.amountOut, `${from} → ${to} ${route.amountIn}`).toBe(amountOut);
        compared++;
      });
    }
    console.info('two-hop routes compared', compared);
    expect(compared).toBeGreaterThanOrEqual(200);
  });

  it('quotes from memory alone, and is exact again after a swap moved the pools', async () => {
    const { chain, descriptor } = devnet;
    const methods: string[] = [];
    const counting = createPublicClient({
      transport: http(chain.rpcUrl, {
        onFetchRequest: async (request) => {
          const body = (await request.clone().json()) as { method: string };
          methods.push(body.method);
        },
      }),
    });
    const book = createDexBook({ chains: [bookConfig(counting)], log });
    await book.refresh(chain.chainId);
    const weth = chain.tokens.find((t) => t.symbol === 'WETH')!.address;
    const mnr = chain.tokens.find((t) => t.symbol === 'MNR')!.address;

    methods.length = 0;
    for (let i = 0; i < 100; i++)
      book.quoteExactIn({ chainId: chain.chainId, tokenIn: weth, tokenOut: mnr, amountIn: BigInt(i + 1) * 10n ** 17n });
    expect(methods).toEqual([]);

    // Someone swaps 20 WETH into the WETH/MNR pool through SwapRouter: the pool's price and ticks move.
    const user = descriptor.accounts[0]!;
    const quote = book.quoteExactIn({
      chainId: chain.chainId,
      tokenIn: weth,
      tokenOut: mnr,
      amountIn: 20n * 10n ** 18n,
    });
    if (!quote.ok) throw new Error(quote.shortfall);
    const hop = quote.route.hops[0]!;
    await devnet.mined(
      devnet.wallet(user).writeContract({
        address: weth,
        abi: parseAbi(['function deposit() payable']),
        functionName: 'deposit',
        value: 20n * 10n ** 18n,
      }),
    );
    await devnet.mined(
      devnet.wallet(user).writeContract({
        address: weth,
        abi: erc20Abi,
        functionName: 'approve',
        args: [chain.dex.uniswapV3.swapRouter, maxUint256],
      }),
    );
    const mnrBefore = await devnet.balanceOf(mnr, user.address);
    await devnet.mined(
      devnet.wallet(user).writeContract({
        address: chain.dex.uniswapV3.swapRouter,
        abi: swapRouterAbi,
        functionName: 'exactInputSingle',
        args: [
          {
            tokenIn: weth,
            tokenOut: mnr,
            fee: hop.fee,
            recipient: user.address,
            deadline: maxUint256,
            amountIn: 20n * 10n ** 18n,
            amountOutMinimum: 0n,
            sqrtPriceLimitX96: 0n,
          },
        ],
      }),
    );
    // What the pool delivered is what the book quoted, nothing having moved in between.
    expect((await devnet.balanceOf(mnr, user.address)) - mnrBefore).toBe(quote.route.amountOut);

    methods.length = 0;
    const after = await book.refresh(chain.chainId);
    expect(methods.filter((m) => m === 'eth_call').length).toBeGreaterThanOrEqual(1);
    const moved = after.pools.find((p) => p.address === hop.pool) as V3PoolState;
    const counts = await compareSingleHops([moved], after.blockNumber, 3);
    expect(counts['uniswap-v3']).toBeGreaterThan(100);
  });

  it('reads in one eth_call per refresh while the windows hold, and follows pushed heads', async () => {
    const { chain, publicClient, testClient } = devnet;
    const config = bookConfig(publicClient);
    const book = createDexBook({ chains: [config], log });
    const pools = await book.discover(chain.chainId);
    const first = await readPoolStates({
      client: publicClient,
      multicall3: chain.contracts.multicall3,
      pools,
      windowWords: 2,
    });
    expect(first.failed).toEqual([]);
    const second = await readPoolStates({
      client: publicClient,
      multicall3: chain.contracts.multicall3,
      pools,
      windowWords: 2,
      previous: new Map(first.pools.map((p) => [p.address, p])),
    });
    expect(second.roundTrips).toBe(1);
    expect(second.pools).toEqual(first.pools);

    const heads = createHeadFeed({ chainId: chain.chainId, url: chain.wsUrl, log });
    const following = createDexBook({ chains: [{ ...config, heads }], log });
    heads.start();
    try {
      await following.start();
      await expect.poll(() => heads.live(), { timeout: 5_000 }).toBe(true);
      const start = following.state(chain.chainId)!.blockNumber;
      await testClient.mine({ blocks: 1 });
      await expect.poll(() => following.state(chain.chainId)?.blockNumber, { timeout: 5_000 }).toBeGreaterThan(start);
    } finally {
      await following.stop();
      await heads.stop();
    }
  });

  it('answers "insufficient state" when the swap would leave the loaded window', async () => {
    const { chain, publicClient } = devnet;
    const book = createDexBook({ chains: [bookConfig(publicClient, { windowWords: 0 })], log });
    await book.refresh(chain.chainId);
    const usdc = chain.tokens.find((t) => t.symbol === 'USDC')!.address;
    const usdt = chain.tokens.find((t) => t.symbol === 'USDT')!.address;
    const quote = book.quoteExactIn({
      chainId: chain.chainId,
      tokenIn: usdc,
      tokenOut: usdt,
      amountIn: 10n ** 15n,
      sources: ['uniswap-v3'],
    });
    expect(quote).toMatchObject({ ok: false, shortfall: 'insufficient-state' });
  });
});
