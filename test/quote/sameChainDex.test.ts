/**
 * Same-chain swaps through the devnet's Uniswap pools, over REST on a real gateway: the quote's steps are the
 * user's own transactions (approve the router, then one router call paying the recipient), with no deposit and no
 * solver fill; sent as quoted they deliver exactly the quoted output when nothing moved, and the request reaches
 * `success` from the swap's receipt, whether the client posts `/transactions/single` or only polls the status. A
 * pool moved past the minimum makes the user's swap revert: `failure`, and nothing left the user's wallet.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createWalletClient,
  http,
  maxUint256,
  parseEther,
  parseUnits,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { routerSwapCall } from '../../src/core/dex/routerCalls.js';
import { getRequest } from '../../src/store/requests.repository.js';
import { post } from '../graphql/harness.js';
import { balanceOf } from '../helpers/chainReads.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { publicClientOf, requestQuote, waitForStatus, type WireQuote, type WireStep } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;

beforeAll(async () => {
  gateway = await startTestGateway();
  chainA = gateway.devnet.descriptor.chains[0]!;
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

const account = (i: number): DevnetAccount => gateway.devnet.descriptor.accounts[i]!;
const fresh = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;
const token = (symbol: string): Address =>
  symbol === 'ETH'
    ? zeroAddress
    : [...chainA.tokens, ...chainA.longTailTokens].find((t) => t.symbol === symbol)!.address;

/** A same-chain quote on chain A. */
const sameChain = (user: DevnetAccount, from: string, to: string, amount: bigint, extra: object = {}) =>
  requestQuote(gateway, user, {
    originChainId: chainA.chainId,
    destinationChainId: chainA.chainId,
    originCurrency: token(from),
    destinationCurrency: token(to),
    amount: amount.toString(),
    ...extra,
  });

function walletOf(user: DevnetAccount) {
  return createWalletClient({
    account: privateKeyToAccount(user.privateKey),
    chain: devnetViemChain(chainA),
    transport: http(chainA.rpcUrl),
  });
}

/** Sends each step's item as quoted; the swap's hash, and (with `gas`) without estimating, so a revert is mined. */
async function sendSteps(user: DevnetAccount, steps: WireStep[], options: { gas?: bigint } = {}): Promise<Hex> {
  const wallet = walletOf(user);
  let last: Hex | undefined;
  for (const step of steps) {
    const item = step.items[0]!;
    const hash = await wallet.sendTransaction({
      to: item.data.to,
      data: item.data.data,
      value: BigInt(item.data.value),
      ...(step.id === 'swap' && options.gas !== undefined ? { gas: options.gas } : {}),
    });
    const receipt = await publicClientOf(chainA).waitForTransactionReceipt({ hash });
    if (options.gas === undefined) expect(receipt.status, `${step.id} reverted`).toBe('success');
    last = hash;
  }
  return last!;
}

const postSingle = (requestId: Hex, txHash: Hex) =>
  call(gateway.url, 'indexSingleTransaction', {
    body: { requestId, chainId: String(chainA.chainId), tx: JSON.stringify({ txHash, chainId: chainA.chainId }) },
  });

function expectDexQuote(quote: WireQuote, router: Address | undefined = undefined): void {
  const ids = quote.steps.map((step) => step.id);
  expect(ids.at(-1)).toBe('swap');
  for (const step of quote.steps) expect(step.kind).toBe('transaction');
  const swap = quote.steps.at(-1)!;
  const dex = chainA.dex;
  const routers = [dex.uniswapV3.swapRouter, dex.uniswapV2.router].map((a) => a.toLowerCase());
  expect(routers).toContain(swap.items[0]!.data.to.toLowerCase());
  if (router !== undefined) expect(swap.items[0]!.data.to.toLowerCase()).toBe(router.toLowerCase());
  // The request id rides at the end of the router call.
  expect(swap.items[0]!.data.data.endsWith(swap.requestId.slice(2))).toBe(true);
  expect(swap.items[0]!.check?.endpoint).toBe(`/intents/status/v3?requestId=${swap.requestId}`);
  expect(ids).not.toContain('deposit');
  expect(['uniswap-v3', 'uniswap-v2']).toContain(quote.details.route.origin.router);
  expect(quote.details.route.destination.router).toBe(quote.details.route.origin.router);
  // The gateway sends nothing and takes nothing: the pools' fees and impact are the swap impact.
  expect(quote.fees.relayer.amount).toBe('0');
  expect(quote.fees.app.amount).toBe('0');
}

