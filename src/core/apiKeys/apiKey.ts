import { randomBytes, randomUUID } from 'node:crypto';
import type { ApiKeyRecord, ApiKeyWebhook } from '../../records/apiKey.js';
import type { CoreContext } from '../context.js';
import { openWebhookSecret } from './webhookSecret.js';
import type { WebhookEncryptionKey } from '../ports/webhookSettings.js';
import { hashApiKey } from './authenticate.js';

/**
 * What the key administration functions use: the database and the clock, and the webhook encryption key when
 * it is known (the server always knows it; `npm run keys` only when given the gateway's key), to tell whether a
 * key's webhook deliveries can be signed.
 */
export type ApiKeysContext = Pick<CoreContext, 'db' | 'now'> & {
  webhooks?: { settings: { encryptionKey: WebhookEncryptionKey } } | undefined;
};

/**
 * Whether the gateway can sign the key's webhook deliveries (they are signed with the key itself, kept sealed):
 * - `ready`: the sealed key opens with this gateway's webhook encryption key;
 * - `noSecret`: the gateway keeps no sealed key (the key was made or rotated where it could not be sealed), so
 *   no delivery is made: rotate the key where it can be sealed;
 * - `wrongEncryptionKey`: the sealed key does not open with this gateway's encryption key (another
 *   `GATEWAY_WEBHOOK_SECRET_KEY` or solver key), so deliveries are dropped;
 * - `unchecked`: a sealed key is kept, but this process does not know the encryption key to check it.
 */
export type WebhookSigning = 'ready' | 'noSecret' | 'wrongEncryptionKey' | 'unchecked';

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
  /**
   * Metered fee sponsorship, micro-USD as decimal strings: what the administrator allows the key, what its filled
   * sponsored quotes and sponsored gasless batches have drawn, what its open sponsored quotes hold (drawn when they
   * fill, released when they expire unpaid, fail or are refunded), and what is left (allowance less spent and
   * reserved, never below 0: `sponsorshipRemaining`).
   */
  sponsorshipAllowanceUsdMicros: string;
  sponsorshipSpentUsdMicros: string;
  sponsorshipReservedUsdMicros: string;
  sponsorshipRemainingUsdMicros: string;
  limits: ApiKeyLimits;
  webhook: ApiKeyWebhook | null;
  /** Whether the gateway can sign this key's webhook deliveries (see `WebhookSigning`). */
  webhookSigning: WebhookSigning;
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
const apiKeyPrefix = 'igw_';

/** A fresh key (32 random bytes, base64url) and the hash that is stored in its place. */
export function generateApiKey(): { key: string; keyHash: string } {
  const key = `${apiKeyPrefix}${randomBytes(32).toString('base64url')}`;
  return { key, keyHash: hashApiKey(key) };
}

export const newApiKeyId = (): string => `key_${randomUUID().replace(/-/g, '')}`;

/** Whether the key's webhook deliveries can be signed here (see `WebhookSigning`). */
function webhookSigning(ctx: Pick<ApiKeysContext, 'webhooks'>, record: ApiKeyRecord): WebhookSigning {
  if (record.webhookSecret === null) return 'noSecret';
  const encryptionKey = ctx.webhooks?.settings.encryptionKey;
  if (encryptionKey === undefined) return 'unchecked';
  try {
    openWebhookSecret(encryptionKey, record.id, record.webhookSecret);
    return 'ready';
  } catch {
    return 'wrongEncryptionKey';
  }
}

/** What a key can still sponsor, micro-USD: its allowance less what it spent and what it holds, never below 0. */
export function sponsorshipRemaining(
  record: Pick<
    ApiKeyRecord,
    'sponsorshipAllowanceUsdMicros' | 'sponsorshipSpentUsdMicros' | 'sponsorshipReservedUsdMicros'
  >,
): bigint {
  const left =
    record.sponsorshipAllowanceUsdMicros - record.sponsorshipSpentUsdMicros - record.sponsorshipReservedUsdMicros;
  return left > 0n ? left : 0n;
}

export function toApiKey(ctx: Pick<ApiKeysContext, 'webhooks'>, record: ApiKeyRecord): ApiKey {
  return {
    id: record.id,
    name: record.name,
    sponsorshipEnabled: record.sponsorshipEnabled,
    sponsorshipAllowanceUsdMicros: record.sponsorshipAllowanceUsdMicros.toString(),
    sponsorshipSpentUsdMicros: record.sponsorshipSpentUsdMicros.toString(),
    sponsorshipReservedUsdMicros: record.sponsorshipReservedUsdMicros.toString(),
    sponsorshipRemainingUsdMicros: sponsorshipRemaining(record).toString(),
    limits: record.limits,
    webhook: record.webhook,
    webhookSigning: webhookSigning(ctx, record),
    businessVerified: record.businessVerified,
    payoutAddress: record.payoutAddress,
    createdAt: record.createdAt,
    revokedAt: record.revokedAt,
  };
}
