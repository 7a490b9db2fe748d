/**
 * The solver's inventory never sells better than it could buy back in the destination's pools: ETH on chain A →
 * MNR on chain B quotes the oracle's price less fees for 1 ETH, but for 500 ETH no more than the shallow WETH/MNR
 * pool would pay (a double-digit swap impact), and above the size cap it is refused. A small swap paid while nothing
 * moved is filled with exactly the quoted output.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { erc20Abi, parseAbi, parseEther, zeroAddress, type Address } from 'viem';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';

const quoterAbi = parseAbi([
  'struct QuoteExactInputSingleParams { address tokenIn; address tokenOut; uint256 amountIn; uint24 fee; uint160 sqrtPriceLimitX96; }',
  'function quoteExactInputSingle(QuoteExactInputSingleParams params) returns (uint256 amountOut, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate)',
]);

let gateway: TestGateway;
let chainB: DevnetChain;
let alice: DevnetAccount;
/** USD 2,000,000: 500 ETH (USD 1.5M) is sold from inventory, 700 ETH (USD 2.1M) is not. */
const sizeCapMicros = 2_000_000n * 1_000_000n;

beforeAll(async () => {
  gateway = await startTestGateway(
    {},
    {
      configure: (config) => ({ ...config, quote: { ...config.quote, maxInventorySwapUsdMicros: sizeCapMicros } }),
    },
  );
  chainB = gateway.devnet.descriptor.chains[1]!;
  alice = gateway.devnet.descriptor.accounts[0]!;
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

/** What a pool of chain B (default WETH/MNR 0.3%) pays for `amountIn` now, by Uniswap's own QuoterV2. */
async function poolPays(amountIn: bigint, tokenIn = 'WETH', tokenOut = 'MNR', fee = 3000): Promise<bigint> {
  const { result } = await publicClientOf(chainB).simulateContract({
    address: chainB.dex.uniswapV3.quoterV2,
    abi: quoterAbi,
    functionName: 'quoteExactInputSingle',
    args: [
      {
        tokenIn: tokenOf(chainB, tokenIn),
        tokenOut: tokenOf(chainB, tokenOut),
        amountIn,
        fee,
        sqrtPriceLimitX96: 0n,
      },
    ],
  });
  return result[0];
}

const ethToMnr = (amount: bigint, recipient?: Address) => ({
  originCurrency: zeroAddress,
  destinationCurrency: tokenOf(chainB, 'MNR'),
  amount: amount.toString(),
  ...(recipient === undefined ? {} : { recipient }),
});

describe('inventory capped at the pools', () => {
  it('500 ETH → MNR quotes no better than the pool would pay, with a double-digit swap impact', async () => {
    const amount = parseEther('500');
    const quote = await requestQuote(gateway, alice, ethToMnr(amount));
    const out = BigInt(quote.details.currencyOut.amount);
    // At the oracle (ETH 3000, MNR 0.5) 500 ETH is 3,000,000 MNR; the shallow pool pays far less.
    expect(out).toBeLessThanOrEqual(await poolPays(amount));
    expect(out).toBeLessThan(parseEther('2700000'));
    // The fees (about 0.3 %) come off the input before the pool prices it: the output is the pool's for that rest.
    expect(out).toBeGreaterThanOrEqual(await poolPays((amount * 9_900n) / 10_000n));
    expect(Number(quote.details.swapImpact.percent)).toBeLessThanOrEqual(-10);
    expect(Number(quote.details.swapImpact.percent)).toBeGreaterThan(-100);
    expect(Number(quote.details.totalImpact.percent)).toBeLessThanOrEqual(Number(quote.details.swapImpact.percent));
  });

  it('1 ETH → MNR quotes close to the oracle less fees', async () => {
    const quote = await requestQuote(gateway, alice, ethToMnr(parseEther('1')));
    const out = BigInt(quote.details.currencyOut.amount);
    // 6,000 MNR at the oracle; the swap fee (0.3 %) and the pool's fee bound it from above, fees from below.
    expect(out).toBeLessThan(parseEther('6000'));
    expect(out).toBeGreaterThan(parseEther('5950'));
    expect(out).toBeLessThanOrEqual(await poolPays(parseEther('1')));
    expect(Number(quote.details.swapImpact.percent)).toBeGreaterThan(-1);
  });

  it('USDC → native ETH is bought back as WETH: no better than the WETH/USDC pool', async () => {
    const amount = 100_000_000_000n; // 100,000 USDC
    const quote = await requestQuote(gateway, alice, {
      originCurrency: tokenOf(gateway.devnet.descriptor.chains[0]!, 'USDC'),
      destinationCurrency: zeroAddress,
      amount: amount.toString(),
    });
    const out = BigInt(quote.details.currencyOut.amount);
    expect(out).toBeLessThanOrEqual(await poolPays(amount, 'USDC', 'WETH', 500));
    expect(out).toBeGreaterThanOrEqual(await poolPays((amount * 9_980n) / 10_000n, 'USDC', 'WETH', 500));
  });

  it('a token no pool trades (PUSD) is sold at the oracle: nothing to buy back through, no cap', async () => {
    const quote = await requestQuote(gateway, alice, {
      originCurrency: tokenOf(gateway.devnet.descriptor.chains[0]!, 'PUSD'),
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: '1000000000', // 1,000 PUSD
    });
    // The stablecoin swap fee (2 bps of USD 1,000) is the whole swap impact.
    expect(Number(quote.details.swapImpact.usd)).toBeCloseTo(-0.2, 6);
  });

  it('above the size cap the inventory does not quote', async () => {
    const [chainA] = gateway.devnet.descriptor.chains;
    const { status, body } = await call(gateway.url, 'getQuote', {
      body: {
        user: alice.address,
        originChainId: chainA!.chainId,
        destinationChainId: chainB.chainId,
        tradeType: 'EXACT_INPUT',
        ...ethToMnr(parseEther('700')),
      },
    });
    expect(status).toBe(400);
    expect(body.errorCode).toBe('AMOUNT_TOO_HIGH');
    expect(body.message).toMatch(/inventory are limited to USD 2000000 each/);
  });

  it('an EXACT_OUTPUT quote pays at least the pool’s price too', async () => {
    const want = parseEther('2000000');
    const quote = await requestQuote(gateway, alice, {
      ...ethToMnr(want),
      tradeType: 'EXACT_OUTPUT',
    });
    const amountIn = BigInt(quote.details.currencyIn.amount);
    expect(BigInt(quote.details.currencyOut.amount)).toBe(want);
    // At the oracle 2M MNR is 333 ETH; the pool needs more, and the quote asks at least what the pool asks.
    expect(await poolPays(amountIn)).toBeGreaterThanOrEqual(want);
    expect(amountIn).toBeGreaterThan(parseEther('340'));
  });

  it('a capped quote paid while nothing moved is filled with exactly the quoted output', async () => {
    const recipient: Address = '0x00000000000000000000000000000000000ca9ed';
    const quote = await requestQuote(gateway, alice, ethToMnr(parseEther('2'), recipient));
    await executeSteps(gateway, quote.steps, alice);
    await waitForStatus(gateway, quote.steps.at(-1)!.requestId, ['success']);
    const received = await publicClientOf(chainB).readContract({
      address: tokenOf(chainB, 'MNR'),
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [recipient],
    });
    expect(received).toBe(BigInt(quote.details.currencyOut.amount));
  });
});
