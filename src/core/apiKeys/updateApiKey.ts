import { updateApiKey as updateApiKeyRow } from '../../store/apiKeys.repository.js';
import type { ApiKey, ApiKeyLimits, ApiKeysContext } from './apiKey.js';
import { toApiKey } from './apiKey.js';
import { checkLimits, checkName, normalizePayoutAddress } from './checkSettings.js';
import { apiKeyNotFound } from './getApiKey.js';
import { validateWebhook, type ValidateWebhookParameters } from './validateWebhook.js';

/** Fields to change; an absent field is kept. `webhook: null` removes the webhook, `limits` replaces them all. */
export interface UpdateApiKeyParameters {
  name?: string | undefined;
  sponsorshipEnabled?: boolean | undefined;
  limits?: ApiKeyLimits | undefined;
  webhook?: ValidateWebhookParameters | null | undefined;
  businessVerified?: boolean | undefined;
  payoutAddress?: string | null | undefined;
}

/**
 * Changes a key's settings (`PATCH /admin/api-keys/{id}`, `npm run keys -- update`); the key itself is
 * unchanged. Throws `NOT_FOUND`, or `INVALID_INPUT` for a bad webhook or limits.
 */
export async function updateApiKey(
  ctx: ApiKeysContext,
  id: string,
  params: UpdateApiKeyParameters,
  options: { allowPrivateWebhooks: boolean },
): Promise<ApiKey> {
  const record = await updateApiKeyRow(ctx.db, id, {
    ...(params.name === undefined ? {} : { name: checkName(params.name) }),
    ...(params.sponsorshipEnabled === undefined ? {} : { sponsorshipEnabled: params.sponsorshipEnabled }),
    ...(params.limits === undefined ? {} : { limits: checkLimits(params.limits) }),
    ...(params.webhook === undefined
      ? {}
      : { webhook: params.webhook === null ? null : validateWebhook(params.webhook, { allowPrivate: options.allowPrivateWebhooks }) }),
    ...(params.businessVerified === undefined ? {} : { businessVerified: params.businessVerified }),
    ...(params.payoutAddress === undefined ? {} : { payoutAddress: normalizePayoutAddress(params.payoutAddress) }),
  });
  if (record === undefined) throw apiKeyNotFound(id);
  return toApiKey(record);
}
