/**
 * Attack: take more of the solver's inventory than the operator is willing to risk, with one huge order or with
 * many paid orders in a short time (for example, draining a chain while a price is wrong). Orders over the
 * route's USD limit are refused 400 `AMOUNT_TOO_HIGH`; once the solver's fills on a chain reach the outflow limit
 * of the window, quotes to it are refused 400 `ROUTE_TEMPORARILY_RESTRICTED` and a paid order over the limit is
 * held (the circuit breaker, shown on `/ready`), then filled once older fills have left the window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, parseUnits, zeroAddress, type Address } from 'viem';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { defaultQuoteSettings } from '../../src/core/settings.js';
import { call } from '../helpers/conformance.js';
import { startConfiguredGateway } from '../helpers/configuredGateway.js';
import type { TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';

const A = 31337;
const B = 31338;
const usd = (value: string) => parseUnits(value, 6);

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let accounts: DevnetAccount[];

beforeAll(async () => {
  gateway = await startConfiguredGateway(() => ({
    quote: {
      ...defaultQuoteSettings,
      exposure: {
        maxOrderUsdMicros: usd('1000'),
        routes: [{ originCurrency: 'usdc', destinationCurrency: 'usdc', maxOrderUsdMicros: usd('50') }],
        outflowWindowSeconds: 8,
        maxOutflowUsdMicros: usd('1000000'),
        chainOutflowUsdMicros: { [B]: usd('100') },
        maxHoldSeconds: defaultQuoteSettings.exposure.maxHoldSeconds,
      },
    },
  }));
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  accounts = gateway.devnet.descriptor.accounts;
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

const quoteBody = (body: Record<string, unknown>) => ({
  body: {
    user: accounts[0]!.address,
    originChainId: A,
    destinationChainId: B,
    tradeType: 'EXACT_INPUT',
    originCurrency: zeroAddress,
    destinationCurrency: zeroAddress,
    ...body,
  },
});

describe('exposure limits', () => {
  it('an order over the route USD limit is refused AMOUNT_TOO_HIGH', async () => {
    const eth = await call(gateway.url, 'getQuote', quoteBody({ amount: parseEther('1').toString() }));
    expect(eth.status, JSON.stringify(eth.body)).toBe(400);
    expect(eth.body).toMatchObject({ errorCode: 'AMOUNT_TOO_HIGH', errorData: 'maxOrderUsd=1000' });
    // The USDC route has its own, lower limit.
    const usdcRoute = { originCurrency: tokenOf(chainA, 'USDC'), destinationCurrency: tokenOf(chainB, 'USDC') };
    const usdc = await call(gateway.url, 'getQuote', quoteBody({ ...usdcRoute, amount: usd('60').toString() }));
    expect(usdc.status, JSON.stringify(usdc.body)).toBe(400);
    expect(usdc.body).toMatchObject({ errorCode: 'AMOUNT_TOO_HIGH', errorData: 'maxOrderUsd=50' });
    const price = await call(gateway.url, 'getPrice', quoteBody({ ...usdcRoute, amount: usd('60').toString() }));
    expect(price.body).toMatchObject({ errorCode: 'AMOUNT_TOO_HIGH' });
    expect(
      (await call(gateway.url, 'getQuote', quoteBody({ ...usdcRoute, amount: usd('40').toString() }))).status,
    ).toBe(200);
  });

  it('outflow over the window pauses fills (visible on /ready), refuses quotes, and resumes them', async () => {
    const [first, second] = [accounts[1]!, accounts[2]!];
    const recipient: Address = '0x00000000000000000000000000000000000e0f10';
    const amount = parseEther('0.02').toString(); // about USD 60 each: two are over the USD 100 window
    const q1 = await requestQuote(gateway, first, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount,
    });
    const q2 = await requestQuote(gateway, second, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount,
      recipient,
    });
    await executeSteps(gateway, q1.steps, first);
    await waitForStatus(gateway, q1.steps.at(-1)!.requestId, ['success']);

    await executeSteps(gateway, q2.steps, second);
    const requestId = q2.steps.at(-1)!.requestId;
    const fills = await eventually(async () => {
      const response = await fetch(`${gateway.url}/ready`);
      const body = (await response.json()) as { checks: Record<string, { ok: boolean; message?: string }> };
      return body.checks[`fills:${B}`];
    });
    expect(fills.message).toMatch(/outflow limit/);
    expect((await waitForStatus(gateway, requestId, ['pending'])).status).toBe('pending');

    const refused = await eventually(async () => {
      const answer = await call(gateway.url, 'getQuote', quoteBody({ amount }));
      return answer.status === 200 ? undefined : answer;
    });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body).toMatchObject({ errorCode: 'ROUTE_TEMPORARILY_RESTRICTED' });

    // Once the first fill leaves the window, the held, paid request is filled: nothing was lost.
    await waitForStatus(gateway, requestId, ['success'], 60_000);
    expect(await publicClientOf(chainB).getBalance({ address: recipient })).toBe(BigInt(q2.details.currencyOut.amount));
  });
});

/** Polls `read` until it returns something (up to 30 s). */
async function eventually<T>(read: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
