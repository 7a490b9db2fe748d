import { randomBytes } from 'node:crypto';
import { hashApiKey } from '../../src/core/apiKeys/authenticate.js';
import type { CoreContext } from '../../src/core/context.js';
import {
  createWebhookDispatcher,
  defaultWebhookSettings,
  type WebhookDispatcher,
} from '../../src/core/webhooks/createWebhookDispatcher.js';
import type { WebhookSettings } from '../../src/core/ports/webhookSettings.js';
import { sealWebhookSecret } from '../../src/core/apiKeys/webhookSecret.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import type { ApiKeyWebhook } from '../../src/records/apiKey.js';
import type { Database } from '../../src/store/database.js';
import type { RequestRecord } from '../../src/records/request.js';
import { insertRequest, updateRequestStatus } from '../../src/store/requests.repository.js';
import { listenWebhookDeliveries, listWebhookDeliveries } from '../../src/store/webhookDeliveries.repository.js';
import type { WebhookDelivery } from '../../src/records/webhookDelivery.js';
import { newRequest } from '../store/requestFixture.js';
import { testDatabaseUrl } from '../helpers/db.js';

export const silentLog = { debug() {}, info() {}, warn() {}, error() {} };

export const encryptionKey = randomBytes(32);

/** Fast settings for tests: small backoff, short timeout, private URLs allowed (the receivers are local). */
export function testSettings(overrides: Partial<WebhookSettings> = {}): WebhookSettings {
  return {
    ...defaultWebhookSettings,
    allowPrivate: true,
    encryptionKey,
    timeoutMs: 1_000,
    retryBaseMs: 20,
    retryMaxMs: 1_000,
    pollIntervalMs: 50,
    ...overrides,
  };
}

let keys = 0;

/** A stored API key with a webhook and its sealed signing secret; returns the key (the receivers' secret). */
export async function createKeyWithWebhook(
  database: Database,
  webhook: ApiKeyWebhook | null,
  options: { sealSecret?: boolean } = {},
): Promise<{ id: string; key: string }> {
  keys += 1;
  const id = `wh_${keys}_${randomBytes(3).toString('hex')}`;
  const key = `igw_${randomBytes(24).toString('base64url')}`;
  await insertApiKey(database.db, {
    id,
    name: id,
    keyHash: hashApiKey(key),
    webhook,
    webhookSecret: options.sealSecret === false ? null : sealWebhookSecret(encryptionKey, id, key),
    now: Date.now(),
  });
  return { id, key };
}

/** A request quoted with `apiKeyId`, moved to `status` (a real status change: request row + event + delivery). */
export async function changeStatus(
  database: Database,
  apiKeyId: string | null,
  status: RequestRecord['status'] = 'pending',
  extra: Partial<Parameters<typeof updateRequestStatus>[2]> = {},
): Promise<RequestRecord> {
  const request = await insertRequest(
    database.db,
    newRequest({ apiKeyId, referrer: 'test-app', createdAt: Date.now() }),
  );
  const updated = await updateRequestStatus(database.db, request.id, { status, now: Date.now(), ...extra });
  return updated!;
}

/** A dispatcher on `database`, woken by LISTEN on PostgreSQL as the server does. */
export function startDispatcher(
  database: Database,
  settings: WebhookSettings,
): WebhookDispatcher & { ready: Promise<void> } {
  const dispatcher = createWebhookDispatcher({
    db: database.db,
    log: silentLog,
    now: () => Date.now(),
    settings,
    ...(database.dialect === 'postgres'
      ? {
          subscribe: (wake: () => void) =>
            listenWebhookDeliveries({
              databaseUrl: testDatabaseUrl,
              schema: database.schema,
              onDelivery: wake,
              onError: () => undefined,
            }),
        }
      : {}),
  });
  return Object.assign(dispatcher, { ready: dispatcher.start() });
}

/** The core context the webhook operations need. */
export const webhookContext = (
  database: Database,
  settings: WebhookSettings,
  wake: () => void = () => undefined,
): CoreContext =>
  ({ db: database.db, now: () => Date.now(), log: silentLog, webhooks: { settings, wake } }) as unknown as CoreContext;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The key's deliveries once `predicate` holds (the dispatcher records an attempt just after the answer). */
export async function waitForDeliveries(
  database: Database,
  apiKeyId: string,
  predicate: (deliveries: WebhookDelivery[]) => boolean,
  timeoutMs = 5_000,
): Promise<WebhookDelivery[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const deliveries = await listWebhookDeliveries(database.db, { apiKeyId });
    if (predicate(deliveries)) return deliveries;
    if (Date.now() > deadline)
      throw new Error(`deliveries of ${apiKeyId} did not get there: ${JSON.stringify(deliveries)}`);
    await sleep(10);
  }
}
