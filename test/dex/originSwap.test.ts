/**
 * Paying with a token the solver does not hold (LONG, no price feed, no inventory): the quote's steps approve LONG
 * to the SwapDepositRouter and swap it on the origin's Uniswap pools into a currency the solver holds, deposited
 * for the request in the user's own transaction; the solver fills on what the depository received. Over REST, on
 * the devnet's real pools, depository and solver.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createWalletClient,
  erc20Abi,
  http,
  parseEther,
  parseEventLogs,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { getClient } from '@relayprotocol/relay-sdk';
import { depositoryAbi } from '../../generated/contracts/index.js';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { executorOf } from '../../src/core/quote/originSwap.js';
import { getRequest } from '../../src/store/requests.repository.js';
import { post } from '../graphql/harness.js';
import { call } from '../helpers/conformance.js';
import { depositErc20 } from '../helpers/deposits.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';
import { configureRelaySdk } from '../helpers/relaySdk.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let accounts: DevnetAccount[];

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  accounts = gateway.devnet.descriptor.accounts;
  configureRelaySdk(gateway);
});
afterAll(async () => {
  await gateway?.stop();
});

const long = (chain: DevnetChain): Address => chain.longTailTokens.find((t) => t.symbol === 'LONG')!.address;
const erc20Balance = (chain: DevnetChain, token: Address, owner: Address) =>
  publicClientOf(chain).readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

describe('LONG(A) → USDC(B) over REST', () => {
  it('quotes approve + swapAndDeposit, and the fill delivers exactly the quoted USDC', async () => {
    const user = accounts[0]!;
    const amount = parseEther('300');
    const quote = await requestQuote(gateway, user, {
      originCurrency: long(chainA),
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: amount.toString(),
    });
    expect(quote.steps.map((s) => s.id)).toEqual(['approve', 'deposit']);
    expect(quote.steps[1]!.items[0]!.data.to).toBe(chainA.contracts.swapDepositRouter);
    expect(quote.details.currencyIn.currency.address.toLowerCase()).toBe(long(chainA).toLowerCase());
    expect(quote.details.currencyIn.amount).toBe(amount.toString());
    expect(quote.details.route.origin.router).toBe('uniswap-v3');
    const requestId = quote.steps[0]!.requestId;
    const stored = await getRequest(gateway.server.database.db, requestId);
    const leg = (stored!.quote as any).dex.origin;
    expect(leg).toMatchObject({ source: 'uniswap-v3', amountIn: amount.toString(), nativeOut: false });
    expect(stored!.originCurrency.toLowerCase()).toBe(tokenOf(chainA, 'USDC').toLowerCase());
    expect(stored!.amountIn).toBe(BigInt(leg.minAmountOut));

    const longBefore = await erc20Balance(chainA, long(chainA), user.address);
    const usdcBefore = await erc20Balance(chainB, tokenOf(chainB, 'USDC'), user.address);
    const receipts = await executeSteps(gateway, quote.steps, user);
    const [deposit] = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipts.get('deposit')!.logs });
    expect(deposit!.args.depositor).toBe(user.address);
    expect(deposit!.args.id).toBe(requestId);
    // Nothing moved between the quote and the swap: the pools paid exactly the quoted route.
    expect(deposit!.args.amount).toBe(BigInt(leg.amountOut));
    expect(await erc20Balance(chainA, long(chainA), user.address)).toBe(longBefore - amount);

    const status = await waitForStatus(gateway, requestId, ['success', 'refund', 'failure']);
    expect(status.status).toBe('success');
    expect(await erc20Balance(chainB, tokenOf(chainB, 'USDC'), user.address)).toBe(
      usdcBefore + BigInt(quote.details.currencyOut.amount),
    );

    // The request shows what the user paid (LONG) and the origin leg's router; refunds would return the USDC.
    const v3 = await call(gateway.url, 'getRequests', { query: { id: requestId } });
    const [request] = v3.body.requests;
    expect(request.requestType).toBe('Crosschain Swap');
    expect(request.data.slippageTolerance).toBe('50');
    const origin = request.data.route.quoted.origin;
    expect(origin.router).toBe('uniswap-v3');
    expect(origin.inputCurrency.currency.symbol).toBe('LONG');
    expect(origin.inputCurrency.amount).toBe(amount.toString());
    expect(origin.outputCurrency.currency.symbol).toBe('USDC');
    expect(request.data.refundCurrencyData.currency.symbol).toBe('USDC');
    const v2 = await call(gateway.url, 'getRequestsV2', { query: { id: requestId } });
    expect(v2.body.requests[0].data.metadata.currencyIn.currency.symbol).toBe('LONG');
  });
});

/** An address no test account uses: its balance moves only by what is sent to it. */
const fresh = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;
const nativeBalance = (chain: DevnetChain, owner: Address) => publicClientOf(chain).getBalance({ address: owner });

