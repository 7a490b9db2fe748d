/**
 * The gateway holds the devnet's pools in memory from its start: a route to LONG (no feed, no inventory) is priced
 * without an RPC call, and a swap mined on chain reaches the book at the next head.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, http, parseAbi, parseEther } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devnetViemChain } from '../../src/chain/devnet.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { publicClientOf } from '../helpers/quote.js';

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

const swapRouterAbi = parseAbi([
  'function exactInputSingle((address tokenIn,address tokenOut,uint24 fee,address recipient,uint256 deadline,uint256 amountIn,uint256 amountOutMinimum,uint160 sqrtPriceLimitX96)) payable returns (uint256)',
]);

describe('the server DEX book', () => {
  it('holds every devnet chain with a dex section and prices WETH → LONG from memory', () => {
    const dex = gateway.server.core.dex!;
    expect([...dex.chainIds()].sort()).toEqual(gateway.devnet.descriptor.chains.map((c) => c.chainId).sort());
    const chain = gateway.devnet.descriptor.chains[0]!;
    const weth = chain.tokens.find((t) => t.symbol === 'WETH')!.address;
    const long = chain.longTailTokens.find((t) => t.symbol === 'LONG')!.address;
    const quote = dex.quoteExactIn({
      chainId: chain.chainId,
      tokenIn: weth,
      tokenOut: long,
      amountIn: parseEther('1'),
    });
    expect(quote.ok).toBe(true);
    if (!quote.ok) return;
    // 1 WETH buys a little under 1000 LONG at the 1% pool or 1005 at the v2 pair, less their fees.
    expect(quote.route.amountOut).toBeGreaterThan(parseEther('980'));
    expect(quote.route.amountOut).toBeLessThan(parseEther('1005'));
    expect(dex.readAt(chain.chainId)).toBeLessThanOrEqual(Date.now());
  });

  it('follows the chain: a swap that moves the pool is in the book after the next head', async () => {
    const dex = gateway.server.core.dex!;
    const chain = gateway.devnet.descriptor.chains[0]!;
    const weth = chain.tokens.find((t) => t.symbol === 'WETH')!.address;
    const long = chain.longTailTokens.find((t) => t.symbol === 'LONG')!.address;
    const before = dex.quoteExactIn({
      chainId: chain.chainId,
      tokenIn: weth,
      tokenOut: long,
      amountIn: parseEther('1'),
      sources: ['uniswap-v3'],
    });
    expect(before.ok).toBe(true);
    const wallet = createWalletClient({
      account: privateKeyToAccount(gateway.devnet.descriptor.accounts[0]!.privateKey),
      chain: devnetViemChain(chain),
      transport: http(chain.rpcUrl),
    });
    const hash = await wallet.writeContract({
      address: chain.dex.uniswapV3.swapRouter,
      abi: swapRouterAbi,
      functionName: 'exactInputSingle',
      args: [
        {
          tokenIn: weth,
          tokenOut: long,
          fee: 10_000,
          recipient: wallet.account.address,
          deadline: 2n ** 40n,
          amountIn: parseEther('5'),
          amountOutMinimum: 0n,
          sqrtPriceLimitX96: 0n,
        },
      ],
      value: parseEther('5'),
    });
    const receipt = await publicClientOf(chain).waitForTransactionReceipt({ hash });
    await expect
      .poll(() => dex.state(chain.chainId)!.blockNumber, { timeout: 10_000 })
      .toBeGreaterThanOrEqual(receipt.blockNumber);
    const after = dex.quoteExactIn({
      chainId: chain.chainId,
      tokenIn: weth,
      tokenOut: long,
      amountIn: parseEther('1'),
      sources: ['uniswap-v3'],
    });
    expect(after.ok && before.ok && after.route.amountOut < before.route.amountOut).toBe(true);
  });
});
