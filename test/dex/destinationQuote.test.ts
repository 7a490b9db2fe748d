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
});
