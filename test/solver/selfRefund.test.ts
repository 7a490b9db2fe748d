/**
 * The self-serve refund and the maximum hold, on the devnet with real signatures. Chain B's outflow limit (USD 15)
 * lets one 10 USDC fill through; every request paid after it is held `pending` by the solver's circuit breaker
 * (`fillGate.ts`). Its depositor signs an EIP-712 refund request with a viem local account and the gateway
 * refunds it on the origin chain at once (REST and GraphQL, one core function); a request nobody asks for is
 * refunded by itself after the maximum hold (`TTL_EXPIRED`). Refunds are counted on chain (`Released` events).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createWalletClient,
  encodeFunctionData,
  erc20Abi,
  getAddress,
  http,
  parseEther,
  parseEventLogs,
  parseUnits,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  depositoryAbi,
  multicall3Abi,
  ownerSignatureWalletAbi,
  ownerSignatureWalletBytecode,
} from '../../generated/contracts/index.js';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { refundRequestTypedData } from '../../src/core/requests/requestRefund.js';
import { defaultQuoteSettings } from '../../src/core/settings.js';
import { connectRaw, wsUrlOf } from '../events/clients.js';
import { post } from '../graphql/harness.js';
import { call } from '../helpers/conformance.js';
import { depositErc20 } from '../helpers/deposits.js';
import { startConfiguredGateway } from '../helpers/configuredGateway.js';
import type { TestGateway } from '../helpers/gateway.js';
import {
  executeSteps,
  publicClientOf,
  requestQuote,
  tokenOf,
  waitForStatus,
  type WireQuote,
} from '../helpers/quote.js';

const B = 31338;
const MAX_HOLD_SECONDS = 30;

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;
let bob: DevnetAccount;
/** Quoted before any fill (a quote over the outflow limit is refused): one per test that pays. */
const quotes: WireQuote[] = [];
let filled: WireQuote;

const usd = (value: string) => parseUnits(value, 6);
const idOf = (quote: WireQuote): Hex => quote.steps.at(-1)!.requestId;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

beforeAll(async () => {
  gateway = await startConfiguredGateway(() => ({
    quote: {
      ...defaultQuoteSettings,
      exposure: {
        ...defaultQuoteSettings.exposure,
        chainOutflowUsdMicros: { [B]: usd('15') },
        maxHoldSeconds: MAX_HOLD_SECONDS,
      },
    },
  }));
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [alice, bob] = gateway.devnet.descriptor.accounts as [DevnetAccount, DevnetAccount];
  const usdcToUsdc = {
    originCurrency: tokenOf(chainA, 'USDC'),
    destinationCurrency: tokenOf(chainB, 'USDC'),
    amount: '10000000',
  };
  filled = await requestQuote(gateway, alice, usdcToUsdc);
  for (let i = 0; i < 6; i++) quotes.push(await requestQuote(gateway, alice, usdcToUsdc));
  await executeSteps(gateway, filled.steps, alice);
  expect((await waitForStatus(gateway, idOf(filled), ['success', 'refund', 'failure'])).status).toBe('success');
}, 180_000);
afterAll(async () => {
  await gateway?.stop();
});

/** Pays the quote and waits until the solver holds it: chain B's fills paused (`/ready`), the request `pending`. */
async function payHeld(
  quote: WireQuote,
  pay: () => Promise<unknown> = () => executeSteps(gateway, quote.steps, alice),
): Promise<Hex> {
  await pay();
  await waitForStatus(gateway, idOf(quote), ['pending']);
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const ready = (await (await fetch(`${gateway.url}/ready`)).json()) as {
      checks: Record<string, { message?: string }>;
    };
    if (ready.checks[`fills:${B}`] !== undefined) return idOf(quote);
    await sleep(100);
  }
  throw new Error('the request was not held');
}

async function sign(account: DevnetAccount, requestId: Hex, deadline: number): Promise<Hex> {
  return privateKeyToAccount(account.privateKey).signTypedData(
    refundRequestTypedData(chainA.contracts.depository, {
      originChainId: chainA.chainId,
      requestId,
      deadline: BigInt(deadline),
    }),
  );
}