describe('same-chain swaps through the DEX', () => {
  it('USDC → LONG: approve + swap as quoted deliver exactly the quote; /transactions/single makes it success', async () => {
    const user = account(0);
    const recipient = fresh(0x5a_0001);
    const usdcBefore = await balanceOf(chainA, token('USDC'), user.address);
    const solverLongBefore = await balanceOf(chainA, token('LONG'), gateway.server.core.solver.address);
    const quote = await sameChain(user, 'USDC', 'LONG', parseUnits('100', 6), { recipient });
    expectDexQuote(quote);
    expect(quote.steps.map((s) => s.id)).toEqual(['approve', 'swap']);
    expect(quote.steps[0]!.items[0]!.data.to).toBe(token('USDC'));
    const quoted = BigInt(quote.details.currencyOut.amount);
    expect(quoted).toBeGreaterThan(0n);
    expect(BigInt(quote.details.currencyOut.minimumAmount)).toBeLessThan(quoted);
    expect(Number(quote.details.swapImpact.percent)).toBeLessThan(0);
    const requestId = quote.steps.at(-1)!.requestId;

    const stored = await getRequest(gateway.server.core.db, requestId);
    expect(stored?.status).toBe('waiting');
    expect((stored?.quote as any).dex.sameChain.tokenIn.toLowerCase()).toBe(token('USDC').toLowerCase());
    expect((stored?.quote as any).dex.sameChain).toMatchObject({
      chainId: chainA.chainId,
      amountOut: quoted.toString(),
      nativeIn: false,
      nativeOut: false,
    });

    const txHash = await sendSteps(user, quote.steps);
    expect(await balanceOf(chainA, token('LONG'), recipient)).toBe(quoted);
    expect(usdcBefore - (await balanceOf(chainA, token('USDC'), user.address))).toBe(parseUnits('100', 6));

    const indexed = await postSingle(requestId, txHash);
    expect(indexed.status, JSON.stringify(indexed.body)).toBe(200);
    const status = await waitForStatus(gateway, requestId, ['success', 'failure']);
    expect(status).toMatchObject({ status: 'success', inTxHashes: [txHash], txHashes: [txHash] });
    expect(status.originChainId).toBe(chainA.chainId);
    expect(status.destinationChainId).toBe(chainA.chainId);
    // No deposit and no fill: the solver paid nothing, and the ledger books nothing for it.
    expect(await balanceOf(chainA, token('LONG'), gateway.server.core.solver.address)).toBe(solverLongBefore);
    const { db } = gateway.server.database;
    const entries = await db.selectFrom('ledger_entries').selectAll().where('request_id', '=', requestId).execute();
    expect(entries).toEqual([]);
    // The status event (webhooks, /ws and subscriptions read it) is written as for any request.
    const events = await db.selectFrom('request_events').selectAll().where('request_id', '=', requestId).execute();
    expect(events.map((event) => event.status)).toContain('success');
    // The history finds it like any request.
    const history = await call(gateway.url, 'getRequestsV2', { query: { id: requestId } });
    expect(history.status).toBe(200);
    expect(history.body.requests[0]).toMatchObject({ id: requestId, status: 'success' });

    // The approval was exactly the input, which the swap spent: the next quote asks for one again.
    const again = await sameChain(user, 'USDC', 'LONG', parseUnits('10', 6), { recipient });
    expect(again.steps.map((s) => s.id)).toEqual(['approve', 'swap']);
  });

  it('LONG → ETH (native out): the recipient receives the quoted ETH; found by the status poll alone', async () => {
    const user = account(1);
    const recipient = fresh(0x5a_0002);
    const quote = await sameChain(user, 'LONG', 'ETH', parseEther('50'), { recipient });
    expectDexQuote(quote);
    const quoted = BigInt(quote.details.currencyOut.amount);
    const txHash = await sendSteps(user, quote.steps);
    expect(await balanceOf(chainA, zeroAddress, recipient)).toBe(quoted);
    // No /transactions/single: the poll finds the swap by its logs and calldata.
    const status = await waitForStatus(gateway, quote.steps.at(-1)!.requestId, ['success', 'failure']);
    expect(status).toMatchObject({ status: 'success', txHashes: [txHash] });
  });

  it('ETH → LONG (native in) and LONG → USDC deliver the quoted amounts', async () => {
    const user = account(2);
    const recipient = fresh(0x5a_0003);
    const ethIn = await sameChain(user, 'ETH', 'LONG', parseEther('0.2'), { recipient });
    expectDexQuote(ethIn);
    expect(ethIn.steps.map((s) => s.id)).toEqual(['swap']);
    expect(ethIn.steps[0]!.items[0]!.data.value).toBe(parseEther('0.2').toString());
    await sendSteps(user, ethIn.steps);
    expect(await balanceOf(chainA, token('LONG'), recipient)).toBe(BigInt(ethIn.details.currencyOut.amount));

    const toUsdc = await sameChain(user, 'LONG', 'USDC', parseEther('20'), { recipient });
    expectDexQuote(toUsdc);
    const hash = await sendSteps(user, toUsdc.steps);
    expect(await balanceOf(chainA, token('USDC'), recipient)).toBe(BigInt(toUsdc.details.currencyOut.amount));
    await postSingle(toUsdc.steps.at(-1)!.requestId, hash);
    await waitForStatus(gateway, toUsdc.steps.at(-1)!.requestId, ['success']);
  });

  it('EXACT_OUTPUT USDC → LONG: the minimum is the amount asked, and the swap delivers at least it', async () => {
    const user = account(3);
    const recipient = fresh(0x5a_0004);
    const quote = await sameChain(user, 'USDC', 'LONG', parseEther('5'), { recipient, tradeType: 'EXACT_OUTPUT' });
    expectDexQuote(quote);
    expect(quote.details.currencyOut.minimumAmount).toBe(parseEther('5').toString());
    await sendSteps(user, quote.steps);
    expect(await balanceOf(chainA, token('LONG'), recipient)).toBeGreaterThanOrEqual(parseEther('5'));
  });
});

