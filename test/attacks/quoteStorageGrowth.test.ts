/**
 * Attack: fill the gateway's storage with quotes nobody pays. Every quote stores a `waiting` request; without a
 * retention job they stay for ever, and `includeTotal` / `totalCount` walked every page of them. The attacker
 * sends a few hundred quotes over HTTP; once the gateway's clock is past their expiry, the refund window and the
 * retention, the retention job has put the requests table back to its size before the flood, and a paid request
 * is kept. The clock is the core context's injectable `now` (no sleeping for days); the job runs on its own
 * timer, shortened by configuration.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { parseEther, zeroAddress, type Hex } from 'viem';
import { defaultRequestRetentionSettings } from '../../src/core/requests/retention.js';
import { getRequest } from '../../src/store/requests.repository.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, requestQuote, waitForStatus, type WireQuote } from '../helpers/quote.js';
import { depositNative, releaseOf, until } from './attacker.js';

const flood = 300;
const retentionMs = defaultRequestRetentionSettings.retentionMs;

let gateway: TestGateway;
/** One of the flood's requests, deleted by the retention job in the first test. */
let deletedId: Hex | undefined;

beforeAll(async () => {
  gateway = await startTestGateway({ requestRetention: { retentionMs, intervalMs: 1_000, batchSize: 100 } });
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

async function requestRows(): Promise<number> {
  const { db } = gateway.server.database;
  const row = await db.selectFrom('requests').select(db.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('quote traffic does not grow storage without bound', () => {
  it('never-paid requests are removed after expiry + refund window + retention; a paid request is kept', async () => {
    const [payer, attacker] = gateway.devnet.descriptor.accounts;
    const paid = await requestQuote(gateway, payer!, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
    });
    await executeSteps(gateway, paid.steps, payer!);
    const paidId = paid.steps.at(-1)!.requestId;
    await waitForStatus(gateway, paidId, ['success']);
    const before = await requestRows();

    // The flood: a few hundred quotes over HTTP, ten at a time, none of them paid.
    const body = {
      user: attacker!.address,
      originChainId: gateway.devnet.descriptor.chains[0]!.chainId,
      destinationChainId: gateway.devnet.descriptor.chains[1]!.chainId,
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.001').toString(),
      tradeType: 'EXACT_INPUT',
    };
    for (let sent = 0; sent < flood; sent += 10) {
      const answers = await Promise.all(Array.from({ length: 10 }, () => call(gateway.url, 'getQuote', { body })));
      for (const answer of answers) expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      deletedId ??= (answers[0]!.body as WireQuote).steps.at(-1)!.requestId;
    }
    expect(await requestRows()).toBe(before + flood);

    // The total is one bounded count, and agrees with the table.
    const listed = await call(gateway.url, 'getRequests', { query: { includeTotal: 'true', limit: '1' } });
    expect(listed.status).toBe(200);
    expect((listed.body as { total: number }).total).toBe(before + flood);

    // Past every flooded request's expiry, refund window and retention, the job removes them in batches of 100.
    const refundWindowMs = gateway.server.core.config.quote.refundWindowSeconds * 1000;
    const maxTtlMs = gateway.server.core.config.quote.maxTtlSeconds * 1000;
    gateway.server.core.now = () => Date.now() + maxTtlMs + refundWindowMs + retentionMs + 60_000;
    await vi.waitFor(async () => expect(await requestRows()).toBe(before), { timeout: 20_000, interval: 250 });

    const kept = await waitForStatus(gateway, paidId, ['success']);
    expect(kept.status).toBe('success');
    expect(await getRequest(gateway.server.database.db, deletedId!)).toBeUndefined();
  }, 120_000);

  it('a deposit that still arrives for a deleted request loses nothing: it is released back to its depositor (less the refund gas)', async () => {
    const late = gateway.devnet.descriptor.accounts[2]!;
    const chainA = gateway.devnet.descriptor.chains[0]!;
    const value = parseEther('0.001');
    const sent = await depositNative(chainA, late, deletedId!, value);
    await until('the late deposit is released', async () => (await releaseOf(chainA, sent.depositIndex)) !== undefined);
    const released = await releaseOf(chainA, sent.depositIndex);
    // Released to the depositor, less the refund's gas (as every refund of a stray deposit).
    expect(released?.to).toBe(late.address);
    expect(released!.amount).toBeGreaterThan(0n);
    expect(released!.amount).toBeLessThanOrEqual(value);
  }, 60_000);
});