const inAnHour = () => Math.floor(Date.now() / 1_000) + 3_600;

/** The depository's `Released` events of a request: its refunds (nothing here settles to the solver so soon). */
const releases = (requestId: Hex) =>
  publicClientOf(chainA).getContractEvents({
    address: chainA.contracts.depository,
    abi: depositoryAbi,
    eventName: 'Released',
    args: { id: requestId },
    fromBlock: 0n,
  });

/** POSTs a refund request while the request is being decided (409) for a few seconds at most. */
async function refundWhenHeld(body: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const answer = await call(gateway.url, 'requestRefund', { body });
    if (answer.status !== 409 || Date.now() > deadline) return answer;
    await sleep(200);
  }
}

describe('POST /requests/refund', () => {
  it('refunds a held request at once, signed by its depositor, with its status event; idempotent', async () => {
    const requestId = await payHeld(quotes[0]!);
    const deadline = inAnHour();

    // Signed by someone else, or past its deadline: refused, nothing sent.
    const stranger = await call(gateway.url, 'requestRefund', {
      body: { requestId, deadline, signature: await sign(bob, requestId, deadline) },
    });
    expect(stranger.status, JSON.stringify(stranger.body)).toBe(403);
    expect(stranger.body).toMatchObject({ errorCode: 'FORBIDDEN' });
    expect(stranger.body.message).toContain(getAddress(alice.address));
    const past = Math.floor(Date.now() / 1_000) - 1;
    const expired = await call(gateway.url, 'requestRefund', {
      body: { requestId, deadline: past, signature: await sign(alice, requestId, past) },
    });
    expect(expired.status).toBe(400);
    expect(expired.body).toMatchObject({ errorCode: 'INVALID_INPUT' });
    // Signed for another deadline than the one posted: not the depositor's signature of this message.
    const mismatched = await call(gateway.url, 'requestRefund', {
      body: { requestId, deadline: deadline + 1, signature: await sign(alice, requestId, deadline) },
    });
    expect(mismatched.status).toBe(403);

    const ws = await connectRaw(wsUrlOf(gateway.url, '/ws'));
    try {
      await ws.next((m) => m.type === 'connection');
      ws.send({ type: 'subscribe', event: 'request.status.updated', filters: { id: requestId } });
      await ws.next((m) => m.type === 'subscribe');

      const body = { requestId, deadline, signature: await sign(alice, requestId, deadline) };
      const answer = await refundWhenHeld(body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      expect(answer.body).toMatchObject({ requestId, status: 'refund', message: 'Refunded' });
      const refunded = await releases(requestId);
      expect(refunded).toHaveLength(1);
      expect(answer.body.refundTxHash).toBe(refunded[0]!.transactionHash);
      expect(refunded[0]!.args.to).toBe(getAddress(alice.address));

      const event = await ws.next((m) => m.event === 'request.status.updated' && m.data.status === 'refund', 10_000);
      expect(event.data).toMatchObject({ failReason: 'MANUAL_ADMIN_REFUND', refundFailReason: 'N/A' });
      expect(event.data.txHashes).toContain(refunded[0]!.transactionHash);
      const status = await waitForStatus(gateway, requestId, ['refund']);
      expect(status).toMatchObject({ status: 'refund', failReason: 'MANUAL_ADMIN_REFUND' });
      expect(status.details).toMatch(/depositor's request while held: outflow limit/);

      // The same request again: the same answer, no second refund.
      const again = await call(gateway.url, 'requestRefund', { body });
      expect(again.status).toBe(200);
      expect(again.body).toEqual(answer.body);
      expect(await releases(requestId)).toHaveLength(1);
    } finally {
      await ws.close();
    }
  });

  it('as a GraphQL mutation, through the same core function', async () => {
    const requestId = await payHeld(quotes[1]!);
    const deadline = inAnHour();
    const signature = await sign(alice, requestId, deadline);
    const mutation = `mutation($input: RequestRefundInput!) {
      requestRefund(input: $input) { message requestId status refundTxHash }
    }`;
    const deadlineAt = Date.now() + 10_000;
    let result = await post(gateway.url, mutation, { input: { requestId, deadline: String(deadline), signature } });
    while (result.body.errors?.[0]?.extensions?.code === 'CONFLICT' && Date.now() < deadlineAt) {
      await sleep(200);
      result = await post(gateway.url, mutation, { input: { requestId, deadline: String(deadline), signature } });
    }
    expect(result.body.errors).toBeUndefined();
    const refunded = await releases(requestId);
    expect(refunded).toHaveLength(1);
    expect(result.body.data.requestRefund).toEqual({
      message: 'Refunded',
      requestId,
      status: 'REFUND',
      refundTxHash: refunded[0]!.transactionHash,
    });
    const stranger = await post(gateway.url, mutation, {
      input: { requestId, deadline: String(deadline), signature: await sign(bob, requestId, deadline) },
    });
    expect(stranger.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  it("takes a contract wallet's signature through EIP-1271 (isValidSignature on the origin chain)", async () => {
    const quote = quotes[4]!;
    const requestId = idOf(quote);
    const owner = createWalletClient({
      account: privateKeyToAccount(alice.privateKey),
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    });
    const deployed = await publicClientOf(chainA).waitForTransactionReceipt({
      hash: await owner.deployContract({
        abi: ownerSignatureWalletAbi,
        bytecode: ownerSignatureWalletBytecode,
        args: [alice.address],
      }),
    });
    const contractWallet = deployed.contractAddress!;
    // alice pays the order naming her contract wallet as the depositor: only the wallet may ask for the refund.
    await payHeld(quote, () =>
      depositErc20(
        chainA,
        alice,
        tokenOf(chainA, 'USDC'),
        requestId,
        BigInt(quote.details.currencyIn.amount),
        contractWallet,
      ),
    );
    const deadline = inAnHour();
    const refused = await call(gateway.url, 'requestRefund', {
      body: { requestId, deadline, signature: await sign(bob, requestId, deadline) },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toContain(getAddress(contractWallet));
    // The owner's key signs for the wallet; the signature does not recover to the wallet, its isValidSignature agrees.
    const answer = await refundWhenHeld({ requestId, deadline, signature: await sign(alice, requestId, deadline) });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ status: 'refund' });
    expect(await releases(requestId)).toHaveLength(1);
  });

  it('refunds the deposit that paid when one Multicall3 transaction carried another deposit for the request first', async () => {
    const quote = quotes[5]!;
    const requestId = idOf(quote);
    const usdcA = tokenOf(chainA, 'USDC');
    const amount = BigInt(quote.details.currencyIn.amount);
    const stray = parseEther('0.01');
    const wallet = createWalletClient({
      account: privateKeyToAccount(alice.privateKey),
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    });
    const client = publicClientOf(chainA);
    // Multicall3 holds the USDC it deposits (it approves the depository from its own balance in the batch).
    await client.waitForTransactionReceipt({
      hash: await wallet.writeContract({
        address: usdcA,
        abi: erc20Abi,
        functionName: 'transfer',
        args: [chainA.contracts.multicall3, amount],
      }),
    });
    const depository = chainA.contracts.depository;
    // First a native deposit naming the request (another currency: a stray, refunded to alice), then the USDC
    // deposit that pays it: the two share the transaction's hash, and the stray has the lower log index.
    let receipt: Awaited<ReturnType<typeof client.waitForTransactionReceipt>> | undefined;
    await payHeld(quote, async () => {
      const hash = await wallet.writeContract({
        address: chainA.contracts.multicall3,
        abi: multicall3Abi,
        functionName: 'aggregate3Value',
        args: [
          [
            {
              target: depository,
              allowFailure: false,
              value: stray,
              callData: encodeFunctionData({
                abi: depositoryAbi,
                functionName: 'depositNative',
                args: [alice.address, requestId],
              }),
            },
            {
              target: usdcA,
              allowFailure: false,
              value: 0n,
              callData: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [depository, amount] }),
            },
            {
              target: depository,
              allowFailure: false,
              value: 0n,
              callData: encodeFunctionData({
                abi: depositoryAbi,
                functionName: 'depositErc20',
                args: [alice.address, usdcA, amount, requestId],
              }),
            },
          ],
        ],
        value: stray,
      });
      receipt = await client.waitForTransactionReceipt({ hash });
      expect(receipt.status).toBe('success');
    });
    const [strayIndex, paidIndex] = parseEventLogs({
      abi: depositoryAbi,
      eventName: 'Deposit',
      logs: receipt!.logs,
    }).map((log) => log.args.depositIndex) as [bigint, bigint];
    const releasedOf = async (index: bigint) =>
      (await releases(requestId)).filter((event) => event.args.depositIndex === index);
    // The stray is refunded and its row consumed before the depositor asks for the request's refund.
    const strayDeadline = Date.now() + 20_000;
    const strayConsumed = async () =>
      (
        await gateway.server.core.db
          .selectFrom('deposits')
          .select('status')
          .where('request_id', '=', requestId.toLowerCase())
          .where('token', '=', '0x0000000000000000000000000000000000000000')
          .executeTakeFirst()
      )?.status === 'consumed';
    while (!(await strayConsumed())) {
      if (Date.now() > strayDeadline) throw new Error('the stray native deposit was never refunded');
      await sleep(100);
    }
    expect(await releasedOf(strayIndex)).toHaveLength(1);

    const deadline = inAnHour();
    const answer = await refundWhenHeld({ requestId, deadline, signature: await sign(alice, requestId, deadline) });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ status: 'refund' });
    const paid = await releasedOf(paidIndex);
    expect(paid).toHaveLength(1);
    // Refunded to its depositor, less the refund's gas.
    expect(paid[0]!.args.to).toBe(getAddress(alice.address));
    expect(paid[0]!.args.amount).toBeGreaterThan(0n);
    expect(paid[0]!.args.amount).toBeLessThanOrEqual(amount);
    expect(await releasedOf(strayIndex)).toHaveLength(1);
  });

  it('refuses a filled request, one with no deposit and an unknown one (409, 409, 404)', async () => {
    const deadline = inAnHour();
    const filledId = idOf(filled);
    const onFilled = await call(gateway.url, 'requestRefund', {
      body: { requestId: filledId, deadline, signature: await sign(alice, filledId, deadline) },
    });
    expect(onFilled.status).toBe(409);
    expect(onFilled.body).toMatchObject({ errorCode: 'CONFLICT' });
    expect(onFilled.body.message).toMatch(/is filled/);

    const unpaid = idOf(quotes[3]!);
    const onUnpaid = await call(gateway.url, 'requestRefund', {
      body: { requestId: unpaid, deadline, signature: await sign(alice, unpaid, deadline) },
    });
    expect(onUnpaid.status).toBe(409);
    expect(onUnpaid.body.message).toMatch(/no deposit/);

    const unknown: Hex = `0x${'ab'.repeat(32)}`;
    const onUnknown = await call(gateway.url, 'requestRefund', {
      body: { requestId: unknown, deadline, signature: await sign(alice, unknown, deadline) },
    });
    expect(onUnknown.status).toBe(404);
    expect(onUnknown.body).toMatchObject({ errorCode: 'NOT_FOUND' });
  });
});

describe('the maximum hold', () => {
  it('refunds a request held longer than limits.maxHoldSeconds, TTL_EXPIRED', { timeout: 90_000 }, async () => {
    const requestId = await payHeld(quotes[2]!);
    const status = await waitForStatus(gateway, requestId, ['refund', 'failure', 'success'], 60_000);
    expect(status).toMatchObject({ status: 'refund', failReason: 'TTL_EXPIRED', refundFailReason: 'N/A' });
    expect(status.details).toMatch(/maximum hold of 30 s.*outflow limit/);
    const refunded = await releases(requestId);
    expect(refunded).toHaveLength(1);
    expect(refunded[0]!.args.to).toBe(getAddress(alice.address));
  });
});
