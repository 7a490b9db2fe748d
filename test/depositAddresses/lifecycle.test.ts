/**
 * Deposit addresses end to end on the devnet, from outside: quotes through the REST API, then only plain
 * transfers (a wallet's native send, an ERC-20 `transfer`) to the address the quote gave. The gateway finds
 * the transfer, sweeps it into the depository and fills or refunds; balances are read on chain.
 */
import { randomBytes } from 'node:crypto';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, erc20Abi, http, parseEther, zeroAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { multicall3Abi } from '../../generated/contracts/index.js';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { hashApiKey } from '../../src/core/apiKeys/authenticate.js';
import { configureWebhook } from '../../src/core/webhooks/configureWebhook.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import { getRequest } from '../../src/store/requests.repository.js';
import { collectSubscription, connectGraphQL, connectRaw, wsUrlOf } from '../events/clients.js';
import { post } from '../graphql/harness.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';
import { balanceOf } from '../helpers/chainReads.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;
let bob: DevnetAccount;
let receiver: Receiver;
const apiKey = `igw_${randomBytes(24).toString('base64url')}`;

beforeAll(async () => {
  // MNR is taken off chain A's list: a transfer of it to a deposit address is of an unlisted token.
  gateway = await startTestGateway(
    {
      webhooks: {
        secretKey: undefined,
        timeoutMs: 1_000,
        retryBaseMs: 150,
        retryMaxMs: 1_000,
        pollIntervalMs: undefined,
        retentionDays: 30,
      },
    },
    {
      configure: (config) => ({
        ...config,
        chains: config.chains.map((chain, index) =>
          index === 0 ? { ...chain, currencies: chain.currencies.filter((c) => c.symbol !== 'MNR') } : chain,
        ),
      }),
    },
  );
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [alice, bob] = gateway.devnet.descriptor.accounts as [DevnetAccount, DevnetAccount];
  receiver = await startReceiver(apiKey);
  const db = gateway.server.database.db;
  await insertApiKey(db, {
    id: 'depaddr-key',
    name: 'Deposit addresses',
    keyHash: hashApiKey(apiKey),
    now: Date.now(),
  });
  await configureWebhook(gateway.server.core, {
    apiKeyId: 'depaddr-key',
    webhook: { url: receiver.url },
    apiKey,
  });
});
afterAll(async () => {
  await gateway?.stop();
  await receiver?.close();
});

const fresh = (n: number): Address => `0x${(n * 0x10000).toString(16).padStart(40, '0')}`;
function wallet(account: DevnetAccount, chain = chainA) {
  return createWalletClient({
    account: privateKeyToAccount(account.privateKey),
    chain: devnetViemChain(chain),
    transport: http(chain.rpcUrl),
  });
}

/** A plain ERC-20 transfer (what an exchange withdrawal is), mined. */
async function sendToken(
  from: DevnetAccount,
  token: Address,
  to: Address,
  amount: bigint,
  chain: DevnetChain = chainA,
): Promise<Hex> {
  const hash = await wallet(from, chain).writeContract({
    address: token,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [to, amount],
  });
  await publicClientOf(chain).waitForTransactionReceipt({ hash });
  return hash;
}
async function sendNative(from: DevnetAccount, to: Address, value: bigint): Promise<Hex> {
  const hash = await wallet(from).sendTransaction({ to, value, data: '0x' });
  await publicClientOf(chainA).waitForTransactionReceipt({ hash });
  return hash;
}