describe('sources, fees and the inventory', () => {
  it('includedSwapSources / excludedSwapSources pick the pool or refuse with NO_SWAP_ROUTES_FOUND', async () => {
    const user = account(0);
    // v2 has only the WETH/LONG pair on the devnet: ETH → LONG only.
    const v2 = await sameChain(user, 'ETH', 'LONG', parseEther('0.01'), { includedSwapSources: ['uniswap-v2'] });
    expectDexQuote(v2, chainA.dex.uniswapV2.router);
    expect(v2.details.route.origin.router).toBe('uniswap-v2');
    const v3 = await sameChain(user, 'USDC', 'LONG', parseUnits('50', 6), { excludedSwapSources: ['uniswap-v2'] });
    expectDexQuote(v3, chainA.dex.uniswapV3.swapRouter);
    expect(v3.details.route.origin.router).toBe('uniswap-v3');

    for (const sources of [
      { includedSwapSources: ['solver-inventory'] },
      { excludedSwapSources: ['uniswap-v3', 'uniswap-v2'] },
      { includedSwapSources: ['uniswap-v2'] },
    ]) {
      const { status, body } = await call(gateway.url, 'getQuote', {
        body: {
          user: user.address,
          originChainId: chainA.chainId,
          destinationChainId: chainA.chainId,
          originCurrency: token('USDC'),
          destinationCurrency: token('LONG'),
          amount: '50000000',
          tradeType: 'EXACT_INPUT',
          ...sources,
        },
      });
      expect(status).toBe(400);
      expect(body.errorCode).toBe('NO_SWAP_ROUTES_FOUND');
      expect(body.message).toContain('LONG');
    }
  });

  it('USDC → WETH goes where the user gets more; the inventory alone when the DEX is excluded', async () => {
    const user = account(0);
    const inventory = await sameChain(user, 'USDC', 'WETH', parseUnits('100', 6), {
      includedSwapSources: ['solver-inventory'],
    });
    expect(inventory.steps.at(-1)!.id).toBe('deposit');
    const dex = await sameChain(user, 'USDC', 'WETH', parseUnits('100', 6), {
      excludedSwapSources: ['solver-inventory'],
    });
    expectDexQuote(dex);
    const best = await sameChain(user, 'USDC', 'WETH', parseUnits('100', 6));
    const outs = [inventory, dex].map((q) => BigInt(q.details.currencyOut.amount));
    const bestOut = BigInt(best.details.currencyOut.amount);
    expect(bestOut).toBe(outs[0]! > outs[1]! ? outs[0] : outs[1]);
    expect(best.steps.at(-1)!.id).toBe(outs[1]! > outs[0]! ? 'swap' : 'deposit');
  });

  it('app fees need a deposit: USDC → LONG is refused, USDC → WETH goes through the inventory', async () => {
    const user = account(0);
    const appFees = [{ recipient: account(1).address, fee: '50' }];
    const { status, body } = await call(gateway.url, 'getQuote', {
      body: {
        user: user.address,
        originChainId: chainA.chainId,
        destinationChainId: chainA.chainId,
        originCurrency: token('USDC'),
        destinationCurrency: token('LONG'),
        amount: '50000000',
        tradeType: 'EXACT_INPUT',
        appFees,
      },
    });
    expect(status).toBe(400);
    expect(body.errorCode).toBe('UNSUPPORTED_ROUTE');
    expect(body.message).toContain('appFees');
    const weth = await sameChain(user, 'USDC', 'WETH', parseUnits('100', 6), { appFees });
    expect(weth.steps.at(-1)!.id).toBe('deposit');
    expect(BigInt(weth.fees.app.amount)).toBeGreaterThan(0n);
  });

  it('forceSolverExecution takes the inventory; /price gives the quote numbers; 0 and oversized amounts are refused', async () => {
    const user = account(0);
    const forced = await sameChain(user, 'USDC', 'WETH', parseUnits('100', 6), { forceSolverExecution: true });
    expect(forced.steps.at(-1)!.id).toBe('deposit');
    const base = {
      user: user.address,
      originChainId: chainA.chainId,
      destinationChainId: chainA.chainId,
      originCurrency: token('USDC'),
      destinationCurrency: token('LONG'),
      tradeType: 'EXACT_INPUT',
    };
    const refused = async (body: object, code: string) => {
      const answer = await call(gateway.url, 'getQuote', { body: { ...base, amount: '50000000', ...body } });
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.errorCode).toBe(code);
    };
    await refused({ forceSolverExecution: true }, 'NO_SWAP_ROUTES_FOUND');
    await refused({ amount: '0' }, 'AMOUNT_TOO_LOW');
    // A million USDC for LONG through a 1% pool seeded with a few ETH: far past the impact limit, or the pool.
    const huge = await call(gateway.url, 'getQuote', {
      body: { ...base, amount: parseUnits('1000000', 6).toString() },
    });
    expect(huge.status).toBe(400);
    expect(['SWAP_IMPACT_TOO_HIGH', 'INSUFFICIENT_LIQUIDITY']).toContain(huge.body.errorCode);

    const price = await call(gateway.url, 'getPrice', { body: { ...base, amount: '50000000' } });
    expect(price.status, JSON.stringify(price.body)).toBe(200);
    const quote = await sameChain(user, 'USDC', 'LONG', parseUnits('50', 6));
    expect(price.body.details.currencyOut.amount).toBe(quote.details.currencyOut.amount);
    expect(price.body.details.route.origin.router).toBe(quote.details.route.origin.router);
  });

  it('GraphQL quote is the REST quote', async () => {
    const user = account(0);
    const input = {
      user: user.address,
      originChainId: chainA.chainId,
      destinationChainId: chainA.chainId,
      originCurrency: token('USDC'),
      destinationCurrency: token('LONG'),
      amount: '30000000',
      tradeType: 'EXACT_INPUT',
    };
    const rest = await requestQuote(gateway, user, input);
    const amount = 'amount minimumAmount amountUsd';
    const { status, body } = await post(
      gateway.url,
      `query Q($input: QuoteInput!) { quote(input: $input) {
        steps { id kind requestId items { data { ... on TransactionData { to value chainId data } } check { endpoint } } }
        details { currencyIn { ${amount} } currencyOut { ${amount} } rate swapImpact { usd percent }
          route { origin { router } destination { router } } }
      } }`,
      { input },
    );
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    const quote = body.data.quote;
    expect(quote.details).toEqual({
      currencyIn: pick(rest.details.currencyIn, ['amount', 'minimumAmount', 'amountUsd']),
      currencyOut: pick(rest.details.currencyOut, ['amount', 'minimumAmount', 'amountUsd']),
      rate: rest.details.rate,
      swapImpact: rest.details.swapImpact,
      route: {
        origin: { router: rest.details.route.origin.router },
        destination: { router: rest.details.route.destination.router },
      },
    });
    expect(quote.steps.map((s: any) => s.id)).toEqual(rest.steps.map((s) => s.id));
    expect(quote.steps.at(-1).items[0].data.to).toBe(rest.steps.at(-1)!.items[0]!.data.to);
  });
});

