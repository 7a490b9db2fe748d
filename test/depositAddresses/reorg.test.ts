/**
 * A transfer to a deposit address that is reorged away before its confirmation is never swept nor filled: the
 * origin needs 3 confirmations; the transfer is mined, the chain is reverted to a snapshot taken before it and
 * grows other blocks. A transfer sent afterwards fills the order once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestClient, createWalletClient, erc20Abi, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;
let bob: DevnetAccount;

beforeAll(async () => {
  gateway = await startTestGateway(
    {},
    {
      configure: (config) => ({
        ...config,
        chains: config.chains.map((chain, i) => (i === 0 ? { ...chain, confirmations: 3 } : chain)),
      }),
    },
  );
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [alice, bob] = gateway.devnet.descriptor.accounts as [DevnetAccount, DevnetAccount];
});
afterAll(async () => {
  await gateway?.stop();
});

it('a deposit-address transfer reorged away before confirmation is never filled; the next one is', async () => {
  const recipient: Address = `0x${(0xabc0000).toString(16).padStart(40, '0')}`;
  const q = await requestQuote(gateway, alice, {
    originCurrency: tokenOf(chainA, 'USDC'),
    destinationCurrency: tokenOf(chainB, 'USDC'),
    amount: '10000000',
    recipient,
    refundTo: bob.address,
    useDepositAddress: true,
    strict: true,
  });
  const step = q.steps[0] as unknown as { requestId: Hex; depositAddress: Address };
  const amount = BigInt(q.details.currencyIn.amount);
  const testClient = createTestClient({
    mode: 'anvil',
    chain: devnetViemChain(chainA),
    transport: http(chainA.rpcUrl),
  });
  const wallet = createWalletClient({
    account: privateKeyToAccount(bob.privateKey),
    chain: devnetViemChain(chainA),
    transport: http(chainA.rpcUrl),
  });
  const transfer = () =>
    wallet
      .writeContract({
        address: tokenOf(chainA, 'USDC'),
        abi: erc20Abi,
        functionName: 'transfer',
        args: [step.depositAddress, amount],
      })
      .then((hash) => publicClientOf(chainA).waitForTransactionReceipt({ hash }));

  const snapshot = await testClient.snapshot();
  await transfer();
  // Let the watcher see it (one block deep, not confirmed), then reorg it away and grow the chain past it.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  await testClient.revert({ id: snapshot });
  await testClient.mine({ blocks: 5 });
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const { body } = await call(gateway.url, 'getIntentStatus', { query: { requestId: step.requestId } });
  expect((body as { status: string }).status).toBe('waiting');
  expect(
    await publicClientOf(chainB).readContract({
      address: tokenOf(chainB, 'USDC'),
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [recipient],
    }),
  ).toBe(0n);

  await transfer();
  // Automine makes no block by itself: blocks go on being made so the transfer, then its sweep, get deep enough.
  const miner = setInterval(() => void testClient.mine({ blocks: 1 }).catch(() => undefined), 300);
  const done = await waitForStatus(gateway, step.requestId, ['success', 'refund', 'failure']).finally(() =>
    clearInterval(miner),
  );
  expect(done.status).toBe('success');
  expect(done.inTxHashes).toHaveLength(1);
});