async function waitFor<T>(what: string, read: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function strictUsdc(refundTo: Address, recipient: Address, amount = '20000000', extra = {}, headers = {}) {
  const q = await requestQuote(
    gateway,
    alice,
    {
      originCurrency: tokenOf(chainA, 'USDC'),
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount,
      recipient,
      refundTo,
      useDepositAddress: true,
      strict: true,
      ...extra,
    },
    headers,
  );
  const step = q.steps[0] as unknown as { requestId: Hex; depositAddress: Address };
  return { q, requestId: step.requestId, address: step.depositAddress, amountIn: BigInt(q.details.currencyIn.amount) };
}

async function requestsAt(address: Address): Promise<any[]> {
  const { status, body } = await call(gateway.url, 'getRequestsV2', { query: { depositAddress: address } });
  expect(status).toBe(200);
  return (body as { requests: any[] }).requests;
}

describe('strict deposit addresses', () => {
  it('USDC exact: filled with exactly the quoted output', async () => {
    const recipient = fresh(0xe1);
    const { q, requestId, address, amountIn } = await strictUsdc(fresh(0xe2), recipient);
    const hash = await sendToken(bob, tokenOf(chainA, 'USDC'), address, amountIn);
    const status = await waitForStatus(gateway, requestId, ['success', 'refund', 'failure']);
    expect(status.status).toBe('success');
    expect(await balanceOf(chainB, tokenOf(chainB, 'USDC'), recipient)).toBe(BigInt(q.details.currencyOut.amount));
    expect(await balanceOf(chainA, tokenOf(chainA, 'USDC'), address)).toBe(0n);
    const [record] = await requestsAt(address);
    expect(record).toMatchObject({ id: requestId, status: 'success' });
    expect(record.depositAddress).toMatchObject({
      address: address.toLowerCase(),
      depositAddressType: 'strict',
      depositor: bob.address.toLowerCase(),
      depositTxHash: hash,
    });
    const v3 = await call(gateway.url, 'getRequests', { query: { depositAddress: address } });
    expect((v3.body as { requests: any[] }).requests[0].depositAddress).toMatchObject({
      type: 'strict',
      depositor: bob.address.toLowerCase(),
    });
  });

  it('GET /deposit-addresses/v1 finds an address by address and by request id; reindex answers 429 inside its cooldown', async () => {
    const refundTo = fresh(0xed);
    const { requestId, address } = await strictUsdc(refundTo, fresh(0xee));
    const byAddress = await call(gateway.url, 'getDepositAddress', { query: { address } });
    expect(byAddress.status).toBe(200);
    expect(byAddress.body).toMatchObject({
      depositAddress: address,
      type: 'strict',
      requestId,
      chainId: chainA.chainId,
    });
    expect((byAddress.body as { refundTo: string }).refundTo).toBe(refundTo.toLowerCase());
    const byRequest = await call(gateway.url, 'getDepositAddress', { query: { requestId } });
    expect(byRequest.body).toMatchObject({ depositAddress: address });
    const unknown = await call(gateway.url, 'getDepositAddress', { query: { address: fresh(0xef) } });
    expect(unknown.status).toBe(404);
    expect((await call(gateway.url, 'getDepositAddress', { query: {} })).status).toBe(400);

    await sendToken(bob, tokenOf(chainA, 'MNR'), address, 5n);
    const reindex = await call(gateway.url, 'reindexDepositAddress', {
      body: { chainId: chainA.chainId, depositAddress: address },
    });
    expect(reindex.status).toBe(200);
    expect(reindex.body).toMatchObject({ failedCurrencies: 0 });
    const again = await call(gateway.url, 'reindexDepositAddress', {
      body: { chainId: chainA.chainId, depositAddress: address },
    });
    expect(again.status).toBe(429);
    expect(again.body).toMatchObject({ errorCode: 'RATE_LIMITED', message: expect.any(String) });
    const missing = await call(gateway.url, 'reindexDepositAddress', {
      body: { chainId: chainA.chainId, depositAddress: fresh(0xef) },
    });
    expect(missing.status).toBe(404);
  });

  it('USDC short: refunded to refundTo less the gas, nothing delivered', async () => {
    const [refundTo, recipient] = [fresh(0xe3), fresh(0xe4)];
    const { requestId, address, amountIn } = await strictUsdc(refundTo, recipient);
    const sent = amountIn - 5_000_000n;
    await sendToken(bob, tokenOf(chainA, 'USDC'), address, sent);
    const status = await waitForStatus(gateway, requestId, ['success', 'refund', 'failure']);
    expect(status).toMatchObject({ status: 'refund', failReason: 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL' });
    const refunded = await balanceOf(chainA, tokenOf(chainA, 'USDC'), refundTo);
    expect(refunded).toBeGreaterThan(0n);
    expect(refunded).toBeLessThan(sent);
    expect(await balanceOf(chainB, tokenOf(chainB, 'USDC'), recipient)).toBe(0n);
  });

  it('USDC over: filled with the quoted output and the excess refunded separately to refundTo, with its event', async () => {
    const [refundTo, recipient] = [fresh(0xe5), fresh(0xe6)];
    const { q, requestId, address, amountIn } = await strictUsdc(
      refundTo,
      recipient,
      '20000000',
      {},
      {
        'x-api-key': apiKey,
      },
    );
    // Every change of the request, the excess refund's too, as a subscriber that never completes sees them.
    const graphqlWs = connectGraphQL(wsUrlOf(gateway.url, '/graphql'));
    const updates = collectSubscription(
      graphqlWs,
      'subscription($id: ID!) { requestUpdates(filter: { requestIds: [$id] }) { status txHashes } }',
      { id: requestId },
    );
    const excess = 7_000_000n;
    await sendToken(bob, tokenOf(chainA, 'USDC'), address, amountIn + excess);
    expect((await waitForStatus(gateway, requestId, ['success', 'refund', 'failure'])).status).toBe('success');
    expect(await balanceOf(chainB, tokenOf(chainB, 'USDC'), recipient)).toBe(BigInt(q.details.currencyOut.amount));
    const refunded = await waitFor('the excess refund', async () => {
      const balance = await balanceOf(chainA, tokenOf(chainA, 'USDC'), refundTo);
      return balance > 0n ? balance : undefined;
    });
    expect(refunded).toBeLessThan(excess);
    expect(refunded).toBeGreaterThan(excess - 1_000_000n);
    // Both legs show on the request: the fill on the destination, the excess refund (to refundTo) on the origin.
    await waitFor('the refund leg in txHashes', async () => {
      const { body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
      return (body as { txHashes: Hex[] }).txHashes.length === 2 ? true : undefined;
    });
    const v3 = await call(gateway.url, 'getRequests', { query: { id: requestId } });
    const outTxs = (v3.body as { requests: any[] }).requests[0].data.outTxs as Array<{ txHash: Hex; chainId: number }>;
    expect(outTxs.map((tx) => tx.chainId).sort()).toEqual([chainA.chainId, chainB.chainId].sort());
    const fill = outTxs.find((tx) => tx.chainId === chainB.chainId)!;
    const refund = outTxs.find((tx) => tx.chainId === chainA.chainId)!;
    expect((await publicClientOf(chainB).getTransactionReceipt({ hash: fill.txHash })).status).toBe('success');
    const refundReceipt = await publicClientOf(chainA).getTransactionReceipt({ hash: refund.txHash });
    expect(refundReceipt.status).toBe('success');
    expect(refundReceipt.to?.toLowerCase()).toBe(chainA.contracts.depository.toLowerCase());

    // The excess refund is told like any status change: a webhook and a subscription event carry its hash.
    const hasRefund = (txHashes: unknown) => Array.isArray(txHashes) && txHashes.includes(refund.txHash);
    await receiver.waitFor(
      (all) => all.some((w) => w.verified && w.json?.data?.requestId === requestId && hasRefund(w.json.data.txHashes)),
      15_000,
    );
    await waitFor('the refund event on graphql-ws', async () =>
      updates.results.some((r) => hasRefund(r.data?.requestUpdates?.txHashes)) ? true : undefined,
    );
    await graphqlWs.dispose();
  });

  it('a listed currency other than the quoted one is refunded to refundTo; the order still waits', async () => {
    const [refundTo, recipient] = [fresh(0xe7), fresh(0xe8)];
    const { requestId, address } = await strictUsdc(refundTo, recipient);
    const sent = 15_000_000n;
    await sendToken(bob, tokenOf(chainA, 'USDT'), address, sent);
    const refunded = await waitFor('the USDT refund', async () => {
      const balance = await balanceOf(chainA, tokenOf(chainA, 'USDT'), refundTo);
      return balance > 0n ? balance : undefined;
    });
    expect(refunded).toBeLessThan(sent);
    const { body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    expect((body as { status: string }).status).toBe('waiting');
    expect(await balanceOf(chainB, tokenOf(chainB, 'USDC'), recipient)).toBe(0n);
  });

  it('an unlisted token is left at the address', async () => {
    const { address } = await strictUsdc(fresh(0xe9), fresh(0xea));
    const mnr = tokenOf(chainA, 'MNR');
    await sendToken(bob, mnr, address, 1_000n);
    // Another transfer after it, to the same kind of address, is processed: the watcher read past the MNR one.
    const later = await strictUsdc(fresh(0xeb), fresh(0xec));
    await sendToken(bob, tokenOf(chainA, 'USDC'), later.address, later.amountIn);
    expect((await waitForStatus(gateway, later.requestId, ['success', 'refund', 'failure'])).status).toBe('success');
    expect(await balanceOf(chainA, mnr, address)).toBe(1_000n);
  });
});

describe('reindex', () => {
  it('with targetChainId: a transfer sent on the wrong chain is found there, swept and refunded to refundTo', async () => {
    const refundTo = fresh(0xd5);
    const { requestId, address, amountIn } = await strictUsdc(refundTo, fresh(0xd6));
    const usdcB = tokenOf(chainB, 'USDC');
    await sendToken(bob, usdcB, address, amountIn, chainB);
    // Chain B's watcher does not follow an address quoted on chain A: the funds wait there.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await balanceOf(chainB, usdcB, address)).toBe(amountIn);

    const reindex = await call(gateway.url, 'reindexDepositAddress', {
      body: { chainId: chainA.chainId, depositAddress: address, targetChainId: chainB.chainId },
    });
    expect(reindex.status, JSON.stringify(reindex.body)).toBe(200);
    const triggered = (reindex.body as { triggeredCurrencies: Array<{ currency: string; symbol: string }> })
      .triggeredCurrencies;
    expect(triggered.map((t) => ({ ...t, currency: t.currency.toLowerCase() }))).toContainEqual({
      currency: usdcB.toLowerCase(),
      symbol: 'USDC',
      balance: amountIn.toString(),
    });
    const refunded = await waitFor('the wrong-chain refund', async () => {
      const balance = await balanceOf(chainB, usdcB, refundTo);
      return balance > 0n ? balance : undefined;
    });
    expect(refunded).toBeLessThan(amountIn);
    expect(refunded).toBeGreaterThan(amountIn - 1_000_000n);
    expect(await balanceOf(chainB, usdcB, address)).toBe(0n);
    // The order is left as it was: it still waits for its transfer on chain A.
    const { body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    expect((body as { status: string }).status).toBe('waiting');

    const again = await call(gateway.url, 'reindexDepositAddress', {
      body: { chainId: chainA.chainId, depositAddress: address, targetChainId: chainB.chainId },
    });
    expect(again.status).toBe(429);
    const unknownChain = await call(gateway.url, 'reindexDepositAddress', {
      body: { chainId: chainA.chainId, depositAddress: address, targetChainId: 999_999 },
    });
    expect(unknownChain.status).toBe(400);
  });
});

describe('tracking a deposit address', () => {
  it('webhooks, /ws, graphql-ws and GraphQL carry the depositAddress object with the depositor and the transfer', async () => {
    const recoveryAddress = fresh(0xd3);
    const { requestId, address, amountIn } = await strictUsdc(
      fresh(0xd1),
      fresh(0xd2),
      '20000000',
      { recoveryAddress },
      { 'x-api-key': apiKey },
    );
    const clients: Client[] = [];
    const graphqlWs = connectGraphQL(wsUrlOf(gateway.url, '/graphql'));
    clients.push(graphqlWs);
    const gql = collectSubscription(
      graphqlWs,
      'subscription($id: ID!) { requestStatus(requestId: $id) { status depositAddress { address type depositor depositTxHash recoveryAddress } } }',
      { id: requestId },
    );
    const ws = await connectRaw(wsUrlOf(gateway.url, '/ws'));
    try {
      await ws.next((m) => m.type === 'connection');
      ws.send({ type: 'subscribe', event: 'request.status.updated', filters: { id: requestId } });
      await ws.next((m) => m.type === 'subscribe');
      const isStatus = (m: Record<string, any>) => m.event === 'request.status.updated';
      const waiting = await ws.next(isStatus);
      // Before any transfer: the address and its type, nobody has paid yet.
      expect(waiting.data.depositAddress).toEqual({
        address: address.toLowerCase(),
        depositAddressType: 'strict',
        depositor: null,
        depositTxHash: null,
      });

      const hash = await sendToken(bob, tokenOf(chainA, 'USDC'), address, amountIn);
      await waitForStatus(gateway, requestId, ['success']);
      const paid = {
        address: address.toLowerCase(),
        depositAddressType: 'strict',
        depositor: bob.address.toLowerCase(),
        depositTxHash: hash,
      };
      const success = await ws.next((m) => isStatus(m) && m.data.status === 'success', 30_000);
      expect(success.data.depositAddress).toEqual(paid);

      await gql.done;
      const statusRecords = gql.results.map((r) => r.data?.requestStatus);
      expect(statusRecords.at(-1)).toEqual({
        status: 'SUCCESS',
        depositAddress: {
          address: address.toLowerCase(),
          type: 'STRICT',
          depositor: bob.address.toLowerCase(),
          depositTxHash: hash,
          recoveryAddress: recoveryAddress.toLowerCase(),
        },
      });

      // This request's own success: the receiver also holds the webhooks of the requests of earlier tests.
      await receiver.waitFor(
        (all) => all.some((w) => w.json?.data?.requestId === requestId && w.json?.data?.status === 'success'),
        15_000,
      );
      const hooks = receiver.received.filter((w) => w.verified && w.json?.data?.requestId === requestId);
      expect(hooks.map((w) => w.json.data.status)).toContain('success');
      for (const hook of hooks) expect(hook.json.data.depositAddress).toEqual(paid);

      const query = await post(
        gateway.url,
        `query($id: ID!) {
          request(id: $id) { supersededByRequestId depositAddress { address type depositor depositTxHash recoveryAddress } }
          requestStatus(requestId: $id) { depositAddress { type depositor depositTxHash } }
        }`,
        { id: requestId },
      );
      expect(query.body.errors).toBeUndefined();
      expect(query.body.data).toEqual({
        request: {
          supersededByRequestId: null,
          depositAddress: {
            address: address.toLowerCase(),
            type: 'STRICT',
            depositor: bob.address.toLowerCase(),
            depositTxHash: hash,
            recoveryAddress: recoveryAddress.toLowerCase(),
          },
        },
        requestStatus: {
          depositAddress: { type: 'STRICT', depositor: bob.address.toLowerCase(), depositTxHash: hash },
        },
      });
    } finally {
      await ws.close();
      await Promise.all(clients.map(async (client) => client.dispose()));
    }
  });

  it('an open address paid another amount while its quote waits: the re-quote supersedes it (supersededByRequestId)', async () => {
    const recipient = fresh(0xd4);
    const q = await requestQuote(gateway, alice, {
      originCurrency: tokenOf(chainA, 'USDC'),
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: '20000000',
      recipient,
      useDepositAddress: true,
    });
    const step = q.steps[0] as unknown as { requestId: Hex; depositAddress: Address };
    await sendToken(bob, tokenOf(chainA, 'USDC'), step.depositAddress, 15_000_000n);
    const requote = await waitFor('the re-quote filled', async () => {
      const done = (await requestsAt(step.depositAddress)).filter((r) => r.status === 'success');
      return done[0];
    });
    expect(requote.id).not.toBe(step.requestId);
    const v3 = await call(gateway.url, 'getRequests', { query: { depositAddress: step.depositAddress } });
    const byId = new Map((v3.body as { requests: any[] }).requests.map((r) => [r.id, r]));
    expect(byId.get(step.requestId)).toMatchObject({ status: 'waiting', supersededByRequestId: requote.id });
    expect(byId.get(requote.id)).toMatchObject({ status: 'success', supersededByRequestId: null });
    const v2 = new Map((await requestsAt(step.depositAddress)).map((r) => [r.id, r]));
    expect(v2.get(step.requestId).data.supersededByRequestId).toBe(requote.id);
    expect(v2.get(requote.id).data.supersededByRequestId).toBeNull();
    const gql = await post(gateway.url, 'query($id: ID!) { request(id: $id) { supersededByRequestId } }', {
      id: step.requestId,
    });
    expect(gql.body.data).toEqual({ request: { supersededByRequestId: requote.id } });
  });
});

describe('open deposit addresses', () => {
  it('native, reused for two transfers: two filled requests listed under the address', async () => {
    const recipient = fresh(0xf1);
    const q = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.05').toString(),
      recipient,
      useDepositAddress: true,
    });
    const address = (q.steps[0] as unknown as { depositAddress: Address }).depositAddress;
    await sendNative(bob, address, parseEther('0.05'));
    const first = await waitFor('the first request filled', async () => {
      const done = (await requestsAt(address)).filter((r) => r.status === 'success');
      return done.length >= 1 ? done : undefined;
    });
    const afterFirst = await balanceOf(chainB, zeroAddress, recipient);
    expect(afterFirst).toBeGreaterThan(0n);
    await sendNative(bob, address, parseEther('0.03'));
    const both = await waitFor('two filled requests', async () => {
      const done = (await requestsAt(address)).filter((r) => r.status === 'success');
      return done.length >= 2 ? done : undefined;
    });
    expect(new Set(both.map((r) => r.id)).size).toBe(2);
    expect(first.map((r) => r.id).every((id: string) => both.some((r) => r.id === id))).toBe(true);
    expect(await balanceOf(chainB, zeroAddress, recipient)).toBeGreaterThan(afterFirst);
    expect(await publicClientOf(chainA).getBalance({ address })).toBe(0n);
  });
});

describe('dust sweeps', () => {
  it('1 wei to many addresses in one Multicall3 transaction: no sweep, recorded as dust; a real payment still fills and takes the dust along', async () => {
    const db = gateway.server.database.db;
    const quotes = [];
    for (let i = 0; i < 4; i += 1) {
      const q = await requestQuote(gateway, alice, {
        originCurrency: zeroAddress,
        destinationCurrency: zeroAddress,
        amount: parseEther('0.02').toString(),
        recipient: fresh(0x1a0 + i),
        refundTo: fresh(0x1b0 + i),
        useDepositAddress: true,
        strict: true,
      });
      const step = q.steps[0] as unknown as { requestId: Hex; depositAddress: Address };
      quotes.push({ q, requestId: step.requestId, address: step.depositAddress });
    }
    const noData: Hex = '0x';
    const attack = await wallet(bob).writeContract({
      address: chainA.contracts.multicall3,
      abi: multicall3Abi,
      functionName: 'aggregate3Value',
      args: [quotes.map(({ address }) => ({ target: address, allowFailure: false, value: 1n, callData: noData }))],
      value: BigInt(quotes.length),
    });
    expect((await publicClientOf(chainA).waitForTransactionReceipt({ hash: attack })).status).toBe('success');

    const dust = await waitFor('every 1-wei transfer recorded as dust', async () => {
      const rows = await db.selectFrom('deposit_address_transfers').selectAll().where('tx_hash', '=', attack).execute();
      return rows.length === quotes.length && rows.every((row) => row.status === 'dust') ? rows : undefined;
    });
    expect(dust.every((row) => row.sweep_id === null)).toBe(true);
    // Nobody swept: the solver recorded no sweep, no address was deployed (the first sweep deploys it), and each still
    // holds its 1 wei.
    const sweeps = await db.selectFrom('outgoing_txs').select('request_id').where('kind', '=', 'sweep').execute();
    const swept = new Set(sweeps.map((row) => row.request_id));
    for (const { address, requestId } of quotes) {
      expect(await publicClientOf(chainA).getCode({ address })).toBeUndefined();
      expect(await publicClientOf(chainA).getBalance({ address })).toBe(1n);
      expect((await getRequest(db, requestId))?.status).toBe('waiting');
    }
    expect(dust.some((row) => row.sweep_id !== null && swept.has(row.sweep_id))).toBe(false);
    const lookup = await call(gateway.url, 'getDepositAddress', { query: { address: quotes[0]!.address } });
    expect(lookup.status).toBe(200);
    expect((lookup.body as { unsweptTransfers: unknown[] }).unsweptTransfers).toEqual([
      {
        txHash: attack,
        currency: zeroAddress,
        amount: '1',
        depositor: expect.stringMatching(/^0x[0-9a-f]{40}$/),
        status: 'dust',
      },
    ]);

    // The order's real payment to one of them: filled with the quoted output, the dust swept along with it.
    const { q, requestId, address } = quotes[0]!;
    const recipient = fresh(0x1a0);
    await sendNative(alice, address, BigInt(q.details.currencyIn.amount));
    const status = await waitForStatus(gateway, requestId, ['success', 'refund', 'failure']);
    expect(status.status).toBe('success');
    expect(await balanceOf(chainB, zeroAddress, recipient)).toBe(BigInt(q.details.currencyOut.amount));
    expect(await publicClientOf(chainA).getBalance({ address })).toBe(0n);
    const taken = await db
      .selectFrom('deposit_address_transfers')
      .selectAll()
      .where('tx_hash', '=', attack)
      .where('address', '=', address.toLowerCase())
      .executeTakeFirstOrThrow();
    expect(taken.status).toBe('swept');
    expect(taken.dust_sweep_id).not.toBeNull();
    const after = await call(gateway.url, 'getDepositAddress', { query: { address } });
    expect((after.body as { unsweptTransfers: unknown[] }).unsweptTransfers).toEqual([]);
  });
});