const pick = (value: any, keys: string[]) => Object.fromEntries(keys.map((key) => [key, value[key]]));

describe('a pool moved past the minimum', () => {
  it("the user's swap reverts: failure with TRANSACTION_REVERTED, nothing lost", async () => {
    const user = account(1);
    const mover = account(2);
    const recipient = fresh(0x5a_0007);
    const quote = await sameChain(user, 'USDC', 'LONG', parseUnits('200', 6), { recipient, slippageTolerance: '10' });
    expectDexQuote(quote);
    const requestId = quote.steps.at(-1)!.requestId;
    // Another trader buys LONG with 5 ETH through the same router first: LONG is dearer, the quote's minimum fails.
    const router = quote.steps.at(-1)!.items[0]!.data.to;
    const source = quote.details.route.origin.router as 'uniswap-v3' | 'uniswap-v2';
    await moveLongPrice(mover, router, source);

    const usdcBefore = await balanceOf(chainA, token('USDC'), user.address);
    const hash = await sendSteps(user, quote.steps, { gas: 1_000_000n });
    const receipt = await publicClientOf(chainA).getTransactionReceipt({ hash });
    expect(receipt.status).toBe('reverted');
    expect(await balanceOf(chainA, token('USDC'), user.address)).toBe(usdcBefore);
    expect(await balanceOf(chainA, token('LONG'), recipient)).toBe(0n);

    expect((await postSingle(requestId, hash)).status).toBe(200);
    const status = await waitForStatus(gateway, requestId, ['success', 'failure', 'refund']);
    expect(status).toMatchObject({ status: 'failure', failReason: 'TRANSACTION_REVERTED', inTxHashes: [hash] });
  });

  it('/transactions/single with the approval, or another transaction, leaves the request waiting', async () => {
    const user = account(3);
    const quote = await sameChain(user, 'USDC', 'LONG', parseUnits('20', 6));
    const requestId = quote.steps.at(-1)!.requestId;
    const wallet = walletOf(user);
    const approval = await wallet.sendTransaction({
      to: quote.steps[0]!.items[0]!.data.to,
      data: quote.steps[0]!.items[0]!.data.data,
    });
    await publicClientOf(chainA).waitForTransactionReceipt({ hash: approval });
    const { status, body } = await postSingle(requestId, approval);
    expect(status).toBe(200);
    expect(body.message).toContain('not the swap');
    const record = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    expect(record.body.status).toBe('waiting');
  });
});

/** Buys LONG for 5 ETH through `router` (the quote's source), moving LONG's price up. */
async function moveLongPrice(mover: DevnetAccount, router: Address, source: 'uniswap-v3' | 'uniswap-v2') {
  const wallet = walletOf(mover);
  const weth = token('WETH');
  const long = token('LONG');
  const amountIn = parseEther('5');
  const call = routerSwapCall(
    {
      chainId: chainA.chainId,
      blockNumber: 0n,
      tokenIn: weth,
      tokenOut: long,
      amountIn,
      amountOut: 0n,
      gasEstimate: 0n,
      netAmountOut: 0n,
      midAmountOut: 0n,
      priceImpactBps: 0n,
      hops: [
        {
          source,
          pool: zeroAddress,
          router,
          tokenIn: weth,
          tokenOut: long,
          fee: 10_000,
          amountIn,
          amountOut: 0n,
          ticksCrossed: 0,
        },
      ],
    },
    { recipient: mover.address, amountOutMinimum: 0n, deadline: maxUint256, nativeIn: true },
  );
  const hash = await wallet.sendTransaction(call);
  const receipt = await publicClientOf(chainA).waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
}
