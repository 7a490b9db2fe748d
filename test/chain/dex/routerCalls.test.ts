/**
 * `routerSwapCall` against the deployed routers: for each shape a swap takes (native in, token in, native out, two
 * hops, v3 and v2), the call sent as built delivers exactly what the book quoted when nothing moved in between,
 * and reverts when its minimum is above what the pools give.
 */
import { describe, expect, it } from 'vitest';
import { maxUint256, parseEther, parseUnits, type Address } from 'viem';
import { createDexBook, type DexBook } from '../../../src/chain/dex/dexBook.js';
import type { DexSource } from '../../../src/core/dex/poolState.js';
import { routerSwapCall } from '../../../src/core/dex/routerCalls.js';
import type { Logger } from '../../../src/core/logger.js';
import { useDevnet } from '../../helpers/anvil.js';

const quiet: Logger = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

describe('routerSwapCall on the devnet routers', () => {
  const devnet = useDevnet({ accountCount: 2 });
  let book: DexBook;

  const token = (symbol: string): Address =>
    [...devnet.chain.tokens, ...devnet.chain.longTailTokens].find((t) => t.symbol === symbol)!.address;

  async function freshBook(): Promise<DexBook> {
    const { chain, publicClient } = devnet;
    book ??= createDexBook({
      log: quiet,
      chains: [
        {
          chainId: chain.chainId,
          client: publicClient,
          multicall3: chain.contracts.multicall3,
          uniswapV3: { factory: chain.dex.uniswapV3.factory, router: chain.dex.uniswapV3.swapRouter },
          uniswapV2: { factory: chain.dex.uniswapV2.factory, router: chain.dex.uniswapV2.router },
          tokens: [...chain.tokens, ...chain.longTailTokens].map((t) => t.address),
          hubs: [token('WETH'), token('USDC')],
        },
      ],
    });
    await book.refresh(chain.chainId);
    return book;
  }

  const balance = (asset: Address | 'native', owner: Address) =>
    asset === 'native' ? devnet.publicClient.getBalance({ address: owner }) : devnet.balanceOf(asset, owner);

  const cases: Array<{
    name: string;
    from: string;
    to: string;
    amount: bigint;
    source: DexSource;
    nativeIn?: boolean;
    nativeOut?: boolean;
  }> = [
    {
      name: 'ETH → LONG on v3 (native in)',
      from: 'WETH',
      to: 'LONG',
      amount: parseEther('1'),
      source: 'uniswap-v3',
      nativeIn: true,
    },
    {
      name: 'ETH → LONG on v2 (native in)',
      from: 'WETH',
      to: 'LONG',
      amount: parseEther('1'),
      source: 'uniswap-v2',
      nativeIn: true,
    },
    {
      name: 'USDC → LONG on v3 through WETH',
      from: 'USDC',
      to: 'LONG',
      amount: parseUnits('500', 6),
      source: 'uniswap-v3',
    },
    {
      name: 'LONG → ETH on v3 (native out)',
      from: 'LONG',
      to: 'WETH',
      amount: parseEther('100'),
      source: 'uniswap-v3',
      nativeOut: true,
    },
    {
      name: 'LONG → ETH on v2 (native out)',
      from: 'LONG',
      to: 'WETH',
      amount: parseEther('100'),
      source: 'uniswap-v2',
      nativeOut: true,
    },
    { name: 'WETH → MNR on v3', from: 'WETH', to: 'MNR', amount: parseEther('3'), source: 'uniswap-v3' },
  ];

  for (const c of cases) {
    it(`${c.name}: delivers exactly the quoted output`, async () => {
      const dex = await freshBook();
      const { chain } = devnet;
      const user = devnet.descriptor.accounts[0]!;
      const recipient = devnet.descriptor.accounts[1]!.address;
      const quote = dex.quoteExactIn({
        chainId: chain.chainId,
        tokenIn: token(c.from),
        tokenOut: token(c.to),
        amountIn: c.amount,
        sources: [c.source],
      });
      expect(quote.ok).toBe(true);
      if (!quote.ok) return;
      expect(quote.route.hops.every((hop) => hop.source === c.source)).toBe(true);
      const router = quote.route.hops[0]!.router;
      if (c.nativeIn !== true) await devnet.approve(user, token(c.from), router, maxUint256);
      const call = routerSwapCall(quote.route, {
        recipient,
        amountOutMinimum: quote.route.amountOut,
        deadline: maxUint256 >> 1n,
        nativeIn: c.nativeIn === true,
        nativeOut: c.nativeOut === true,
      });
      const asset = c.nativeOut === true ? 'native' : token(c.to);
      const before = await balance(asset, recipient);
      await devnet.mined(devnet.wallet(user).sendTransaction(call));
      expect((await balance(asset, recipient)) - before).toBe(quote.route.amountOut);
    });
  }

  it('reverts, delivering nothing, when the minimum is one wei above what the pools give', async () => {
    const dex = await freshBook();
    const { chain } = devnet;
    const user = devnet.descriptor.accounts[0]!;
    const quote = dex.quoteExactIn({
      chainId: chain.chainId,
      tokenIn: token('WETH'),
      tokenOut: token('LONG'),
      amountIn: parseEther('1'),
    });
    if (!quote.ok) throw new Error(quote.shortfall);
    const call = routerSwapCall(quote.route, {
      recipient: user.address,
      amountOutMinimum: quote.route.amountOut + 1n,
      deadline: maxUint256 >> 1n,
      nativeIn: true,
    });
    await expect(devnet.wallet(user).sendTransaction(call)).rejects.toThrow();
  });
});
