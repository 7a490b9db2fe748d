/**
 * Every error of `POST /quote/v2` through the REST API against a real devnet: the HTTP status, the reference's
 * body `{ message, errorCode, errorData?, statusCode }` (checked against the contract by `call`), and that a
 * failed quote stores nothing (no new row in `requests`).
 *
 * One devnet and three gateways on it: the default one, a `variant` whose chain config disables chains and
 * breaks currencies (CHAIN_DISABLED, UNSUPPORTED_CURRENCY, UNSUPPORTED_ROUTE, PRICE_FETCH_FAILED), a
 * `faulty` one whose market throws an unexpected exception (UNKNOWN_ERROR), and `walletFails`, whose read of
 * the user's balance fails after the quote's request is stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  http,
  parseEther,
  parseUnits,
  zeroAddress,
  type Address,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { priceFeedAbi } from '../../generated/contracts/index.js';
import { devnetViemChain, type DevnetChain } from '../../src/chain/devnet.js';
import { hashApiKey } from '../../src/core/apiKeys/authenticate.js';
import type { ChainConfig } from '../../src/core/chains/types.js';
import { GatewayError } from '../../src/core/errors.js';
import { SWAP_SOURCE } from '../../src/core/chains/dexSources.js';
import { createServer, type GatewayServer } from '../../src/server/createServer.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const A = 31337;
const B = 31338;
const C = 31339;

/** Answers the devnet feeds start with (8 decimals): MNR is USD 0.5. */
const MNR_USD = parseUnits('0.5', 8);
/** A code-less address used as a price feed. */
const NO_CODE_FEED: Address = '0x00000000000000000000000000000000DeaDBeef';

const keys = {
  sponsor: 'quote-errors-sponsor-key',
  plain: 'quote-errors-plain-key',
  revoked: 'quote-errors-revoked-key',
};

let gateway: TestGateway;
/** Same devnet, chains A (no fills: depositEnabled false), B (MNR unpriced, WETH on a dead feed, USDT not bridgeable), C (disabled). */
let variant: { server: GatewayServer; url: string };
/** Same devnet, a market whose `usdPrice` throws a plain TypeError. */
let faulty: { server: GatewayServer; url: string };
/** Same devnet, a market whose read of the user's balance fails late; it counts the requests stored meanwhile. */
let walletFails: { server: GatewayServer; url: string; storedWhileReading: number[] };

interface Target {
  url: string;
  server: GatewayServer;
}

const chain = (id: number): DevnetChain => gateway.devnet.descriptor.chains.find((c) => c.chainId === id)!;
const token = (id: number, tokenId: string): Address => chain(id).tokens.find((t) => t.id === tokenId)!.address;
const user = (i = 0): Address => gateway.devnet.descriptor.accounts[i]!.address;

/** A 10 USDC bridge from A to B: valid, so each case changes only what it is about. */
const base = () => ({
  user: user(),
  originChainId: A,
  destinationChainId: B,
  originCurrency: token(A, 'usdc'),
  destinationCurrency: token(B, 'usdc'),
  amount: '10000000',
  tradeType: 'EXACT_INPUT',
});

/** An ETH bridge from A to B, the base of the call (`txs`) cases: 0.01 ETH in. */
const ethToB = () => ({
  ...base(),
  originCurrency: zeroAddress,
  destinationCurrency: zeroAddress,
  amount: parseEther('0.01').toString(),
});

