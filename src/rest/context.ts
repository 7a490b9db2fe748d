import type { SealWebhookSecret } from '../core/apiKeys/apiKey.js';
import type { CoreContext } from '../core/context.js';
import type { Caller } from '../core/vocabulary/caller.js';

export interface ReadinessCheck {
  ok: boolean;
  message?: string;
}

/** What `/ready` reports: the composition root checks the database and every chain and answers this. */
export interface ReadinessReport {
  ready: boolean;
  /** Ready, but a part fails that only what needs it is refused for (a chain, a token, a price feed). */
  degraded: boolean;
  checks: Record<string, ReadinessCheck>;
}

/** What REST handlers receive besides the request. */
export interface RestContext {
  core: CoreContext;
  /** Who is calling: resolved once per request, when it was admitted (`src/rest/rateLimit.ts`). */
  caller: Caller;
  readiness: () => Promise<ReadinessReport>;
  /** The admin operations: the bearer token (undefined = admin interface off) and the webhook URL policy. */
  admin: { token: string | undefined; allowPrivateWebhooks: boolean; sealWebhookSecret?: SealWebhookSecret };
}