describe('LONG(A) → ETH(B)', () => {
  it('deposits native ETH from the swap and the fill pays the quoted ETH', async () => {
    const user = accounts[1]!;
    const recipient = fresh(0xe7_0001);
    const quote = await requestQuote(gateway, user, {
      originCurrency: long(chainA),
      destinationCurrency: zeroAddress,
      amount: parseEther('150').toString(),
      recipient,
    });
    const requestId = quote.steps.at(-1)!.requestId;
    const stored = await getRequest(gateway.server.database.db, requestId);
    expect((stored!.quote as any).dex.origin).toMatchObject({ nativeOut: true });
    expect(stored!.originCurrency).toBe(zeroAddress);
    expect(quote.details.refundCurrency.currency.address).toBe(zeroAddress);

    const receipts = await executeSteps(gateway, quote.steps, user);
    const [deposit] = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipts.get('deposit')!.logs });
    expect(deposit!.args).toMatchObject({ id: requestId, depositor: user.address, token: zeroAddress });
    expect(deposit!.args.amount).toBeGreaterThanOrEqual(stored!.amountIn);

    expect((await waitForStatus(gateway, requestId, ['success', 'refund', 'failure'])).status).toBe('success');
    expect(await nativeBalance(chainB, recipient)).toBe(BigInt(quote.details.currencyOut.amount));
  });
});

describe('sources and options', () => {
  const base = () => ({
    user: accounts[0]!.address,
    originChainId: chainA.chainId,
    destinationChainId: chainB.chainId,
    originCurrency: long(chainA),
    destinationCurrency: tokenOf(chainB, 'USDC'),
    amount: parseEther('10').toString(),
    tradeType: 'EXACT_INPUT',
  });

  it('honours included and excluded sources: the origin router names the one used', async () => {
    // The devnet's v2 has only the WETH/LONG pair: LONG reaches USDC through v3, and ETH through either.
    for (const [source, out] of [
      ['uniswap-v3', tokenOf(chainB, 'USDC')],
      ['uniswap-v2', zeroAddress],
    ] as const) {
      for (const field of ['includedOriginSwapSources', 'includedSwapSources']) {
        const body = { ...base(), destinationCurrency: out, [field]: [source] };
        const { status, body: answer } = await call(gateway.url, 'getQuote', { body });
        expect(status, JSON.stringify(answer)).toBe(200);
        expect(answer.details.route.origin.router).toBe(source);
        expect(answer.details.route.origin.includedSwapSources).toEqual([source]);
      }
    }
    const excluded = await call(gateway.url, 'getQuote', {
      body: { ...base(), excludedSwapSources: ['uniswap-v3'] },
    });
    expect(excluded.status).toBe(200);
    expect(excluded.body.details.route.origin.router).toBe('uniswap-v2');
    const none = await call(gateway.url, 'getQuote', {
      body: { ...base(), excludedSwapSources: ['uniswap-v3', 'uniswap-v2'] },
    });
    expect(none.status).toBe(400);
    expect(none.body.errorCode).toBe('NO_SWAP_ROUTES_FOUND');
    expect(none.body.message).toContain('LONG');
  });

  it('refuses what a swapped deposit cannot take with a 4xx naming the option', async () => {
    for (const [extra, field] of [
      [{ tradeType: 'EXACT_OUTPUT', amount: '1000000' }, 'tradeType'],
      [{ useDepositAddress: true }, 'useDepositAddress'],
    ] as const) {
      const { status, body } = await call(gateway.url, 'getQuote', { body: { ...base(), ...extra } });
      expect(status, JSON.stringify(body)).toBe(400);
      expect(body.errorCode).toBe('INVALID_INPUT');
      expect(body.message).toContain(field);
    }
    const executor = executorOf(chainB.contracts.swapDepositRouter);
    const toExecutor = await call(gateway.url, 'getQuote', { body: { ...base(), recipient: executor } });
    expect(toExecutor.status).toBe(400);
    expect(toExecutor.body.errorCode).toBe('INVALID_RECIPIENT');
    const zero = await call(gateway.url, 'getQuote', { body: { ...base(), amount: '0' } });
    expect(zero.status).toBe(400);
    expect(zero.body.errorCode).toBe('AMOUNT_TOO_LOW');
  });

  it('answers GraphQL `quote` with the same steps and origin leg', async () => {
    const query = `query Quote($input: QuoteInput!) { quote(input: $input) {
      steps { id items { data { ... on TransactionData { to } } } }
      details { currencyIn { amount currency { symbol } } route { origin { router outputCurrency { currency { symbol } } } } }
    } }`;
    const { status, body } = await post(gateway.url, query, { input: { ...base(), tradeType: 'EXACT_INPUT' } });
    expect(status, JSON.stringify(body)).toBe(200);
    const quote = body.data.quote;
    expect(quote.steps.map((step: any) => step.id)).toEqual(['approve', 'deposit']);
    expect(quote.steps[1].items[0].data.to).toBe(chainA.contracts.swapDepositRouter);
    expect(quote.details.currencyIn).toMatchObject({
      amount: parseEther('10').toString(),
      currency: { symbol: 'LONG' },
    });
    expect(quote.details.route.origin).toMatchObject({
      router: 'uniswap-v3',
      outputCurrency: { currency: { symbol: 'USDC' } },
    });
  });

  it('prices without steps (POST /price) with the same origin leg', async () => {
    const { status, body } = await call(gateway.url, 'getPrice', { body: base() });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.details.currencyIn.currency.symbol).toBe('LONG');
    expect(body.details.route.origin.outputCurrency.currency.symbol).toBe('USDC');
  });
});

