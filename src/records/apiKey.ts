/** An API key as the store keeps it and the core reads it (the key itself is never kept). */
import type { JsonObject } from './json.js';

/** The webhook of an API key (one per key, as in the reference). */
export interface ApiKeyWebhook {
  url: string;
  /** Custom headers sent with every delivery. */
  headers: Record<string, string>;
  enabled: boolean;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** Hash of the key (the key itself is never stored); the lookup key for `x-api-key`. */
  keyHash: string;
  sponsorshipEnabled: boolean;
  /** Rate limits and quotas; shape owned by the core. */
  limits: JsonObject;
  webhook: ApiKeyWebhook | null;
  createdAt: number;
  revokedAt: number | null;
  /** Business verification completed (a revenue-share condition). */
  businessVerified: boolean;
  /** EVM address that receives the revenue share, when one is on file. */
  payoutAddress: string | null;
  /**
   * The key sealed as its webhook signing secret (`sealWebhookSecret` in src/core/webhooks); null when the gateway
   * keeps none (the key was made where no webhook encryption key was known). Never shown as such.
   */
  webhookSecret: string | null;
  /** Fee sponsorship the administrator allows the key (micro-USD); nothing is sponsored beyond it. */
  sponsorshipAllowanceUsdMicros: bigint;
  /** Fee sponsorship the key has drawn so far (micro-USD). */
  sponsorshipSpentUsdMicros: bigint;
  /** Fee sponsorship the key's open sponsored quotes hold (micro-USD): drawn when they fill, released otherwise. */
  sponsorshipReservedUsdMicros: bigint;
}
