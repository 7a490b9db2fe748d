import { randomBytes, randomUUID } from 'node:crypto';
import type { ApiKeyRecord, ApiKeyWebhook } from '../../store/apiKeys.repository.js';
import type { CoreContext } from '../context.js';
import { hashApiKey } from './authenticate.js';

/** What the key administration functions use: the database and the clock (the CLI has nothing more). */
export type ApiKeysContext = Pick<CoreContext, 'db' | 'now'>;

/** Settings of a key the core reads; other fields of `limits` are kept as given. */
export interface ApiKeyLimits {
  /** Requests per minute of this key (rate limit); the configured default when absent. */
  requestsPerMinute?: number;
  /** Most USD of fast fills awaiting their deposits at once (decimal string); fast fill is off when absent. */
  fastFillUsd?: string;
}

/** An API key as the administrator sees it: everything but the key, which is only shown when it is made. */
export interface ApiKey {
  id: string;
  name: string;
  sponsorshipEnabled: boolean;
  limits: ApiKeyLimits;
  webhook: ApiKeyWebhook | null;
  businessVerified: boolean;
  payoutAddress: string | null;
  /** Unix ms. */
  createdAt: number;
  /** Unix ms; null while the key works. */
  revokedAt: number | null;
}

/** A key together with its secret: the answer of creation and rotation, the only time the secret is shown. */
export interface ApiKeyWithSecret {
  apiKey: ApiKey;
  /** The `x-api-key` value. Not stored (only its hash is); lost if not saved now. */
  key: string;
}

/**
 * Seals a new key as its webhook signing secret (`sealWebhookSecret` with the server's webhook encryption key);
 * creation and rotation are the only moments the key is known. Absent: the secret is not kept, and the key's
 * webhook needs the key once more (`configureWebhook` with `apiKey`) before deliveries are signed.
 */
export type SealWebhookSecret = (apiKeyId: string, key: string) => string;

/** Prefix of every key the gateway issues, so a leaked key is recognisable (secret scanners, logs). */
export const apiKeyPrefix = 'igw_';

/** A fresh key (32 random bytes, base64url) and the hash that is stored in its place. */
export function generateApiKey(): { key: string; keyHash: string } {
  const key = `${apiKeyPrefix}${randomBytes(32).toString('base64url')}`;
  return { key, keyHash: hashApiKey(key) };
}

export const newApiKeyId = (): string => `key_${randomUUID().replace(/-/g, '')}`;

export function toApiKey(record: ApiKeyRecord): ApiKey {
  return {
    id: record.id,
    name: record.name,
    sponsorshipEnabled: record.sponsorshipEnabled,
    limits: record.limits,
    webhook: record.webhook,
    businessVerified: record.businessVerified,
    payoutAddress: record.payoutAddress,
    createdAt: record.createdAt,
    revokedAt: record.revokedAt,
  };
}