describe('a deposit short of the minimum', () => {
  it('made by hand in the deposit currency for the request id is refunded to the user', async () => {
    const user = accounts[2]!;
    const quote = await requestQuote(gateway, user, {
      originCurrency: long(chainA),
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: parseEther('50').toString(),
    });
    const requestId = quote.steps.at(-1)!.requestId;
    const stored = await getRequest(gateway.server.database.db, requestId);
    const usdc = tokenOf(chainA, 'USDC');
    const before = await erc20Balance(chainA, usdc, user.address);
    await depositErc20(chainA, user, usdc, requestId, stored!.amountIn - 1n);
    const status = await waitForStatus(gateway, requestId, ['success', 'refund', 'failure']);
    expect(status.status).toBe('refund');
    // The refund returns what was deposited, in the deposit currency, to the user on the origin (less its gas).
    const deposited = stored!.amountIn - 1n;
    await expect
      .poll(() => erc20Balance(chainA, usdc, user.address), { timeout: 20_000 })
      .toBeGreaterThan(before - deposited);
    expect(before - (await erc20Balance(chainA, usdc, user.address))).toBeLessThan(deposited / 100n);
  });

  it('from a swap that pays less than the minimum reverts in the user’s transaction: nothing is deposited', async () => {
    const user = accounts[3]!;
    const mover = accounts[0]!;
    const onV3 = { includedSwapSources: ['uniswap-v3'] };
    const quote = await requestQuote(gateway, user, {
      originCurrency: long(chainA),
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: parseEther('100').toString(),
      slippageTolerance: '1',
      ...onV3,
    });
    const [approve, swapStep] = quote.steps as [any, any];
    await executeSteps(gateway, [approve], user);
    // Someone sells LONG into the same pool first: the user's swap now gets less than its minimum.
    const sale = await requestQuote(gateway, mover, {
      originCurrency: long(chainA),
      destinationCurrency: zeroAddress,
      amount: parseEther('2000').toString(),
      ...onV3,
    });
    await executeSteps(gateway, sale.steps, mover);

    const longBefore = await erc20Balance(chainA, long(chainA), user.address);
    const item = swapStep.items[0].data;
    const wallet = createWalletClient({
      account: privateKeyToAccount(user.privateKey),
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    });
    // Sent with a fixed gas limit, as a wallet that does not simulate would: mined, and reverted.
    const hash: Hex = await wallet.sendTransaction({ to: item.to, data: item.data, value: 0n, gas: 1_500_000n });
    const receipt = await publicClientOf(chainA).waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('reverted');
    expect(parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipt.logs })).toHaveLength(0);
    expect(await erc20Balance(chainA, long(chainA), user.address)).toBe(longBefore);
    const { body } = await call(gateway.url, 'getIntentStatus', { query: { requestId: swapStep.requestId } });
    expect(body.status).toBe('waiting');
  });
});

describe('@relayprotocol/relay-sdk', () => {
  it('completes LONG(A) → USDC(B) unmodified', async () => {
    const account = accounts[1]!;
    const recipient = fresh(0x5d1_0a01);
    const wallet = createWalletClient({
      account: privateKeyToAccount(account.privateKey),
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    });
    const quote = await getClient().actions.getQuote(
      {
        chainId: chainA.chainId,
        toChainId: chainB.chainId,
        currency: long(chainA),
        toCurrency: tokenOf(chainB, 'USDC'),
        amount: parseEther('20').toString(),
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
      },
      true,
    );
    const longBefore = await erc20Balance(chainA, long(chainA), account.address);
    const { data: result } = await getClient().actions.execute({ quote, wallet, onProgress: () => undefined });
    expect(result.steps.map((step) => step.id)).toEqual(['approve', 'deposit']);
    for (const item of result.steps.flatMap((step) => step.items ?? [])) expect(item.status).toBe('complete');
    const requestId = result.steps.at(-1)!.requestId!;
    const { body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    expect(body.status).toBe('success');
    expect(await erc20Balance(chainA, long(chainA), account.address)).toBe(longBefore - parseEther('20'));
    expect(await erc20Balance(chainB, tokenOf(chainB, 'USDC'), recipient)).toBe(
      BigInt(quote.details!.currencyOut!.amount!),
    );
  });
});
