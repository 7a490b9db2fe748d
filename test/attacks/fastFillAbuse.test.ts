/**
 * Attacks on fast fill (`POST /fast-fill`), where an API key vouches for deposits that have not arrived yet and
 * the solver fills at once, holding the request's value against the key's limit until its deposit lands:
 * - a key fast-fills requests that were not quoted with it (putting the solver's money at risk on orders it does
 *   not vouch for);
 * - a key's owner "pays" a fast-filled order with dust, so the hold is released and the limit can be used again
 *   and again while the orders stay unpaid;
 * and a user's real deposit for a fast fill that failed must be refunded, never swallowed.
 * Defence: fast fill only for requests quoted with the key; only a deposit that matches the order releases the
 * hold; a deposit for a failed fast fill refunds the order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestClient,
  createWalletClient,
  encodeFunctionData,
  erc20Abi,
  http,
  parseEther,
  parseGwei,
  zeroAddress,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { hashApiKey } from '../../src/core/apiKeys/authenticate.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';
import { depositHandled, depositNative, fillsOf, freshAddress, nativeBalance, statusOf, until } from './attacker.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let attacker: DevnetAccount;
let customer: DevnetAccount;
let carol: DevnetAccount;
const keys = { attacker: 'sk_fast_attacker_01', other: 'sk_fast_other_0001' };

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [attacker, customer, carol] = gateway.devnet.descriptor.accounts as [DevnetAccount, DevnetAccount, DevnetAccount];
  const db = gateway.server.database.db;
  // Each key may have USD 100 of fast fills awaiting their deposits.
  await insertApiKey(db, {
    id: 'attacker',
    name: 'Attacker',
    keyHash: hashApiKey(keys.attacker),
    limits: { fastFillUsd: '100' },
    now: Date.now(),
  });
  await insertApiKey(db, {
    id: 'other',
    name: 'Other',
    keyHash: hashApiKey(keys.other),
    limits: { fastFillUsd: '100' },
    now: Date.now(),
  });
});
afterAll(async () => {
  await gateway?.stop();
});

const fastFill = (requestId: string, apiKey: string) =>
  call(gateway.url, 'fastFill', { body: { requestId }, headers: { 'x-api-key': apiKey } });
const quoteEth = (account: DevnetAccount, eth: string, apiKey?: string, extra: Record<string, unknown> = {}) =>
  requestQuote(
    gateway,
    account,
    { originCurrency: zeroAddress, destinationCurrency: zeroAddress, amount: parseEther(eth).toString(), ...extra },
    apiKey === undefined ? undefined : { 'x-api-key': apiKey },
  );

describe('fast fill under attack', () => {
  it('a key cannot fast-fill a request quoted with another key, or with none', async () => {
    for (const quotedWith of [keys.other, undefined]) {
      const q = await quoteEth(customer, '0.01', quotedWith);
      const requestId = q.steps.at(-1)!.requestId;
      const answer = await fastFill(requestId, keys.attacker);
      expect(answer).toMatchObject({ status: 403, body: { errorCode: 'FORBIDDEN' } });
      expect((await statusOf(gateway, requestId)).status).toBe('waiting');
      expect(await fillsOf(chainB, requestId)).toBe(0);
    }
  });

  it("dust deposited for a fast-filled order does not release the key's hold; the order's real deposit does", async () => {
    // USD 60 each (0.02 ETH at 3000): one fits in the key's USD 100, two do not.
    const first = await quoteEth(attacker, '0.02', keys.attacker);
    const second = await quoteEth(attacker, '0.02', keys.attacker);
    const firstId = first.steps.at(-1)!.requestId;
    expect((await fastFill(firstId, keys.attacker)).status).toBe(200);
    await waitForStatus(gateway, firstId, ['success']);

    const dust = await depositNative(chainA, attacker, firstId, 1n);
    await until('the dust is handled', () => depositHandled(gateway, firstId, dust.hash));
    expect(await fastFill(second.steps.at(-1)!.requestId, keys.attacker)).toMatchObject({
      status: 403,
      body: { errorCode: 'FORBIDDEN' },
    });

    // The deposit the order asked for releases the hold.
    const receipts = await executeSteps(gateway, first.steps, attacker);
    await until('the real deposit is handled', () =>
      depositHandled(gateway, firstId, receipts.get('deposit')!.transactionHash),
    );
    expect((await statusOf(gateway, firstId)).inTxHashes).toEqual([receipts.get('deposit')!.transactionHash]);
    expect((await fastFill(second.steps.at(-1)!.requestId, keys.attacker)).status).toBe(200);
    expect(await fillsOf(chainB, firstId)).toBe(1);
  });

  it("a user's deposit for a fast fill that reverted on chain is refunded, not swallowed", async () => {
    // The order's call pulls USDC that carol approved to the multicaller. While the fast fill waits in chain B's
    // mempool (automine off), carol revokes the approval with a far higher tip, so it is mined first and the fill
    // reverts on chain: a real on-chain failure after the fill's simulation passed.
    const usdcB = tokenOf(chainB, 'USDC');
    const carolB = createWalletClient({
      account: privateKeyToAccount(carol.privateKey),
      chain: devnetViemChain(chainB),
      transport: http(chainB.rpcUrl),
    });
    const approve = async (amount: bigint, tip?: bigint) => {
      const hash = await carolB.writeContract({
        address: usdcB,
        abi: erc20Abi,
        functionName: 'approve',
        args: [chainB.contracts.multicaller, amount],
        ...(tip === undefined ? {} : { maxPriorityFeePerGas: tip, maxFeePerGas: tip * 2n }),
      });
      return hash;
    };
    await publicClientOf(chainB).waitForTransactionReceipt({ hash: await approve(10n ** 9n) });
    const txs = [
      {
        to: usdcB,
        value: '0',
        data: encodeFunctionData({
          abi: erc20Abi,
          functionName: 'transferFrom',
          args: [carol.address, freshAddress(), 1_000_000n],
        }),
      },
    ];
    const refundTo = freshAddress();
    const q = await quoteEth(customer, '0.01', keys.other, { refundTo, txs });
    const requestId = q.steps.at(-1)!.requestId;

    const testB = createTestClient({ mode: 'anvil', chain: devnetViemChain(chainB), transport: http(chainB.rpcUrl) });
    await testB.setAutomine(false);
    try {
      expect((await fastFill(requestId, keys.other)).status).toBe(200);
      await waitForStatus(gateway, requestId, ['submitted', 'success', 'failure']);
      await approve(0n, parseGwei('500'));
      await testB.mine({ blocks: 1 });
    } finally {
      await testB.setAutomine(true);
    }
    const failed = await waitForStatus(gateway, requestId, ['success', 'failure']);
    expect(failed).toMatchObject({ status: 'failure', failReason: 'TRANSACTION_REVERTED' });

    // The user pays as quoted: the deposit must come back to refundTo.
    const receipts = await executeSteps(gateway, q.steps, customer);
    await until('the deposit is handled', () =>
      depositHandled(gateway, requestId, receipts.get('deposit')!.transactionHash),
    );
    const record = await waitForStatus(gateway, requestId, ['refund'], 20_000);
    expect(record).toMatchObject({ status: 'refund', failReason: 'TRANSACTION_REVERTED' });
    const deposited = BigInt(q.details.currencyIn.amount);
    const refunded = await nativeBalance(chainA, refundTo);
    expect(refunded).toBeGreaterThan(deposited - parseEther('0.001'));
    expect(refunded).toBeLessThan(deposited);
    expect(await fillsOf(chainB, requestId)).toBe(0);
  });
});
