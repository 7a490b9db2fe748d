/**
 * Cross-chain swaps whose output is bought on the destination through the devnet's Uniswap pools: quotes for a
 * token the solver does not hold (LONG), the source lists, and what `details` says of the route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, parseUnits, zeroAddress, type Address } from 'viem';
import type { DevnetChain } from '../../src/chain/devnet.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { requestQuote } from '../helpers/quote.js';
import { post } from '../graphql/harness.js';

let gateway: TestGateway;
const A = 31337;
const B = 31338;

beforeAll(async () => {
  gateway = await startTestGateway();
}, 240_000);
afterAll(async () => {
  await gateway?.stop();
});

const chain = (id: number): DevnetChain => gateway.devnet.descriptor.chains.find((c) => c.chainId === id)!;
const token = (id: number, symbol: string): Address =>
  [...chain(id).tokens, ...chain(id).longTailTokens].find((t) => t.symbol === symbol)!.address;
const user = () => gateway.devnet.descriptor.accounts[0]!;

describe('quotes through the destination pools', () => {
  it('quotes ETH(A) → LONG(B) through the pools, with the leg in details', async () => {
    const quote = await requestQuote(gateway, user(), {
      originCurrency: zeroAddress,
      destinationCurrency: token(B, 'LONG'),
      amount: parseEther('1').toString(),
    });
    const { details } = quote;
    expect(details.currencyOut.currency.symbol).toBe('LONG');
    expect(BigInt(details.currencyOut.amount)).toBeGreaterThan(parseUnits('900', 18));
    expect(['uniswap-v3', 'uniswap-v2']).toContain(details.route.destination.router);
    expect(details.route.destination.inputCurrency.currency.address).toBe(zeroAddress);
    expect(Number(details.swapImpact.percent)).toBeLessThan(0);
    expect(quote.protocol.v2.orderData.output.payments[0].currency.toLowerCase()).toBe(token(B, 'LONG').toLowerCase());
  });

  it('refuses LONG when both DEX sources are excluded', async () => {
    const { status, body } = await call(gateway.url, 'getQuote', {
      body: {
        user: user().address,
        originChainId: A,
        destinationChainId: B,
        originCurrency: zeroAddress,
        destinationCurrency: token(B, 'LONG'),
        amount: parseEther('1').toString(),
        tradeType: 'EXACT_INPUT',
        excludedSwapSources: ['uniswap-v3', 'uniswap-v2'],
      },
    });
    expect(status).toBe(400);
    expect(body.errorCode).toBe('NO_SWAP_ROUTES_FOUND');
    expect(body.message).toContain('LONG');
  });

  it('GraphQL quotes the same route and output as REST, sources included', async () => {
    const input = {
      user: user().address,
      originChainId: A,
      destinationChainId: B,
      originCurrency: zeroAddress,
      destinationCurrency: token(B, 'LONG'),
      amount: parseEther('0.3').toString(),
      tradeType: 'EXACT_INPUT',
      includedSwapSources: ['uniswap-v3'],
    };
    const rest = await requestQuote(gateway, user(), input);
    const { body } = await post(
      gateway.url,
      'query Q($input: QuoteInput!) { quote(input: $input) { details { rate currencyOut { amount minimumAmount } swapImpact { usd percent } route { destination { router inputCurrency { amount } } } } } }',
      { input },
    );
    expect(body.errors).toBeUndefined();
    const details = body.data.quote.details;
    expect(details.route.destination.router).toBe('uniswap-v3');
    expect(details.currencyOut).toEqual({
      amount: rest.details.currencyOut.amount,
      minimumAmount: rest.details.currencyOut.minimumAmount,
    });
    expect(details.rate).toBe(rest.details.rate);
    expect(details.swapImpact).toEqual(rest.details.swapImpact);
    expect(details.route.destination.inputCurrency.amount).toBe(rest.details.route.destination.inputCurrency.amount);
  });

  it('only uniswap-v2 routes through v2; the tolerance sets the minimum', async () => {
    const quote = await requestQuote(gateway, user(), {
      originCurrency: zeroAddress,
      destinationCurrency: token(B, 'LONG'),
      amount: parseEther('1').toString(),
      includedDestinationSwapSources: ['uniswap-v2'],
      slippageTolerance: '100',
    });
    expect(quote.details.route.destination).toMatchObject({
      router: 'uniswap-v2',
      includedSwapSources: ['uniswap-v2'],
    });
    const out = BigInt(quote.details.currencyOut.amount);
    expect(BigInt(quote.details.currencyOut.minimumAmount)).toBe((out * 9_900n) / 10_000n);
    expect(BigInt(quote.protocol.v2.orderData.output.payments[0].minimumAmount)).toBe((out * 9_900n) / 10_000n);
  });

  it('EXACT_OUTPUT buys exactly the amount asked, the input found by exact-output pool math', async () => {
    const quote = await requestQuote(gateway, user(), {
      originCurrency: token(A, 'USDC'),
      destinationCurrency: token(B, 'LONG'),
      amount: parseUnits('250', 18).toString(),
      tradeType: 'EXACT_OUTPUT',
    });
    expect(quote.details.currencyOut.amount).toBe(parseUnits('250', 18).toString());
    expect(quote.details.currencyOut.minimumAmount).toBe(parseUnits('250', 18).toString());
    expect(quote.details.route.destination.inputCurrency.currency.symbol).toBe('USDC');
  });

  it('chooses between inventory and the pools for a token the solver holds (MNR)', async () => {
    const body = {
      originCurrency: zeroAddress,
      destinationCurrency: token(B, 'MNR'),
      amount: parseEther('1').toString(),
    };
    const best = await requestQuote(gateway, user(), body);
    const inventory = await requestQuote(gateway, user(), { ...body, includedSwapSources: ['solver-inventory'] });
    const pools = await requestQuote(gateway, user(), { ...body, excludedSwapSources: ['solver-inventory'] });
    expect(inventory.details.route.destination.router).toBe('solver-inventory');
    expect(['uniswap-v3', 'uniswap-v2']).toContain(pools.details.route.destination.router);
    const outs = [inventory, pools].map((quote) => BigInt(quote.details.currencyOut.amount));
    expect(BigInt(best.details.currencyOut.amount)).toBe(outs[0]! > outs[1]! ? outs[0] : outs[1]);
    // 500 ETH through the shallow WETH/MNR pool moves its price by double digits, and the quote says so.
    const large = await requestQuote(gateway, user(), {
      ...body,
      amount: parseEther('500').toString(),
      excludedSwapSources: ['solver-inventory'],
      overridePriceImpact: true,
    });
    expect(Number(large.details.swapImpact.percent)).toBeLessThan(-10);
  });

  it('refuses a DEX quote priced from pool state older than the limit; inventory routes still quote', async () => {
    const settings = gateway.server.core.config.quote;
    const before = settings.maxDexStateAgeSeconds;
    settings.maxDexStateAgeSeconds = 0.001;
    try {
      const { status, body } = await call(gateway.url, 'getQuote', {
        body: {
          user: user().address,
          originChainId: A,
          destinationChainId: B,
          originCurrency: zeroAddress,
          destinationCurrency: token(B, 'LONG'),
          amount: parseEther('1').toString(),
          tradeType: 'EXACT_INPUT',
        },
      });
      expect(status).toBe(400);
      expect(body.errorCode).toBe('ROUTE_TEMPORARILY_RESTRICTED');
      expect(body.message).toMatch(/pool state of chain 31338/);
      const mnr = await requestQuote(gateway, user(), {
        originCurrency: zeroAddress,
        destinationCurrency: token(B, 'MNR'),
        amount: parseEther('1').toString(),
      });
      expect(mnr.details.route.destination.router).toBe('solver-inventory');
    } finally {
      settings.maxDexStateAgeSeconds = before;
    }
  });
});
