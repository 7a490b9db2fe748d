import type { SealWebhookSecret } from '../core/apiKeys/apiKey.js';
import type { CoreContext } from '../core/context.js';

export interface ReadinessCheck {
  ok: boolean;
  message?: string;
}

/** What `/ready` reports: the composition root checks the database and every chain and answers this. */
export interface ReadinessReport {
  ready: boolean;
  checks: Record<string, ReadinessCheck>;
}

/** What REST handlers receive besides the request. */
export interface RestContext {
  core: CoreContext;
  readiness: () => Promise<ReadinessReport>;
  /** The admin operations: the bearer token (undefined = admin interface off) and the webhook URL policy. */
  admin: { token: string | undefined; allowPrivateWebhooks: boolean; sealWebhookSecret?: SealWebhookSecret };
}
