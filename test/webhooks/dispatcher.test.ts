/**
 * Webhook delivery against a real HTTP receiver, on both databases: every request verifies with the spec's
 * formula and the key, tampering is rejected, custom headers arrive, a 500 or a timeout is retried with growing
 * backoff up to 10 retries, private URLs are refused unless allowed, two instances on one PostgreSQL make each
 * attempt once, and the delivery log and replay work. A dispatcher with a slow poll still posts an earlier run's
 * retry at its due time.
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { configureWebhook } from '../../src/core/webhooks/configureWebhook.js';
import type { WebhookDispatcher } from '../../src/core/webhooks/createWebhookDispatcher.js';
import { listWebhookDeliveries } from '../../src/core/webhooks/listWebhookDeliveries.js';
import { replayWebhookDelivery } from '../../src/core/webhooks/replayWebhookDelivery.js';
import { verifyWebhookSignature } from '../../src/core/webhooks/signature.js';
import { guardedLookup } from '../../src/core/webhooks/webhookUrl.js';
import { setApiKeyWebhook } from '../../src/store/apiKeys.repository.js';
import {
  getWebhookDelivery,
  listWebhookDeliveries as listStored,
} from '../../src/store/webhookDeliveries.repository.js';
import { testDatabaseKinds, useTestDatabase } from '../helpers/db.js';
import {
  changeStatus,
  createKeyWithWebhook,
  sleep,
  startDispatcher,
  testSettings,
  waitForDeliveries,
  webhookContext,
} from './helpers.js';
import { startReceiver, verifySpecSignature, type Receiver } from './receiver.js';

describe.each(testDatabaseKinds)('webhook dispatcher (%s)', (kind) => {
  const database = useTestDatabase(kind);
  const running: WebhookDispatcher[] = [];
  const receivers: Receiver[] = [];
  const dispatcher = async (overrides: Parameters<typeof testSettings>[0] = {}) => {
    const d = startDispatcher(database(), testSettings(overrides));
    running.push(d);
    await d.ready;
    return d;
  };
  const receiver = async (key: string) => {
    const r = await startReceiver(key);
    receivers.push(r);
    return r;
  };
  afterEach(async () => {
    for (const d of running.splice(0)) await d.stop();
  });
  afterAll(async () => {
    for (const r of receivers) await r.close();
  });

  it('posts the webhook form of the status record, signed with the key, with the custom headers', async () => {
    const { id, key } = await createKeyWithWebhook(database(), null);
    const r = await receiver(key);
    await setApiKeyWebhook(database().db, id, {
      webhook: { url: r.url, headers: { 'X-Tenant': 'acme', Authorization: 'Bearer t0k' }, enabled: true },
    });
    await dispatcher();

    const request = await changeStatus(database(), id, 'refund', {
      failReason: 'DOUBLE_SPEND',
      txHash: `0x${'ab'.repeat(32)}`,
      details: 'reverted',
    });
    await r.waitFor((x) => x.length === 1);
    const [got] = r.received;
    expect(got!.verified).toBe(true);
    expect(got!.answered).toBe(200);
    expect(got!.headers['x-tenant']).toBe('acme');
    expect(got!.headers.authorization).toBe('Bearer t0k');
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.json).toEqual({
      event: 'request.status.updated',
      timestamp: expect.any(Number),
      data: {
        status: 'refund',
        inTxHashes: [],
        txHashes: [`0x${'ab'.repeat(32)}`],
        updatedAt: request.updatedAt,
        originChainId: 31337,
        destinationChainId: 31338,
        depositAddress: null,
        requestId: request.id,
        referrer: 'test-app',
        details: { message: 'reverted' },
        failReason: 'DOUBLE_SPEND',
        refundFailReason: 'N/A',
      },
    });
    await waitForDeliveries(database(), id, ([d]) => d?.status !== 'pending');
    const [delivery] = await listWebhookDeliveries(webhookContext(database(), testSettings()), { apiKeyId: id });
    expect(delivery).toMatchObject({
      status: 'delivered',
      attempts: 1,
      log: [{ attempt: 1, statusCode: 200, error: null }],
    });
  });

  it('a tampered body or signature does not verify, and the receiver rejects it', async () => {
    const { id, key } = await createKeyWithWebhook(database(), null);
    const r = await receiver(key);
    await setApiKeyWebhook(database().db, id, { webhook: { url: r.url, headers: {}, enabled: true } });
    await dispatcher();
    await changeStatus(database(), id, 'pending');
    await r.waitFor((x) => x.length === 1);
    const { body, headers } = r.received[0]!;
    const timestamp = String(headers['x-signature-timestamp']);
    const signature = String(headers['x-signature-sha256']);
    expect(signature).toMatch(/^[0-9a-f]{64}$/);
    const tampered = body.replace('"pending"', '"success"');
    expect(tampered).not.toBe(body);
    // The gateway's own verification helper agrees with the spec's formula, and fails on tampering.
    expect(verifyWebhookSignature({ secret: key, timestamp, body, signature })).toBe(true);
    expect(verifyWebhookSignature({ secret: key, timestamp, body: tampered, signature })).toBe(false);
    expect(verifyWebhookSignature({ secret: key, timestamp: `${timestamp}1`, body, signature })).toBe(false);
    expect(verifyWebhookSignature({ secret: `${key}x`, timestamp, body, signature })).toBe(false);
    expect(verifySpecSignature(key, timestamp, tampered, signature)).toBe(false);
    // Replayed to the receiver with the body changed: refused with a non-2xx.
    const answer = await fetch(r.url, {
      method: 'POST',
      headers: {
        'x-signature-timestamp': timestamp,
        'x-signature-sha256': signature,
        'content-type': 'application/json',
      },
      body: tampered,
    });
    expect(answer.status).toBe(401);
  });

  it('a 500 is retried with growing backoff until the receiver accepts; the log keeps every attempt', async () => {
    const { id, key } = await createKeyWithWebhook(database(), null);
    const r = await receiver(key);
    r.script = [500, 500, 500, 503];
    await setApiKeyWebhook(database().db, id, { webhook: { url: r.url, headers: {}, enabled: true } });
    await dispatcher({ retryBaseMs: 40 });
    await changeStatus(database(), id, 'submitted');
    await r.waitFor((x) => x.some((w) => w.answered === 200));
    expect(r.received.map((w) => w.answered)).toEqual([500, 500, 500, 503, 200]);
    expect(r.received.every((w) => w.verified)).toBe(true);
    // Same event each time, byte for byte; a new signature timestamp each time.
    expect(new Set(r.received.map((w) => w.body)).size).toBe(1);
    const gaps = r.received.slice(1).map((w, i) => w.at - r.received[i]!.at);
    for (const [i, gap] of gaps.entries()) expect(gap).toBeGreaterThanOrEqual(40 * 2 ** i - 5);
    expect(gaps[3]!).toBeGreaterThan(gaps[0]!);
    const [delivery] = await waitForDeliveries(database(), id, ([d]) => d?.status !== 'pending');
    expect(delivery).toMatchObject({ status: 'delivered', attempts: 5 });
    expect(delivery!.log.map((a) => [a.attempt, a.statusCode])).toEqual([
      [1, 500],
      [2, 500],
      [3, 500],
      [4, 503],
      [5, 200],
    ]);
    await sleep(200);
    expect(r.received).toHaveLength(5);
  });

  it('with a slow poll, a retry left by an earlier run is posted at its due time (read from the database at start)', async () => {
    const { id, key } = await createKeyWithWebhook(database(), null);
    const r = await receiver(key);
    r.script = [500];
    await setApiKeyWebhook(database().db, id, { webhook: { url: r.url, headers: {}, enabled: true } });
    const earlier = await dispatcher({ retryBaseMs: 1_500 });
    await changeStatus(database(), id, 'submitted');
    await r.waitFor((x) => x.length === 1);
    await waitForDeliveries(database(), id, ([d]) => d?.attempts === 1 && d.log.length === 1);
    await earlier.stop();
    // The retry is due 1.5 s after the first attempt; this run would otherwise look only after its 60 s poll.
    const started = Date.now();
    await dispatcher({ pollIntervalMs: 60_000 });
    await r.waitFor((x) => x.some((w) => w.answered === 200), 10_000);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(r.received.map((w) => w.answered)).toEqual([500, 200]);
  });

  it('gives up after 10 retries (11 attempts); a timeout counts as a failed attempt', async () => {
    const { id, key } = await createKeyWithWebhook(database(), null);
    const r = await receiver(key);
    r.fallback = 500;
    await setApiKeyWebhook(database().db, id, { webhook: { url: r.url, headers: {}, enabled: true } });
    await dispatcher({ retryBaseMs: 2, retryMaxMs: 10 });
    await changeStatus(database(), id, 'failure');
    await r.waitFor((x) => x.length === 11);
    await sleep(150);
    expect(r.received).toHaveLength(11);
    const [delivery] = await listStored(database().db, { apiKeyId: id });
    expect(delivery).toMatchObject({ status: 'failed', attempts: 11, nextAttemptAt: null });

    const slow = await createKeyWithWebhook(database(), null);
    const s = await receiver(slow.key);
    s.delayMs = 400;
    s.script = [200];
    await setApiKeyWebhook(database().db, slow.id, { webhook: { url: s.url, headers: {}, enabled: true } });
    for (const d of running.splice(0)) await d.stop();
    await dispatcher({ timeoutMs: 150, retryBaseMs: 10_000 });
    await changeStatus(database(), slow.id, 'pending');
    await sleep(500);
    const [timedOut] = await listStored(database().db, { apiKeyId: slow.id });
    expect(timedOut).toMatchObject({
      status: 'pending',
      attempts: 1,
      log: [{ attempt: 1, statusCode: null, error: 'timed out after 150 ms' }],
    });
  });

  it('a disabled webhook receives nothing', async () => {
    const { id, key } = await createKeyWithWebhook(database(), null);
    const r = await receiver(key);
    await setApiKeyWebhook(database().db, id, { webhook: { url: r.url, headers: {}, enabled: false } });
    await dispatcher();
    await changeStatus(database(), id, 'success');
    await sleep(250);
    expect(r.received).toEqual([]);
    expect(await listStored(database().db, { apiKeyId: id })).toEqual([]);
  });

  it('private and loopback URLs are refused at configuration and at delivery unless allowed', async () => {
    const { id, key } = await createKeyWithWebhook(database(), null);
    const r = await receiver(key);
    const strict = testSettings({ allowPrivate: false });
    const ctx = webhookContext(database(), strict);
    for (const url of [
      r.url,
      'http://localhost:9/x',
      'http://10.1.2.3/x',
      'http://[::1]:9/x',
      'http://169.254.169.254/latest',
    ]) {
      await expect(configureWebhook(ctx, { apiKeyId: id, webhook: { url } })).rejects.toMatchObject({
        code: 'INVALID_INPUT',
      });
    }
    // Allowed by the server's configuration (the devnet), it is accepted.
    await configureWebhook(webhookContext(database(), testSettings()), { apiKeyId: id, webhook: { url: r.url } });
    // A dispatcher that does not allow private targets refuses to connect, and logs why.
    await dispatcher({ allowPrivate: false, retryBaseMs: 10_000 });
    await changeStatus(database(), id, 'pending');
    await sleep(250);
    expect(r.received).toEqual([]);
    const [delivery] = await listStored(database().db, { apiKeyId: id });
    expect(delivery!.log).toHaveLength(1);
    expect(delivery!.log[0]!.error).toMatch(/private or loopback/);
    // A name that resolves to loopback is refused when connecting, whatever it is called.
    const error = await new Promise<Error | null>((resolve) => guardedLookup('localhost', {}, (e) => resolve(e)));
    expect(error?.message).toMatch(/private or loopback/);
  });

  it('configuring a webhook keeps the key sealed only when the key itself is presented', async () => {
    const { id } = await createKeyWithWebhook(database(), null, { sealSecret: false });
    const ctx = webhookContext(database(), testSettings());
    await expect(
      configureWebhook(ctx, { apiKeyId: id, webhook: { url: 'https://hooks.example/x' } }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(
      configureWebhook(ctx, { apiKeyId: id, webhook: { url: 'https://hooks.example/x' }, apiKey: 'not-the-key' }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' });
    await expect(configureWebhook(ctx, { apiKeyId: 'nope', webhook: null })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
  });

  it('the delivery log lists attempts per key, and a replay posts the same event again', async () => {
    const { id, key } = await createKeyWithWebhook(database(), null);
    const r = await receiver(key);
    r.script = [500];
    await setApiKeyWebhook(database().db, id, { webhook: { url: r.url, headers: {}, enabled: true } });
    const d = await dispatcher();
    const ctx = webhookContext(database(), testSettings(), d.wake);
    await changeStatus(database(), id, 'success');
    await r.waitFor((x) => x.length === 2);
    await waitForDeliveries(database(), id, ([d]) => d?.status === 'delivered');
    const [original] = await listWebhookDeliveries(ctx, { apiKeyId: id });
    expect(original!.log.map((a) => a.statusCode)).toEqual([500, 200]);

    const replay = await replayWebhookDelivery(ctx, { deliveryId: original!.id });
    await r.waitFor((x) => x.length === 3);
    expect(r.received[2]!.body).toBe(r.received[1]!.body);
    expect(r.received[2]!.verified).toBe(true);
    await waitForDeliveries(database(), id, (ds) => ds.every((d) => d.status === 'delivered'));
    expect(await getWebhookDelivery(database().db, replay.id)).toMatchObject({
      status: 'delivered',
      replayOf: original!.id,
      attempts: 1,
    });
    expect(await getWebhookDelivery(database().db, original!.id)).toEqual(original);
    const log = await listWebhookDeliveries(ctx, { apiKeyId: id });
    expect(log.map((x) => x.id)).toEqual([replay.id, original!.id]);

    await expect(replayWebhookDelivery(ctx, { deliveryId: original!.id, apiKeyId: 'other' })).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    await setApiKeyWebhook(database().db, id, { webhook: { url: r.url, headers: {}, enabled: false } });
    await expect(replayWebhookDelivery(ctx, { deliveryId: original!.id })).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('deletes delivered deliveries past the retention when it starts, and keeps pending ones', async () => {
    const { id, key } = await createKeyWithWebhook(database(), null);
    const r = await receiver(key);
    await setApiKeyWebhook(database().db, id, { webhook: { url: r.url, headers: {}, enabled: true } });
    const first = await dispatcher({ retentionMs: 60_000 });
    await changeStatus(database(), id, 'success');
    const [delivered] = await waitForDeliveries(database(), id, ([d]) => d?.status === 'delivered');
    await first.stop();
    // A delivery whose retries go on stays pending, however old: it is never deleted.
    r.script = [500];
    await changeStatus(database(), id, 'failure');
    await sleep(30);
    await dispatcher({ retentionMs: 10, retryBaseMs: 60_000 });
    const left = await waitForDeliveries(database(), id, (ds) => ds.length === 1 && ds[0]!.attempts === 1);
    expect(left[0]).toMatchObject({ status: 'pending' });
    expect(left[0]!.id).not.toBe(delivered!.id);
    expect(await getWebhookDelivery(database().db, delivered!.id)).toBeUndefined();
  });

  // Two instances share a database only on PostgreSQL (PGlite is one process's), so this case exists there alone.
  if (kind === 'postgres') {
    it('two instances on one database make each attempt once', async () => {
      const { id, key } = await createKeyWithWebhook(database(), null);
      const r = await receiver(key);
      const seen = new Set<string>();
      // Every event fails once, then succeeds: each delivery takes exactly two attempts if none is doubled.
      r.decide = (json) => (seen.has(json.data.requestId) ? 200 : (seen.add(json.data.requestId), 500));
      await setApiKeyWebhook(database().db, id, { webhook: { url: r.url, headers: {}, enabled: true } });
      await dispatcher({ retryBaseMs: 20, concurrency: 4 });
      await dispatcher({ retryBaseMs: 20, concurrency: 4 });
      for (let i = 0; i < 20; i++) await changeStatus(database(), id, 'pending');
      await r.waitFor((x) => x.filter((w) => w.answered === 200).length >= 20, 15_000);
      await sleep(200);
      const perRequest = new Map<string, number[]>();
      for (const w of r.received)
        perRequest.set(w.json.data.requestId, [...(perRequest.get(w.json.data.requestId) ?? []), w.answered]);
      expect(perRequest.size).toBe(20);
      for (const answers of perRequest.values()) expect(answers).toEqual([500, 200]);
      const stored = await waitForDeliveries(database(), id, (ds) => ds.every((d) => d.status === 'delivered'));
      expect(stored.map((d) => [d.status, d.attempts, d.log.length])).toEqual(Array(20).fill(['delivered', 2, 2]));
    });
  }
});
