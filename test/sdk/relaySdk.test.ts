/**
 * The unmodified reference client, `@relayprotocol/relay-sdk`, driven against the gateway on the devnet: only
 * `baseApiUrl` (and the local chains) differ from a production setup. The SDK asks for a quote, sends the steps
 * with a viem wallet, reports the deposit to /transactions/index and polls the quote's `check` endpoint until the
 * gateway's solver has filled on the destination.
 *
 * The SDK client is a process-wide singleton, so it is configured once for the file and the cases run in order.
 * Its websocket stays disabled: in Node the SDK's stub socket never fails, so it would never fall back to polling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, http, parseEther, zeroAddress, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { getClient, type Execute, type ProgressData } from '@relayprotocol/relay-sdk';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { configureRelaySdk } from '../helpers/relaySdk.js';
import { publicClientOf, tokenOf } from '../helpers/quote.js';
import { balanceOf } from '../helpers/chainReads.js';

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

interface BridgeCase {
  account: DevnetAccount;
  currency: Address;
  toCurrency: Address;
  amount: string;
  recipient: Address;
}

/** getQuote + execute through the SDK with a wallet on the origin chain's RPC; returns what execute resolved with. */
async function bridgeWithSdk({
  account,
  currency,
  toCurrency,
  amount,
  recipient,
}: BridgeCase): Promise<{ quote: Execute; result: Execute; progress: ProgressData[] }> {
  const wallet = createWalletClient({
    account: privateKeyToAccount(account.privateKey),
    chain: devnetViemChain(chainA),
    transport: http(chainA.rpcUrl),
  });
  const quote = await getClient().actions.getQuote(
    {
      chainId: chainA.chainId,
      toChainId: chainB.chainId,
      currency,
      toCurrency,
      amount,
      tradeType: 'EXACT_INPUT',
      wallet,
      recipient,
    },
    true,
  );
  const progress: ProgressData[] = [];
  const { data: result } = await getClient().actions.execute({
    quote,
    wallet,
    onProgress: (data) => progress.push(data),
  });
  return { quote, result, progress };
}

/** The assertions shared by both bridges: every item done, the fill on B, the deposit on A, the stored status. */
async function expectFilled(quote: Execute, result: Execute, recipientGain: bigint): Promise<void> {
  const items = result.steps.flatMap((step) => step.items ?? []);
  expect(items.length).toBeGreaterThan(0);
  for (const item of items) expect(item.status).toBe('complete');

  const deposit = result.steps.find((step) => step.id === 'deposit')!.items[0]!;
  expect(deposit.checkStatus).toBe('success');
  expect(deposit.txHashes?.[0]?.chainId).toBe(chainB.chainId);
  expect(deposit.internalTxHashes?.[0]?.chainId).toBe(chainA.chainId);

  const depositTx = await publicClientOf(chainA).getTransaction({
    hash: deposit.internalTxHashes![0]!.txHash as `0x${string}`,
  });
  expect(depositTx.to?.toLowerCase()).toBe((deposit.data.to as string).toLowerCase());
  const fillReceipt = await publicClientOf(chainB).getTransactionReceipt({
    hash: deposit.txHashes![0]!.txHash as `0x${string}`,
  });
  expect(fillReceipt.status).toBe('success');

  expect(recipientGain).toBe(BigInt(quote.details!.currencyOut!.amount!));

  const requestId = result.steps.find((step) => step.id === 'deposit')!.requestId!;
  const { status, body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
  expect(status).toBe(200);
  expect(body).toMatchObject({ status: 'success', originChainId: chainA.chainId, destinationChainId: chainB.chainId });
  expect(body.inTxHashes).toEqual([deposit.internalTxHashes![0]!.txHash]);
  expect(body.txHashes).toEqual([deposit.txHashes![0]!.txHash]);
}

describe('@relayprotocol/relay-sdk against the gateway', () => {
  it('bridges native ETH 31337 → 31338 (one deposit step)', async () => {
    const recipient = fresh(0x5d1_0001);
    const before = await balanceOf(chainB, zeroAddress, recipient);
    const { quote, result, progress } = await bridgeWithSdk({
      account: gateway.devnet.descriptor.accounts[0]!,
      currency: zeroAddress,
      toCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      recipient,
    });
    expect(result.steps.map((step) => step.id)).toEqual(['deposit']);
    await expectFilled(quote, result, (await balanceOf(chainB, zeroAddress, recipient)) - before);
    expect(progress.at(-1)?.currentStep).toBeNull();
  });

  it('bridges USDC 31337 → 31338 (approve, then deposit)', async () => {
    const recipient = fresh(0x5d2_0001);
    const usdcB = tokenOf(chainB, 'USDC');
    const before = await balanceOf(chainB, usdcB, recipient);
    const { quote, result } = await bridgeWithSdk({
      account: gateway.devnet.descriptor.accounts[1]!,
      currency: tokenOf(chainA, 'USDC'),
      toCurrency: usdcB,
      amount: '25000000',
      recipient,
    });
    expect(result.steps.map((step) => step.id)).toEqual(['approve', 'deposit']);
    await expectFilled(quote, result, (await balanceOf(chainB, usdcB, recipient)) - before);
  });
});
