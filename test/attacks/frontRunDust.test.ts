/**
 * Attack: spoil someone else's order by front-running its deposit. The attacker sees the victim's request id
 * (it is in the victim's deposit transaction, in the mempool) and deposits dust under it first, naming the victim
 * as depositor, so that the dust is taken as the order's deposit (too low: refunded) and the victim's real
 * deposit then counts as a second one (DOUBLE_SPEND). Defence: who sent a deposit is read from the chain (the
 * transaction's `from`), not from the `depositor` the caller names; a deposit that cannot pay for the order and
 * was not sent by the order's user is refunded on its own and leaves the request as it was.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, zeroAddress, type Hex } from 'viem';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, requestQuote, tokenOf, waitForStatus, type WireQuote } from '../helpers/quote.js';
import {
  depositErc20,
  depositHandled,
  depositNative,
  fillsOf,
  freshAddress,
  nativeBalance,
  releaseOf,
  statusOf,
  until,
} from './attacker.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let victim: DevnetAccount;
let attacker: DevnetAccount;

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [victim, attacker] = gateway.devnet.descriptor.accounts as [DevnetAccount, DevnetAccount];
});
afterAll(async () => {
  await gateway?.stop();
});

/** The victim's order: 0.01 ETH from chain A to a fresh recipient on chain B. */
async function victimQuote(): Promise<{ q: WireQuote; requestId: Hex; recipient: `0x${string}` }> {
  const recipient = freshAddress();
  const q = await requestQuote(gateway, victim, {
    originCurrency: zeroAddress,
    destinationCurrency: zeroAddress,
    amount: parseEther('0.01').toString(),
    recipient,
  });
  return { q, requestId: q.steps.at(-1)!.requestId, recipient };
}

/** The victim pays as quoted; the order must end filled, paid by exactly that deposit. */
async function expectVictimFilled({ q, requestId, recipient }: Awaited<ReturnType<typeof victimQuote>>): Promise<void> {
  const receipts = await executeSteps(gateway, q.steps, victim);
  const record = await waitForStatus(gateway, requestId, ['success', 'failure', 'refund']);
  expect(record).toMatchObject({ status: 'success', failReason: 'N/A', refundFailReason: 'N/A' });
  expect(record.inTxHashes).toEqual([receipts.get('deposit')!.transactionHash]);
  expect(await fillsOf(chainB, requestId)).toBe(1);
  expect(await nativeBalance(chainB, recipient)).toBe(BigInt(q.details.currencyOut.amount));
}

describe("a deposit that cannot pay, sent by someone else under the victim's request id", () => {
  it("1 wei deposited first, naming the victim as depositor, does not turn the victim's deposit into a DOUBLE_SPEND", async () => {
    const order = await victimQuote();
    const dust = await depositNative(chainA, attacker, order.requestId, 1n, victim.address);
    await until(
      'the dust is handled',
      async () =>
        (await depositHandled(gateway, order.requestId, dust.hash)) ||
        (await statusOf(gateway, order.requestId)).status !== 'waiting',
    );
    expect((await statusOf(gateway, order.requestId)).status).toBe('waiting');
    // 1 wei cannot pay for its own refund's gas: it stays in the depository, unreleased.
    expect(await releaseOf(chainA, dust.depositIndex)).toBeUndefined();
    await expectVictimFilled(order);
  });

  it('a short deposit (half the input) from someone else is refunded on its own to the depositor it named; the order still fills', async () => {
    const order = await victimQuote();
    const half = BigInt(order.q.details.currencyIn.amount) / 2n;
    const short = await depositNative(chainA, attacker, order.requestId, half);
    await until(
      'the short deposit is decided',
      async () =>
        (await releaseOf(chainA, short.depositIndex)) !== undefined ||
        (await statusOf(gateway, order.requestId)).status !== 'waiting',
    );
    expect((await statusOf(gateway, order.requestId)).status).toBe('waiting');
    const released = await releaseOf(chainA, short.depositIndex);
    expect(released?.to).toBe(attacker.address);
    expect(half - released!.amount).toBeLessThan(parseEther('0.001'));
    await expectVictimFilled(order);
  });

  it('another currency (USDC for an ETH order) from someone else is refunded on its own; the order still fills', async () => {
    const order = await victimQuote();
    const usdc = await depositErc20(chainA, attacker, tokenOf(chainA, 'USDC'), order.requestId, 50_000_000n);
    await until(
      'the USDC deposit is decided',
      async () =>
        (await releaseOf(chainA, usdc.depositIndex)) !== undefined ||
        (await statusOf(gateway, order.requestId)).status !== 'waiting',
    );
    expect((await statusOf(gateway, order.requestId)).status).toBe('waiting');
    expect((await releaseOf(chainA, usdc.depositIndex))?.to).toBe(attacker.address);
    await expectVictimFilled(order);
  });

  it("dust arriving after the victim's deposit changes nothing: the order stays filled and the victim's deposit is not released", async () => {
    const order = await victimQuote();
    await expectVictimFilled(order);
    const dust = await depositNative(chainA, attacker, order.requestId, 1n, victim.address);
    await until('the late dust is handled', () => depositHandled(gateway, order.requestId, dust.hash));
    const record = await statusOf(gateway, order.requestId);
    expect(record).toMatchObject({ status: 'success', failReason: 'N/A' });
    expect(await fillsOf(chainB, order.requestId)).toBe(1);
  });
});