async function countRequests(server: GatewayServer): Promise<number> {
  const { db } = server.database;
  const row = await db.selectFrom('requests').select(db.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

interface Expected {
  status: number;
  code: string;
  /** Exact `errorData`, or a pattern it matches. */
  data?: string | RegExp;
  message?: RegExp;
}

/** Quotes `body` on `target`, asserts the error and that no request was stored; returns the body. */
async function expectQuoteError(
  body: object,
  expected: Expected,
  options: { headers?: Record<string, string>; target?: Target } = {},
) {
  const target = options.target ?? { url: gateway.url, server: gateway.server };
  const before = await countRequests(target.server);
  const response = await call(target.url, 'getQuote', {
    body,
    ...(options.headers ? { headers: options.headers } : {}),
  });
  expect(response.body, JSON.stringify(response.body)).toMatchObject({
    errorCode: expected.code,
    statusCode: expected.status,
  });
  expect(response.status).toBe(expected.status);
  expect(typeof response.body.message).toBe('string');
  expect(response.body.message.length).toBeGreaterThan(0);
  expect(
    Object.keys(response.body).every((key) => ['message', 'errorCode', 'errorData', 'statusCode'].includes(key)),
  ).toBe(true);
  if (expected.data !== undefined) {
    if (typeof expected.data === 'string') expect(response.body.errorData).toBe(expected.data);
    else expect(response.body.errorData).toMatch(expected.data);
  }
  if (expected.message) expect(response.body.message).toMatch(expected.message);
  expect(await countRequests(target.server), 'a failed quote stored a request').toBe(before);
  return response.body;
}

/** Quotes `body` and expects a 200 that stored exactly one request. */
async function expectQuote(body: object, headers?: Record<string, string>) {
  const before = await countRequests(gateway.server);
  const response = await call(gateway.url, 'getQuote', { body, ...(headers ? { headers } : {}) });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(await countRequests(gateway.server)).toBe(before + 1);
  return response.body;
}

/** The variant chain config: every change lives in one chain so the others stay usable. */
function variantChains(chains: ChainConfig[]): ChainConfig[] {
  return chains.map((config) => {
    if (config.id === A) return { ...config, depositEnabled: false };
    if (config.id === C) return { ...config, disabled: true };
    return {
      ...config,
      currencies: config.currencies.map((currency) => {
        if (currency.id === 'mnr') {
          const { price: _price, ...unpriced } = currency;
          return unpriced;
        }
        if (currency.id === 'weth')
          return { ...currency, price: { kind: 'aggregatorV3' as const, feed: NO_CODE_FEED } };
        if (currency.id === 'usdt') return { ...currency, supportsBridging: false };
        return currency;
      }),
    };
  });
}

beforeAll(async () => {
  gateway = await startTestGateway();
  const started: GatewayServer[] = [];
  try {
    const variantServer = await createServer({ ...gateway.config, chains: variantChains(gateway.config.chains) });
    started.push(variantServer);
    variant = { server: variantServer, url: await variantServer.start() };
    // The one fake of this file: a chain cannot be made to throw a non-gateway exception on demand, so the
    // market's price read is replaced by one that throws a plain TypeError (an unexpected bug).
    const faultyServer = await createServer(gateway.config, {
      wrapMarket: (market) => ({
        ...market,
        usdPrice: async () => {
          throw new TypeError("Cannot read properties of undefined (reading 'secretInternalField')");
        },
      }),
    });
    started.push(faultyServer);
    faulty = { server: faultyServer, url: await faultyServer.start() };
    // The second fake: the user's balance is read while the quote's request is committed, and an RPC cannot be
    // made to fail one read only after that commit. This read waits, counts the stored requests, then fails.
    const storedWhileReading: number[] = [];
    const walletFailsServer: GatewayServer = await createServer(gateway.config, {
      wrapMarket: (market) => ({
        ...market,
        balanceOf: async (chainId) => {
          await sleep(300);
          storedWhileReading.push(await countRequests(walletFailsServer));
          throw new GatewayError(
            'RPC_HTTP_ERROR',
            `RPC of chain ${chainId} failed while reading the native balance: HTTP 502`,
          );
        },
      }),
    });
    started.push(walletFailsServer);
    walletFails = { server: walletFailsServer, url: await walletFailsServer.start(), storedWhileReading };
  } catch (error) {
    await Promise.all(started.map((server) => server.stop()));
    await gateway.stop();
    throw error;
  }
  const { db } = gateway.server.database;
  const now = Date.now();
  await insertApiKey(db, {
    id: 'sponsor',
    name: 'Sponsor',
    keyHash: hashApiKey(keys.sponsor),
    sponsorshipEnabled: true,
    // A sponsored quote reserves what its sponsor pays from the allowance: USD 1,000.
    sponsorshipAllowanceUsdMicros: 1_000_000_000n,
    now,
  });
  await insertApiKey(db, {
    id: 'plain',
    name: 'Plain',
    keyHash: hashApiKey(keys.plain),
    sponsorshipEnabled: false,
    now,
  });
  await insertApiKey(db, {
    id: 'revoked',
    name: 'Revoked',
    keyHash: hashApiKey(keys.revoked),
    sponsorshipEnabled: true,
    now,
  });
  await db.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', 'revoked').execute();
}, 300_000);

afterAll(async () => {
  await Promise.all([variant?.server.stop(), faulty?.server.stop(), walletFails?.server.stop()]);
  await gateway?.stop();
});

describe('POST /quote/v2 errors', () => {
  it('quotes the base request (so every failure below is caused by what the case changes)', async () => {
    const quote = await expectQuote(base());
    expect(quote.details.operation).toBe('bridge');
  });

  it('AMOUNT_TOO_LOW: a zero amount', async () => {
    await expectQuoteError({ ...base(), amount: '0' }, { status: 400, code: 'AMOUNT_TOO_LOW' });
    await expectQuoteError(
      { ...base(), amount: '0', tradeType: 'EXACT_OUTPUT' },
      { status: 400, code: 'AMOUNT_TOO_LOW' },
    );
  });

  it('AMOUNT_TOO_LOW: an EXACT_INPUT amount smaller than the fees', async () => {
    // One smallest unit of USDC (USD 0.000001) against an execution fee of at least USD 0.02.
    await expectQuoteError({ ...base(), amount: '1' }, { status: 400, code: 'AMOUNT_TOO_LOW' });
    await expectQuoteError({ ...base(), amount: '10000' }, { status: 400, code: 'AMOUNT_TOO_LOW' });
  });

  it('AMOUNT_TOO_LOW: a same-chain swap worth less than USD 0.05 (fees sponsored, so only the minimum applies)', async () => {
    const swap = { ...base(), destinationChainId: A, destinationCurrency: token(A, 'usdt'), subsidizeFees: true };
    const headers = { 'x-api-key': keys.sponsor };
    await expectQuoteError(
      { ...swap, amount: '49999' },
      { status: 400, code: 'AMOUNT_TOO_LOW', message: /same-chain/i },
      { headers },
    );
    const quote = await expectQuote({ ...swap, amount: '50000' }, headers);
    expect(quote.details.operation).toBe('swap');
  });

  it('INVALID_ADDRESS: user, recipient and refundTo, naming the field', async () => {
    await expectQuoteError({ ...base(), user: '0x1234' }, { status: 400, code: 'INVALID_ADDRESS', data: 'user' });
    await expectQuoteError(
      { ...base(), recipient: 'not-an-address' },
      { status: 400, code: 'INVALID_ADDRESS', data: 'recipient' },
    );
    await expectQuoteError(
      { ...base(), refundTo: `0x${'zz'.repeat(20)}` },
      { status: 400, code: 'INVALID_ADDRESS', data: 'refundTo' },
    );
  });

  it('INVALID_RECIPIENT: a token contract on the destination', async () => {
    await expectQuoteError({ ...base(), recipient: token(B, 'usdt') }, { status: 400, code: 'INVALID_RECIPIENT' });
    await expectQuoteError(
      { ...base(), recipient: token(B, 'usdc').toLowerCase() },
      { status: 400, code: 'INVALID_RECIPIENT' },
    );
  });

  it('INVALID_INPUT_CURRENCY and INVALID_OUTPUT_CURRENCY: currencies the chain does not list', async () => {
    const unknown = '0x000000000000000000000000000000000000dEaD';
    await expectQuoteError({ ...base(), originCurrency: unknown }, { status: 400, code: 'INVALID_INPUT_CURRENCY' });
    await expectQuoteError({ ...base(), originCurrency: 'DOGE' }, { status: 400, code: 'INVALID_INPUT_CURRENCY' });
    await expectQuoteError(
      { ...base(), destinationCurrency: unknown },
      { status: 400, code: 'INVALID_OUTPUT_CURRENCY' },
    );
    await expectQuoteError(
      { ...base(), destinationCurrency: 'DOGE' },
      { status: 400, code: 'INVALID_OUTPUT_CURRENCY' },
    );
  });

  it('UNSUPPORTED_CHAIN: an origin or destination chain the gateway does not serve', async () => {
    await expectQuoteError({ ...base(), originChainId: 999_999 }, { status: 400, code: 'UNSUPPORTED_CHAIN' });
    await expectQuoteError({ ...base(), destinationChainId: 1 }, { status: 400, code: 'UNSUPPORTED_CHAIN' });
  });

  it('CHAIN_DISABLED: a disabled origin or destination, and a destination that takes no fills', async () => {
    const target = variant;
    const toB = { ...base(), originChainId: C, originCurrency: token(C, 'usdc') };
    await expectQuoteError(toB, { status: 400, code: 'CHAIN_DISABLED' }, { target });
    await expectQuoteError(
      { ...base(), destinationChainId: C, destinationCurrency: token(C, 'usdc') },
      { status: 400, code: 'CHAIN_DISABLED' },
      { target },
    );
    const toA = {
      ...base(),
      originChainId: B,
      originCurrency: token(B, 'usdc'),
      destinationChainId: A,
      destinationCurrency: token(A, 'usdc'),
    };
    await expectQuoteError(toA, { status: 400, code: 'CHAIN_DISABLED' }, { target });
  });

  it('UNSUPPORTED_CURRENCY: a listed currency without a price source, as input or output', async () => {
    const target = variant;
    // Through the inventory, which prices by feed (the pools of B would swap MNR without one: sameChainDex.test.ts).
    const onB = {
      ...base(),
      originChainId: B,
      destinationChainId: B,
      excludedSwapSources: ['uniswap-v3', 'uniswap-v2'],
    };
    await expectQuoteError(
      {
        ...onB,
        originCurrency: token(B, 'mnr'),
        destinationCurrency: token(B, 'usdc'),
        amount: parseUnits('100', 18).toString(),
      },
      { status: 400, code: 'UNSUPPORTED_CURRENCY' },
      { target },
    );
    await expectQuoteError(
      { ...onB, originCurrency: token(B, 'usdc'), destinationCurrency: token(B, 'mnr') },
      { status: 400, code: 'UNSUPPORTED_CURRENCY' },
      { target },
    );
  });

  it('UNSUPPORTED_ROUTE: the same currency on the same chain to the same address', async () => {
    await expectQuoteError(
      { ...base(), destinationChainId: A, destinationCurrency: token(A, 'usdc') },
      { status: 400, code: 'UNSUPPORTED_ROUTE' },
    );
    await expectQuoteError(
      { ...base(), destinationChainId: A, destinationCurrency: token(A, 'usdc'), recipient: user() },
      { status: 400, code: 'UNSUPPORTED_ROUTE' },
    );
  });

  it('USER_RECIPIENT_MISMATCH: a wrap or unwrap to an address other than the user (the reference: wraps pay the caller)', async () => {
    const wrap = {
      ...base(),
      destinationChainId: A,
      originCurrency: zeroAddress,
      destinationCurrency: token(A, 'weth'),
    };
    const amount = '10000000000000000';
    await expectQuoteError(
      { ...wrap, amount, recipient: user(1) },
      { status: 400, code: 'USER_RECIPIENT_MISMATCH', data: 'recipient' },
    );
    await expectQuoteError(
      { ...wrap, originCurrency: token(A, 'weth'), destinationCurrency: zeroAddress, amount, recipient: user(1) },
      { status: 400, code: 'USER_RECIPIENT_MISMATCH', data: 'recipient' },
    );
    // To the user itself (given or by default) it is quoted; a bridge of the same ETH to someone else too.
    await expectQuote({ ...wrap, amount, recipient: user() });
    await expectQuote({ ...wrap, amount });
    await expectQuote({ ...ethToB(), recipient: user(1) });
  });

  it('UNSUPPORTED_ROUTE: a currency that does not support bridging, across chains', async () => {
    const usdt = { ...base(), originCurrency: token(A, 'usdt'), destinationCurrency: token(B, 'usdt') };
    await expectQuoteError(usdt, { status: 400, code: 'UNSUPPORTED_ROUTE' }, { target: variant });
  });

  it('NO_SWAP_ROUTES_FOUND: every swap source excluded, or none of the included ones offered', async () => {
    const swap = { ...base(), destinationCurrency: token(B, 'usdt') };
    await expectQuoteError(
      { ...swap, excludedSwapSources: [SWAP_SOURCE, 'uniswap-v3', 'uniswap-v2'] },
      { status: 400, code: 'NO_SWAP_ROUTES_FOUND' },
    );
    await expectQuoteError({ ...swap, includedSwapSources: ['curve'] }, { status: 400, code: 'NO_SWAP_ROUTES_FOUND' });
    await expectQuoteError(
      { ...swap, includedSwapSources: [SWAP_SOURCE], includedDestinationSwapSources: ['uniswap-v3'] },
      { status: 400, code: 'NO_SWAP_ROUTES_FOUND' },
    );
    // Naming a source is fine.
    await expectQuote({ ...swap, includedSwapSources: [SWAP_SOURCE], excludedSwapSources: ['uniswap-v3'] });
    await expectQuote({ ...swap, includedDestinationSwapSources: ['uniswap-v3'] });
  });

  it('INSUFFICIENT_LIQUIDITY: more than the solver holds on the destination', async () => {
    // The solver holds 10,000,000 USDC on B.
    await expectQuoteError(
      { ...base(), amount: parseUnits('20000000', 6).toString(), tradeType: 'EXACT_OUTPUT' },
      { status: 400, code: 'INSUFFICIENT_LIQUIDITY', data: /^available=\d+$/ },
    );
    // 5,000 ETH in (USD 15M) for USDC out.
    await expectQuoteError(
      { ...base(), originCurrency: zeroAddress, amount: parseEther('5000').toString() },
      { status: 400, code: 'INSUFFICIENT_LIQUIDITY', data: /^available=\d+$/ },
    );
  });

  it('INVALID_SLIPPAGE_TOLERANCE: anything but an integer from 0 to 10000', async () => {
    for (const slippageTolerance of ['-1', '10001', '1.5', 'abc']) {
      await expectQuoteError({ ...base(), slippageTolerance }, { status: 400, code: 'INVALID_SLIPPAGE_TOLERANCE' });
    }
    await expectQuoteError(
      { ...base(), latePaymentSlippageTolerance: '10001' },
      { status: 400, code: 'INVALID_SLIPPAGE_TOLERANCE' },
    );
  });

  it("INVALID_EXTRA_TXS: a call without `to`, a call to the solver's contracts, a gas limit too small", async () => {
    await expectQuoteError(
      { ...ethToB(), txs: [{ value: '0', data: '0x' }] },
      { status: 400, code: 'INVALID_EXTRA_TXS', data: 'txs/0/to' },
    );
    await expectQuoteError(
      {
        ...ethToB(),
        txs: [
          { to: user(1), value: '0', data: '0x' },
          { to: chain(B).contracts.onlyOwnerMulticaller, value: '0', data: '0x' },
        ],
      },
      { status: 400, code: 'INVALID_EXTRA_TXS', data: 'txs/1/to' },
    );
    await expectQuoteError(
      { ...ethToB(), txs: [{ to: user(1), value: '0', data: '0x' }], txsGasLimit: 21_000 },
      { status: 400, code: 'INVALID_EXTRA_TXS' },
    );
  });

  it('INVALID_EXTRA_TXS: calls that send more native value than the fill delivers', async () => {
    // 0.01 ETH in: the fill delivers 0.01 ETH minus the fees, and the two calls want just under 0.01 ETH.
    const half = parseEther('0.005');
    const txs = [
      { to: user(1), value: half.toString(), data: '0x' },
      { to: user(2), value: (half - 1n).toString(), data: '0x' },
    ];
    await expectQuoteError({ ...ethToB(), txs }, { status: 400, code: 'INVALID_EXTRA_TXS' });
  });

  it('INVALID_EXTRA_TXS: EXACT_INPUT calls that send more native value than the whole input (a value error, not a failed simulation)', async () => {
    await expectQuoteError(
      { ...ethToB(), txs: [{ to: user(1), value: parseEther('1').toString(), data: '0x' }] },
      { status: 400, code: 'INVALID_EXTRA_TXS' },
    );
  });

  it('INVALID_EXTRA_TXS: EXACT_OUTPUT calls that send more native value than the exact output', async () => {
    await expectQuoteError(
      {
        ...ethToB(),
        tradeType: 'EXACT_OUTPUT',
        txs: [{ to: user(1), value: parseEther('0.02').toString(), data: '0x' }],
      },
      { status: 400, code: 'INVALID_EXTRA_TXS' },
    );
  });

  it('EXTRA_TXS_NOT_SUPPORTED: calls with EXPECTED_OUTPUT', async () => {
    await expectQuoteError(
      { ...ethToB(), tradeType: 'EXPECTED_OUTPUT', txs: [{ to: user(1), value: '0', data: '0x' }] },
      { status: 400, code: 'EXTRA_TXS_NOT_SUPPORTED' },
    );
  });

  it('DESTINATION_TX_FAILED: a call that reverts, with the decoded reason in errorData', async () => {
    // Only the feed's owner may set answers: from the multicaller the call reverts with Unauthorized(multicaller).
    const feed = chain(B).tokens.find((t) => t.id === 'usdc')!.priceFeed;
    const data = encodeFunctionData({ abi: priceFeedAbi, functionName: 'setAnswer', args: [1n] });
    const body = await expectQuoteError(
      { ...ethToB(), txs: [{ to: feed, value: '0', data }] },
      { status: 400, code: 'DESTINATION_TX_FAILED' },
    );
    expect(body.errorData.toLowerCase()).toBe(`unauthorized(${chain(B).contracts.multicaller.toLowerCase()})`);
    // The message names the call's target, not the solver's fill contract the simulation was sent to (#20 item 6).
    expect(body.message.toLowerCase()).toContain(`the call to ${feed.toLowerCase()} would revert on`);
    expect(body.message.toLowerCase()).not.toContain(chain(B).contracts.onlyOwnerMulticaller.toLowerCase());
  });

  it('SWAP_IMPACT_TOO_HIGH: fees above maxPriceImpactBps of the input but below the input; overridePriceImpact lifts it', async () => {
    const maxBps = BigInt(gateway.config.quote.maxPriceImpactBps);
    const price = await call(gateway.url, 'getPrice', { body: base() });
    expect(price.status, JSON.stringify(price.body)).toBe(200);
    // A bridge has no swap or platform fee: the relayer fee is the execution fee, a fixed amount.
    const fee = BigInt(price.body.fees.relayer.amount);
    expect(fee).toBeGreaterThan(0n);
    // Fees at twice the limit's share of the input (50% with the default 25%), well below the whole input.
    const amount = (fee * 10_000n) / (2n * maxBps);
    expect(amount).toBeGreaterThan(fee);
    const tiny = { ...base(), amount: amount.toString() };
    await expectQuoteError(tiny, { status: 400, code: 'SWAP_IMPACT_TOO_HIGH' });
    const quote = await expectQuote({ ...tiny, overridePriceImpact: true });
    expect(BigInt(quote.details.currencyOut.amount)).toBeGreaterThan(0n);
    expect(BigInt(quote.details.currencyOut.amount)).toBeLessThan(amount);
  });

  it('PRICE_FETCH_FAILED (503): a price feed with no code', async () => {
    const onB = {
      ...base(),
      originChainId: B,
      destinationChainId: B,
      originCurrency: token(B, 'weth'),
      destinationCurrency: token(B, 'usdc'),
    };
    const body = await expectQuoteError(
      { ...onB, amount: parseEther('1').toString() },
      { status: 503, code: 'PRICE_FETCH_FAILED' },
      { target: variant },
    );
    expect(body.message).toContain(NO_CODE_FEED);
  });

  it('PRICE_FETCH_FAILED (503): a feed answering 0, and the quote recovers once the answer is restored', async () => {
    const devnetChain = chain(A);
    const viemChain = devnetViemChain(devnetChain);
    const transport = http(devnetChain.rpcUrl);
    const owner = createWalletClient({
      account: privateKeyToAccount(gateway.devnet.descriptor.deployer.privateKey),
      chain: viemChain,
      transport,
    });
    const client = createPublicClient({ chain: viemChain, transport, pollingInterval: 50 });
    const feed = devnetChain.tokens.find((t) => t.id === 'mnr')!.priceFeed;
    const setAnswer = async (answer: bigint) => {
      const hash = await owner.writeContract({
        address: feed,
        abi: priceFeedAbi,
        functionName: 'setAnswer',
        args: [answer],
      });
      expect((await client.waitForTransactionReceipt({ hash, pollingInterval: 50 })).status).toBe('success');
    };
    // MNR on A is priced nowhere else in this file; the wait outlives the gateway's one-block price cache anyway.
    const mnr = { ...base(), originCurrency: token(A, 'mnr'), amount: parseUnits('1000', 18).toString() };
    await setAnswer(0n);
    try {
      await sleep(1_100);
      await expectQuoteError(mnr, { status: 503, code: 'PRICE_FETCH_FAILED' });
    } finally {
      await setAnswer(MNR_USD);
    }
    await sleep(1_100);
    await expectQuote(mnr);
  });

  it('UNAUTHORIZED (401): an unknown or revoked x-api-key, and subsidizeFees without a key', async () => {
    await expectQuoteError(base(), { status: 401, code: 'UNAUTHORIZED' }, { headers: { 'x-api-key': 'no-such-key' } });
    await expectQuoteError(base(), { status: 401, code: 'UNAUTHORIZED' }, { headers: { 'x-api-key': keys.revoked } });
    await expectQuoteError({ ...base(), subsidizeFees: true }, { status: 401, code: 'UNAUTHORIZED' });
    // A known key without sponsorship quotes normally.
    await expectQuote(base(), { 'x-api-key': keys.plain });
  });

  it('FORBIDDEN (403): subsidizeFees with a key whose sponsorship is disabled', async () => {
    await expectQuoteError(
      { ...base(), subsidizeFees: true },
      { status: 403, code: 'FORBIDDEN' },
      { headers: { 'x-api-key': keys.plain } },
    );
  });

  it('INVALID_INPUT: options the gateway does not support, naming the field', async () => {
    // usePermit is supported, but only for tokens with a permit: WETH has none.
    await expectQuoteError(
      { ...base(), originCurrency: token(A, 'weth'), destinationCurrency: token(B, 'weth'), usePermit: true },
      { status: 400, code: 'INVALID_INPUT', data: 'usePermit' },
    );
    await expectQuoteError(
      { ...base(), topupGasAmount: '1000000' },
      { status: 400, code: 'INVALID_INPUT', data: 'topupGasAmount' },
    );
    // Turned off explicitly, they are no problem.
    await expectQuote({ ...base(), usePermit: false, topupGas: false, useDepositAddress: false });
  });

  it("answers the reference's own code for the options it cannot honour, naming the option", async () => {
    await expectQuoteError({ ...base(), fixedRate: '1' }, { status: 400, code: 'NO_QUOTES', data: 'fixedRate' });
    const authorization = {
      chainId: B,
      address: '0x00000000000000000000000000000000000aBc01',
      nonce: 0,
      yParity: 0,
      r: `0x${'11'.repeat(32)}`,
      s: `0x${'22'.repeat(32)}`,
    };
    await expectQuoteError(
      { ...base(), authorizationList: [authorization] },
      { status: 400, code: 'UNSUPPORTED_EXECUTION_TYPE', data: 'authorizationList' },
    );
    await expectQuoteError(
      { ...base(), gasLimitForDepositSpecifiedTxs: 100_000 },
      { status: 400, code: 'INVALID_GAS_LIMIT_FOR_DEPOSIT_SPECIFIED_TXS', data: 'gasLimitForDepositSpecifiedTxs' },
    );
    // EVM chains charge no rent: the deprecated rent sponsorship changes nothing.
    await expectQuote({ ...base(), subsidizeRent: true });
  });

  it("RPC_HTTP_ERROR (502): the user's balance cannot be read; the request stored meanwhile is removed again", async () => {
    const before = await countRequests(walletFails.server);
    await expectQuoteError(
      ethToB(),
      { status: 502, code: 'RPC_HTTP_ERROR', message: /native balance/ },
      { target: walletFails },
    );
    expect(walletFails.storedWhileReading, 'the request was not stored while the balance was read').toEqual([
      before + 1,
    ]);
  });

  it('UNKNOWN_ERROR (500): an unexpected exception leaves masked, saying nothing internal', async () => {
    const body = await expectQuoteError(base(), { status: 500, code: 'UNKNOWN_ERROR' }, { target: faulty });
    expect(body).toEqual({ message: 'Unexpected error', errorCode: 'UNKNOWN_ERROR', statusCode: 500 });
    expect(JSON.stringify(body)).not.toMatch(/TypeError|secretInternalField|undefined|stack/);
  });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
