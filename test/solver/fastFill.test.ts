/**
 * Fast fill (`POST /fast-fill`): an API key with a fast-fill limit has a request filled before its deposit is
 * confirmed; the deposit that arrives later pays for it (no refund, no second fill), and the key's exposure is
 * held under its limit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getAddress, parseEther, parseEventLogs, zeroAddress, type Address } from 'viem';
import { depositoryAbi, onlyOwnerMulticallerAbi } from '../../generated/contracts/index.js';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { hashApiKey } from '../../src/core/apiKeys/authenticate.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import { getRequest } from '../../src/store/requests.repository.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus } from '../helpers/quote.js';
import { releasedEvents } from '../helpers/chainReads.js';

let gateway: TestGateway;
let chainB: DevnetChain;
let user: DevnetAccount;
const keys = { fast: 'sk_fast_fill_0001', plain: 'sk_plain_0001' };

beforeAll(async () => {
  gateway = await startTestGateway();
  chainB = gateway.devnet.descriptor.chains[1]!;
  user = gateway.devnet.descriptor.accounts[2]!;
  const db = gateway.server.database.db;
  // USD 100 of fast fills may await their deposits at once.
  await insertApiKey(db, {
    id: 'fast',
    name: 'Fast',
    keyHash: hashApiKey(keys.fast),
    limits: { fastFillUsd: '100' },
    now: Date.now(),
  });
  await insertApiKey(db, { id: 'plain', name: 'Plain', keyHash: hashApiKey(keys.plain), now: Date.now() });
});
afterAll(async () => {
  await gateway?.stop();
});

const fastFill = (requestId: string, apiKey?: string, extra: Record<string, unknown> = {}) =>
  call(gateway.url, 'fastFill', {
    body: { requestId, ...extra },
    ...(apiKey === undefined ? {} : { headers: { 'x-api-key': apiKey } }),
  });

/** Fast fill is only for requests quoted with the key. */
const withKey = (apiKey: string) => ({ 'x-api-key': apiKey });

const fresh = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;

async function fillsOf(requestId: string): Promise<number> {
  const logs = await publicClientOf(chainB).getLogs({ address: chainB.contracts.onlyOwnerMulticaller, fromBlock: 0n });
  return parseEventLogs({ abi: onlyOwnerMulticallerAbi, eventName: 'Filled', logs }).filter(
    (log) => log.args.id === requestId,
  ).length;
}

describe('POST /fast-fill', () => {
  it('fills before any deposit; the later deposit pays for it without a second fill or a refund', async () => {
    const recipient = fresh(0xfa57_0001);
    // 0.01 ETH at 3000 USD = USD 30, within the key's USD 100.
    const q = await requestQuote(
      gateway,
      user,
      {
        originCurrency: zeroAddress,
        destinationCurrency: zeroAddress,
        amount: parseEther('0.01').toString(),
        recipient,
      },
      withKey(keys.fast),
    );
    const requestId = q.steps.at(-1)!.requestId;
    const { status, body } = await fastFill(requestId, keys.fast);
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body.message).toMatch(/queued/);
    const filled = await waitForStatus(gateway, requestId, ['success', 'failure']);
    expect(filled).toMatchObject({ status: 'success', inTxHashes: [] });
    expect(await publicClientOf(chainB).getBalance({ address: recipient })).toBe(BigInt(q.details.currencyOut.amount));
    // Asking again is harmless.
    expect((await fastFill(requestId, keys.fast)).status).toBe(200);

    const receipts = await executeSteps(gateway, q.steps, user);
    const depositHash = receipts.get('deposit')!.transactionHash;
    const deadline = Date.now() + 15_000;
    let stored = await getRequest(gateway.server.database.db, requestId);
    while (stored!.inTxHashes.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      stored = await getRequest(gateway.server.database.db, requestId);
    }
    expect(stored).toMatchObject({ status: 'success', inTxHashes: [depositHash], fastFill: { apiKeyId: 'fast' } });
    await gateway.server.solver!.solver.idle();
    expect(await fillsOf(requestId)).toBe(1);
    expect((await getRequest(gateway.server.database.db, requestId))!.status).toBe('success');
    // The attached deposit is the request's own: settlement releases it to the solver, once.
    await gateway.server.solver!.settler.settleNow();
    const chainA = gateway.devnet.descriptor.chains[0]!;
    const [deposit] = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipts.get('deposit')!.logs });
    const released = await releasedEvents(chainA, { depositIndex: deposit!.args.depositIndex });
    expect(released.map((event) => [event.args.to, event.args.amount])).toEqual([
      [getAddress(gateway.devnet.descriptor.solver.address), BigInt(q.details.currencyIn.amount)],
    ]);
  });

  it('holds the key under its limit until deposits arrive', async () => {
    // Two quotes of 0.02 ETH (USD 60 each): the first fits in USD 100, the second would not.
    const first = await requestQuote(
      gateway,
      user,
      { originCurrency: zeroAddress, destinationCurrency: zeroAddress, amount: parseEther('0.02').toString() },
      withKey(keys.fast),
    );
    const second = await requestQuote(
      gateway,
      user,
      { originCurrency: zeroAddress, destinationCurrency: zeroAddress, amount: parseEther('0.02').toString() },
      withKey(keys.fast),
    );
    expect((await fastFill(first.steps.at(-1)!.requestId, keys.fast)).status).toBe(200);
    const over = await fastFill(second.steps.at(-1)!.requestId, keys.fast);
    expect(over).toMatchObject({ status: 403, body: { errorCode: 'FORBIDDEN' } });
    expect((await getRequest(gateway.server.database.db, second.steps.at(-1)!.requestId))!.status).toBe('waiting');
    // The first request's deposit arrives: its exposure is released and the second now fits.
    await waitForStatus(gateway, first.steps.at(-1)!.requestId, ['success']);
    await executeSteps(gateway, first.steps, user);
    const deadline = Date.now() + 15_000;
    let retry = await fastFill(second.steps.at(-1)!.requestId, keys.fast);
    while (retry.status !== 200 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      retry = await fastFill(second.steps.at(-1)!.requestId, keys.fast);
    }
    expect(retry.status).toBe(200);
  });

  it('needs a key with fast fill enabled, a known waiting request, and answers in the error shape', async () => {
    const q = await requestQuote(
      gateway,
      user,
      { originCurrency: zeroAddress, destinationCurrency: zeroAddress, amount: parseEther('0.005').toString() },
      withKey(keys.fast),
    );
    const requestId = q.steps.at(-1)!.requestId;
    expect(await fastFill(requestId)).toMatchObject({ status: 401, body: { errorCode: 'UNAUTHORIZED' } });
    expect(await fastFill(requestId, 'sk_unknown')).toMatchObject({ status: 401, body: { errorCode: 'UNAUTHORIZED' } });
    expect(await fastFill(requestId, keys.plain)).toMatchObject({ status: 403, body: { errorCode: 'FORBIDDEN' } });
    expect(await fastFill(`0x${'ab'.repeat(32)}`, keys.fast)).toMatchObject({
      status: 404,
      body: { errorCode: 'NOT_FOUND' },
    });
    expect(await fastFill(requestId, keys.fast, { maxFillAmountUsd: 1 })).toMatchObject({
      status: 400,
      body: { errorCode: 'INVALID_INPUT' },
    });
    // A request whose deposit is already being processed is a conflict.
    await executeSteps(gateway, q.steps, user);
    await waitForStatus(gateway, requestId, ['success']);
    expect(await fastFill(requestId, keys.fast)).toMatchObject({ status: 409, body: { errorCode: 'CONFLICT' } });
  });
});
