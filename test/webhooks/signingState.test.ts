/**
 * Issue #20 item 4, as the user met it: a key made with `npm run keys` where the gateway's webhook encryption
 * key was not the one the gateway runs with. Its webhook looked enabled and every delivery was dropped with
 * nothing above debug in the log. Now: the gateway warns at start, the admin listing shows the signing state,
 * each dropped delivery is logged at warn, and the delivery log and replay are in the admin REST API, so once
 * the configuration is fixed the dropped events can be sent again, signed.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseEther, zeroAddress, type Hex } from 'viem';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { DevnetAccount } from '../../src/chain/devnet.js';
import { createServer, type GatewayServer } from '../../src/server/createServer.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, requestQuote, waitForStatus } from '../helpers/quote.js';
import { startReceiver, type Receiver } from './receiver.js';

const run = promisify(execFile);
const adminToken = 'admin-token-signing-state';
const admin = { authorization: `Bearer ${adminToken}` };
/** The encryption key the CLI was given, and another one the gateway first runs with. */
const cliSecretKey: Hex = `0x${randomBytes(32).toString('hex')}`;
const gatewaySecretKey: Hex = `0x${randomBytes(32).toString('hex')}`;

let dataDir: string;
let gateway: TestGateway;
let fixed: GatewayServer | undefined;
let fixedUrl: string;
let receiver: Receiver;
const logs: Array<{ level: number; msg: string; [field: string]: unknown }> = [];
let apiKeyId: string;
let key: string;

const webhookSettings = (secretKey: Hex) => ({
  secretKey,
  timeoutMs: 1_000,
  retryBaseMs: 100,
  retryMaxMs: 500,
  pollIntervalMs: undefined,
  retentionDays: 30,
});

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(tmpdir(), 'gateway-signing-'));
  receiver = await startReceiver('not-known-yet');
  // `npm run keys -- create … --webhook …` with a GATEWAY_WEBHOOK_SECRET_KEY that is not the gateway's.
  const { stdout } = await run(
    'npx',
    ['tsx', '--liftoff-only', 'src/server/keysCli.ts', 'create', '--name', 'Shop', '--webhook', receiver.url, '--json'],
    {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: {
        ...process.env,
        GATEWAY_DATA_DIR: dataDir,
        DATABASE_URL: '',
        GATEWAY_SOLVER_PRIVATE_KEY: '',
        GATEWAY_WEBHOOK_SECRET_KEY: cliSecretKey,
        GATEWAY_WEBHOOKS_ALLOW_PRIVATE: 'true',
      },
    },
  );
  const created = JSON.parse(stdout) as { apiKey: { id: string; webhookSigning: string }; key: string };
  expect(created.apiKey.webhookSigning).toBe('ready');
  apiKeyId = created.apiKey.id;
  key = created.key;
  receiver = await restartReceiverWithKey(receiver, key);

  gateway = await startTestGateway(
    { dataDir, adminToken, webhooks: webhookSettings(gatewaySecretKey), logLevel: 'info' },
    { server: { logDestination: { write: (line: string) => void logs.push(JSON.parse(line)) } } },
  );
}, 400_000);

afterAll(async () => {
  await fixed?.stop();
  await gateway?.stop();
  await receiver?.close();
  if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
});

/** The receiver verifies signatures with the API key, which is known only once the CLI has printed it. */
async function restartReceiverWithKey(old: Receiver, apiKey: string): Promise<Receiver> {
  const port = new URL(old.url).port;
  await old.close();
  const next = await startReceiver(apiKey, Number(port));
  return next;
}

it('a webhook that cannot be signed is shown, warned about, logged when dropped, and replayed once fixed', async () => {
  // At start the gateway says which key's webhook cannot be signed, and why.
  const startWarning = logs.find((l) => l.level === 40 && l.apiKeyId === apiKeyId);
  expect(startWarning?.msg).toContain('does not open');
  expect(startWarning?.webhookSigning).toBe('wrongEncryptionKey');

  // The admin listing shows it, not only `enabled: true`.
  const listed = await call(gateway.url, 'listApiKeys', { headers: admin });
  expect(listed.status).toBe(200);
  const listedKey = listed.body.apiKeys.find((k: { id: string }) => k.id === apiKeyId);
  expect(listedKey).toMatchObject({ webhook: { enabled: true }, webhookSigning: 'wrongEncryptionKey' });

  // A real bridge with the key: every status change is dropped, each with a warning naming the request.
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

  const deliveriesPath = `/admin/api-keys/${apiKeyId}/webhook-deliveries`;
  let log = await call(gateway.url, 'listWebhookDeliveries', { path: deliveriesPath, headers: admin });
  for (let i = 0; i < 100 && log.body.deliveries.some((d: { status: string }) => d.status === 'pending'); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    log = await call(gateway.url, 'listWebhookDeliveries', { path: deliveriesPath, headers: admin });
  }
  expect(log.status).toBe(200);
  const dropped = log.body.deliveries as Array<{ id: number; status: string; requestId: string; log: any[] }>;
  expect(dropped.map((d) => d.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
  expect(dropped.every((d) => d.requestId === requestId && /cannot be opened/.test(d.log[0].error))).toBe(true);
  expect(receiver.received).toHaveLength(0);
  const dropWarnings = logs.filter((l) => l.level === 40 && l.msg.startsWith('webhook: delivery dropped'));
  expect(dropWarnings.map((l) => l.deliveryId).sort()).toEqual(dropped.map((d) => d.id).sort());
  expect(dropWarnings.every((l) => l.requestId === requestId)).toBe(true);

  // Fix the configuration: the gateway's GATEWAY_WEBHOOK_SECRET_KEY is now the one the key was sealed with.
  await gateway.server.stop();
  fixed = await createServer(
    { ...gateway.config, webhooks: webhookSettings(cliSecretKey) },
    {
      logDestination: { write: () => undefined },
    },
  );
  fixedUrl = await fixed.start();
  const relisted = await call(fixedUrl, 'getApiKey', { path: `/admin/api-keys/${apiKeyId}`, headers: admin });
  expect(relisted.body.apiKey.webhookSigning).toBe('ready');

  // Replay the dropped events through the admin API: each arrives, signed with the key.
  for (const delivery of dropped) {
    const replay = await call(fixedUrl, 'replayWebhookDelivery', {
      path: `${deliveriesPath}/${delivery.id}/replay`,
      headers: admin,
    });
    expect(replay.status).toBe(201);
    expect(replay.body.delivery).toMatchObject({ replayOf: delivery.id, status: 'pending' });
  }
  await receiver.waitFor((received) => received.length >= 3, 20_000);
  expect(receiver.received.every((w) => w.verified && w.json.data.requestId === requestId)).toBe(true);
  expect(receiver.received.map((w) => w.json.data.status).sort()).toEqual(['pending', 'submitted', 'success']);

  // Replaying a delivery of another key, or an unknown one, is refused without a change.
  const foreign = await call(fixedUrl, 'replayWebhookDelivery', {
    path: `/admin/api-keys/key_other/webhook-deliveries/${dropped[0]!.id}/replay`,
    headers: admin,
  });
  expect(foreign.status).toBe(404);
  const unknownKey = await call(fixedUrl, 'listWebhookDeliveries', {
    path: '/admin/api-keys/key_missing/webhook-deliveries',
    headers: admin,
  });
  expect(unknownKey.status).toBe(404);
  const noToken = await call(fixedUrl, 'listWebhookDeliveries', { path: deliveriesPath });
  expect(noToken.status).toBe(401);
}, 400_000);
