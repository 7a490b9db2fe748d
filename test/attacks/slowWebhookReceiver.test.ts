/**
 * Attack: a key owner points its webhook at a receiver that accepts the connection and never
 * answers, and makes many of its requests change status. Each attempt then holds a dispatcher slot until the
 * attempt times out. Without a per-key limit the slow key takes every slot and other keys' deliveries wait behind
 * it; with the limit, another key's deliveries arrive while the slow key's attempts are still hanging.
 * Real database (both kinds), real HTTP receivers, the real dispatcher.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, configFromEnvironment } from '../../src/server/config.js';
import { setApiKeyWebhook } from '../../src/store/apiKeys.repository.js';
import { testDatabaseKinds, useTestDatabase } from '../helpers/db.js';
import { changeStatus, createKeyWithWebhook, startDispatcher, testSettings } from '../webhooks/helpers.js';
import { startReceiver, type Receiver } from '../webhooks/receiver.js';

/** A receiver that reads each request and never answers; counts requests that arrived and that were given up. */
async function startHangingReceiver() {
  const state = { arrived: 0, abandoned: 0 };
  const server = http.createServer((req) => {
    state.arrived += 1;
    req.resume();
    req.socket.on('close', () => (state.abandoned += 1));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    state,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe.each(testDatabaseKinds)('a slow webhook receiver does not starve other keys (%s)', (kind) => {
  const database = useTestDatabase(kind);
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const close of closers) await close();
  });

  it("delivers key B's webhooks while key A's receiver hangs on every attempt", async () => {
    const slow = await startHangingReceiver();
    closers.push(slow.close);
    const a = await createKeyWithWebhook(database(), { url: slow.url, headers: {}, enabled: true });
    const b = await createKeyWithWebhook(database(), null);
    const fast: Receiver = await startReceiver(b.key);
    closers.push(fast.close);
    await setApiKeyWebhook(database().db, b.id, { webhook: { url: fast.url, headers: {}, enabled: true } });

    // The attacker's deliveries are all due before the victim's, and outnumber the instance's slots.
    const settings = testSettings({ concurrency: 8, perKeyConcurrency: 2, timeoutMs: 4_000 });
    for (let i = 0; i < 12; i += 1) await changeStatus(database(), a.id, 'waiting');
    for (let i = 0; i < 3; i += 1) await changeStatus(database(), b.id, 'waiting');

    const dispatcher = startDispatcher(database(), settings);
    await dispatcher.ready;
    try {
      await fast.waitFor((got) => got.length === 3, 15_000);
      // B's deliveries all arrived before any of A's hanging attempts was given up, and A never held more than
      // its share of the slots.
      expect(slow.state.abandoned).toBe(0);
      expect(slow.state.arrived).toBeGreaterThan(0);
      expect(slow.state.arrived).toBeLessThanOrEqual(2);
      expect(fast.received.every((x) => x.verified && x.answered === 200)).toBe(true);
    } finally {
      await slow.close();
      await dispatcher.stop();
    }
  });
});

describe('GATEWAY_WEBHOOK_CONCURRENCY_PER_KEY', () => {
  const parse = (env: Record<string, string>) =>
    configFromEnvironment(env, [], `0x${'11'.repeat(32)}`).webhooks?.perKeyConcurrency;
  it('defaults to 4, takes a positive integer, and refuses anything else', () => {
    expect(parse({})).toBe(4);
    expect(parse({ GATEWAY_WEBHOOK_CONCURRENCY_PER_KEY: '1' })).toBe(1);
    for (const bad of ['0', '-2', '2.5', 'many']) {
      expect(() => parse({ GATEWAY_WEBHOOK_CONCURRENCY_PER_KEY: bad }), bad).toThrow(ConfigError);
    }
  });
});
