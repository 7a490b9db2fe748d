/**
 * Gas top-up (`topupGas`, `topupGasAmount`) on the devnet: the quote shows the native gas in
 * `details.currencyGasTopup` and charges its value in the execution fee; the fill sends it to the recipient in the
 * same transaction as the token; an ineligible destination (its native currency) quotes without it, as the
 * reference does; and the unmodified `@relayprotocol/relay-sdk` passing `topupGas: true` completes.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, erc20Abi, http, toHex, zeroAddress, type Address } from 'viem';
import { privateKeyToAccount, privateKeyToAddress } from 'viem/accounts';
import { getClient } from '@relayprotocol/relay-sdk';
import { devnetViemChain, type DevnetChain } from '../../src/chain/devnet.js';
import { call } from '../helpers/conformance.js';
import { post as graphqlPost } from '../graphql/harness.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { configureRelaySdk } from '../helpers/relaySdk.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  configureRelaySdk(gateway);
});
afterAll(async () => {
  await gateway?.stop();
});

const fresh = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;
const nativeOf = (chain: DevnetChain, owner: Address) => publicClientOf(chain).getBalance({ address: owner });
const tokenBalance = (chain: DevnetChain, token: Address, owner: Address) =>
  publicClientOf(chain).readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

async function waitForStatus(requestId: string, wanted: string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const { body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    if ((body as { status?: string }).status === wanted) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`request ${requestId} never reached ${wanted}`);
}

describe('gas top-up', () => {
  it('quotes USDC → USDC with the top-up in details and in the execution fee', async () => {
    const user = gateway.devnet.descriptor.accounts[0]!;
    const body = {
      originCurrency: tokenOf(chainA, 'USDC'),
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: '25000000',
      tradeType: 'EXPECTED_OUTPUT',
      recipient: fresh(0x70_0001),
    };
    const plain = await requestQuote(gateway, user, body);
    const topped = await requestQuote(gateway, user, { ...body, topupGas: true });
    expect(plain.details.currencyGasTopup).toBeUndefined();
    const topup = topped.details.currencyGasTopup;
    expect(topup.currency).toMatchObject({ chainId: chainB.chainId, address: zeroAddress });
    expect(BigInt(topup.amount)).toBeGreaterThan(0n);
    expect(topup.amountUsd).toMatch(/^2(\.0+)?$/);
    // The same output costs USD 2 more (USDC, 6 decimals), plus the gas of the top-up's call at the devnet's gas
    // price and the percentage fees on the larger input.
    const extra = BigInt(topped.details.currencyIn.amount) - BigInt(plain.details.currencyIn.amount);
    expect(extra).toBeGreaterThanOrEqual(2_000_000n);
    expect(extra).toBeLessThan(2_500_000n);
    expect(BigInt(topped.fees.relayerGas.amount) - BigInt(plain.fees.relayerGas.amount)).toBeGreaterThanOrEqual(
      2_000_000n,
    );
    // A smaller amount asked for halves the native delivered (rounding down).
    const one = await requestQuote(gateway, user, { ...body, topupGas: true, topupGasAmount: '1000000' });
    expect(BigInt(one.details.currencyGasTopup.amount)).toBe(BigInt(topup.amount) / 2n);
  });

  it('GraphQL quote takes topupGas / topupGasAmount and shows details.currencyGasTopup', async () => {
    const user = gateway.devnet.descriptor.accounts[0]!;
    const QUOTE =
      'query Quote($input: QuoteInput!) { quote(input: $input) { details { currencyGasTopup { amount amountUsd currency { chainId address } } } } }';
    const input = {
      user: user.address,
      originChainId: chainA.chainId,
      destinationChainId: chainB.chainId,
      originCurrency: tokenOf(chainA, 'USDC'),
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: '25000000',
      tradeType: 'EXACT_INPUT',
      recipient: fresh(0x70_0005),
    };
    const rest = await requestQuote(gateway, user, { ...input, topupGas: true, topupGasAmount: '3000000' });
    const { body } = await graphqlPost(gateway.url, QUOTE, {
      input: { ...input, topupGas: true, topupGasAmount: '3000000' },
    });
    expect(body.errors).toBeUndefined();
    expect(body.data.quote.details.currencyGasTopup).toMatchObject({
      amount: rest.details.currencyGasTopup.amount,
      currency: { chainId: chainB.chainId, address: zeroAddress },
    });
    const without = await graphqlPost(gateway.url, QUOTE, { input });
    expect(without.body.data.quote.details.currencyGasTopup).toBeNull();
  });

  it('ignores topupGas where the destination currency is the native one, as the reference does', async () => {
    const user = gateway.devnet.descriptor.accounts[0]!;
    const quote = await requestQuote(gateway, user, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: '10000000000000000',
      topupGas: true,
    });
    expect(quote.details.currencyGasTopup).toBeUndefined();
  });

  it('delivers the token and exactly the top-up in the same fill, and records it on the request', async () => {
    const user = gateway.devnet.descriptor.accounts[2]!;
    const recipient = fresh(0x70_0002);
    const usdcB = tokenOf(chainB, 'USDC');
    const quote = await requestQuote(gateway, user, {
      originCurrency: tokenOf(chainA, 'USDC'),
      destinationCurrency: usdcB,
      amount: '30000000',
      recipient,
      topupGas: true,
    });
    const requestId = quote.steps.at(-1)!.requestId;
    await executeSteps(gateway, quote.steps, user);
    await waitForStatus(requestId, 'success');
    expect(await nativeOf(chainB, recipient)).toBe(BigInt(quote.details.currencyGasTopup.amount));
    expect(await tokenBalance(chainB, usdcB, recipient)).toBe(BigInt(quote.details.currencyOut.amount));

    const { status, body } = await call(gateway.url, 'getRequests', { query: { id: requestId } });
    expect(status).toBe(200);
    const [request] = (body as { requests: any[] }).requests;
    expect(request.features).toContain('gas_top_up');
    const listed = await call(gateway.url, 'getRequests', { query: { features: 'gas_top_up', limit: '50' } });
    expect((listed.body as { requests: Array<{ id: string }> }).requests.map((r) => r.id)).toContain(requestId);
    expect(request.data.route.actual.currencyGasTopup).toMatchObject({
      amount: quote.details.currencyGasTopup.amount,
      currency: { chainId: chainB.chainId, address: zeroAddress },
    });
  });

  it('the unmodified SDK passing topupGas: true completes with the gas delivered', async () => {
    const account = gateway.devnet.descriptor.accounts[3]!;
    const recipient = fresh(0x70_0003);
    const usdcB = tokenOf(chainB, 'USDC');
    const wallet = createWalletClient({
      account: privateKeyToAccount(account.privateKey),
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    });
    const quote = await getClient().actions.getQuote(
      {
        chainId: chainA.chainId,
        toChainId: chainB.chainId,
        currency: tokenOf(chainA, 'USDC'),
        toCurrency: usdcB,
        amount: '20000000',
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
        options: { topupGas: true },
      },
      true,
    );
    const topup = BigInt(quote.details!.currencyGasTopup!.amount!);
    expect(topup).toBeGreaterThan(0n);
    const { data: result } = await getClient().actions.execute({ quote, wallet, onProgress: () => undefined });
    for (const item of result.steps.flatMap((step) => step.items ?? [])) expect(item.status).toBe('complete');
    expect(await nativeOf(chainB, recipient)).toBe(topup);
    expect(await tokenBalance(chainB, usdcB, recipient)).toBe(BigInt(quote.details!.currencyOut!.amount!));
  });

  it('refunds the deposit (SOLVER_BALANCE_TOO_LOW) when the solver cannot pay the top-up at fill time', async () => {
    const user = gateway.devnet.descriptor.accounts[1]!;
    const recipient = fresh(0x70_0004);
    const solver = privateKeyToAddress(gateway.devnet.descriptor.solver.privateKey);
    const usdcB = tokenOf(chainB, 'USDC');
    const quote = await requestQuote(gateway, user, {
      originCurrency: tokenOf(chainA, 'USDC'),
      destinationCurrency: usdcB,
      amount: '15000000',
      recipient,
      topupGas: true,
    });
    const requestId = quote.steps.at(-1)!.requestId;
    const client = publicClientOf(chainB);
    const held = await client.getBalance({ address: solver });
    // Between the quote and the deposit the solver's native on B falls below the top-up (anvil sets the balance).
    const short = BigInt(quote.details.currencyGasTopup.amount) - 1n;
    await client.request({ method: 'anvil_setBalance' as any, params: [solver, toHex(short)] as any });
    try {
      await executeSteps(gateway, quote.steps, user);
      await waitForStatus(requestId, 'refund');
    } finally {
      await client.request({ method: 'anvil_setBalance' as any, params: [solver, toHex(held)] as any });
    }
    expect(await nativeOf(chainB, recipient)).toBe(0n);
    expect(await tokenBalance(chainB, usdcB, recipient)).toBe(0n);
    const { body } = await call(gateway.url, 'getRequests', { query: { id: requestId } });
    const [request] = (body as { requests: any[] }).requests;
    expect(request.data.failReason).toBe('SOLVER_BALANCE_TOO_LOW');
    expect(request.data.route.actual.currencyGasTopup).toBeNull();
  });
});
