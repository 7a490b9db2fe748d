import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Hex } from 'viem';
import { GatewayError } from '../errors.js';
import type { WebhookEncryptionKey } from '../ports/webhookSettings.js';

/**
 * The HMAC secret of a key's webhooks is the API key itself (as in the reference: receivers verify with their
 * key), but the gateway stores keys only as hashes. So the key is also kept sealed: AES-256-GCM under the
 * server's webhook encryption key, bound to the key's id (a sealed secret copied onto another key row does not
 * open). A database leak alone does not reveal keys; the database and the encryption key together do.
 */
const version = 'v1';

/**
 * The encryption key when none is configured: HKDF of the solver's private key, so every deployment has one
 * that survives restarts without new configuration. Rotating the solver key then orphans the sealed secrets
 * (the webhooks of those keys stop until their secrets are sealed again); configure
 * `GATEWAY_WEBHOOK_SECRET_KEY` to decouple the two.
 */
export function deriveWebhookEncryptionKey(solverPrivateKey: Hex): WebhookEncryptionKey {
  return Buffer.from(
    hkdfSync(
      'sha256',
      Buffer.from(solverPrivateKey.slice(2), 'hex'),
      Buffer.alloc(0),
      'intent-gateway/webhook-secrets/v1',
      32,
    ),
  );
}

/** Seal an API key as the signing secret of key `apiKeyId` (store it with `insertApiKey` / `setApiKeyWebhook`). */
export function sealWebhookSecret(encryptionKey: WebhookEncryptionKey, apiKeyId: string, apiKey: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', encryptionKey, iv);
  cipher.setAAD(Buffer.from(apiKeyId, 'utf8'));
  const sealed = Buffer.concat([cipher.update(apiKey, 'utf8'), cipher.final()]);
  return [
    version,
    iv.toString('base64url'),
    cipher.getAuthTag().toString('base64url'),
    sealed.toString('base64url'),
  ].join(':');
}

/**
 * The API key of a sealed secret. Throws `SERVICE_UNAVAILABLE` when it does not open (another encryption key, or
 * another key's secret): a configuration problem of the server, not something a retry of the client cures.
 */
export function openWebhookSecret(encryptionKey: WebhookEncryptionKey, apiKeyId: string, sealed: string): string {
  const [v, iv, tag, data] = sealed.split(':');
  try {
    if (v !== version || iv === undefined || tag === undefined || data === undefined) throw new Error('unknown format');
    const decipher = createDecipheriv('aes-256-gcm', encryptionKey, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(apiKeyId, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  } catch (error) {
    throw new GatewayError(
      'SERVICE_UNAVAILABLE',
      `The webhook signing secret of API key ${apiKeyId} cannot be opened with this server's webhook encryption key`,
      { cause: error },
    );
  }
}
