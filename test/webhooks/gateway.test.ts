/**
 * Webhooks through the whole gateway on the devnet: a key's webhook is configured with the key itself (sealed
 * by the server), a real quote made with that key is deposited and filled by the solver, and every status
 * change is posted to a real receiver that verifies each signature. The receiver answers 500 until the gateway
 * has been stopped and started again (same PGlite directory) in the middle of the retries: each event then
 * arrives accepted exactly once, and nothing is posted while the gateway is down or after success.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { zeroAddress, parseEther } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DevnetAccount } from '../../src/chain/devnet.js';
import { hashApiKey } from '../../src/core/apiKeys/authenticate.js';
import { configureWebhook } from '../../src/core/webhooks/configureWebhook.js';
import { createServer, type GatewayServer } from '../../src/server/createServer.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import { listWebhookDeliveries } from '../../src/store/webhookDeliveries.repository.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, requestQuote, waitForStatus } from '../helpers/quote.js';
import { sleep } from './helpers.js';
import { startReceiver, type Receiver } from './receiver.js';

let gateway: TestGateway;
let restarted: GatewayServer | undefined;
let receiver: Receiver;
let dataDir: string;
const key = `igw_${randomBytes(24).toString('base64url')}`;

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'gateway-webhooks-'));
  gateway = await startTestGateway({
    dataDir,
    webhooks: {
      secretKey: undefined,
      timeoutMs: 1_000,
      retryBaseMs: 150,
      retryMaxMs: 1_000,
      pollIntervalMs: undefined,
      retentionDays: 30,
    },
  });
  receiver = await startReceiver(key);
});
afterAll(async () => {
  await restarted?.stop();
  await gateway?.stop();
  await receiver?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

it('each status change of a keyed request arrives signed, retried through a restart, accepted exactly once', async () => {
  expect(gateway.config.webhooksAllowPrivate).toBe(true); // the devnet allows local receivers
  const db = gateway.server.database.db;
  await insertApiKey(db, { id: 'webhook-key', name: 'Webhook key', keyHash: hashApiKey(key), now: Date.now() });
  await configureWebhook(gateway.server.core, {
    apiKeyId: 'webhook-key',
    webhook: { url: receiver.url, headers: { 'X-Custom': 'yes' } },
    apiKey: key,
  });
  receiver.fallback = 500;

  const [alice] = gateway.devnet.descriptor.accounts as [DevnetAccount];
  const quote = await requestQuote(
    gateway,
    alice,
    { originCurrency: zeroAddress, destinationCurrency: zeroAddress, amount: parseEther('0.01').toString() },
    { 'x-api-key': key },
  );
  const requestId = quote.steps.at(-1)!.requestId;
  await executeSteps(gateway, quote.steps, alice);
  await waitForStatus(gateway, requestId, ['success']);
  const statuses = ['pending', 'submitted', 'success'];
  const attemptsOf = (status: string) => receiver.received.filter((w) => w.json?.data?.status === status).length;
  // In the middle of the retries: every event has been refused at least twice.
  await receiver.waitFor(() => statuses.every((s) => attemptsOf(s) >= 2), 10_000);

  await gateway.server.stop();
  const beforeRestart = receiver.received.length;
  receiver.fallback = 200;
  await sleep(500);
  expect(receiver.received).toHaveLength(beforeRestart); // nothing is posted while the gateway is down

  restarted = await createServer(gateway.config);
  await restarted.start();
  await receiver.waitFor((x) => x.filter((w) => w.answered === 200).length >= 3, 10_000);
  await sleep(1_000);

  expect(receiver.received.every((w) => w.verified && w.headers['x-custom'] === 'yes')).toBe(true);
  expect(
    receiver.received.every((w) => w.json.data.requestId === requestId && w.json.event === 'request.status.updated'),
  ).toBe(true);
  const accepted = receiver.received.filter((w) => w.answered === 200).map((w) => w.json.data.status);
  expect(accepted.sort()).toEqual([...statuses].sort());
  for (const status of statuses) {
    const bodies = new Set(receiver.received.filter((w) => w.json.data.status === status).map((w) => w.body));
    expect(bodies.size).toBe(1); // every attempt of one event posts the same bytes
  }

  const deliveries = await listWebhookDeliveries(restarted.database.db, { apiKeyId: 'webhook-key' });
  expect(deliveries).toHaveLength(3);
  for (const delivery of deliveries) {
    expect(delivery.status).toBe('delivered');
    expect(delivery.attempts).toBeGreaterThanOrEqual(3);
    expect(delivery.log.map((a) => a.statusCode)).toEqual([...Array(delivery.attempts - 1).fill(500), 200]);
  }
  // The log counts what the receiver saw: no attempt was lost or repeated across the restart.
  expect(deliveries.reduce((n, d) => n + d.attempts, 0)).toBe(receiver.received.length);
}, 120_000);
