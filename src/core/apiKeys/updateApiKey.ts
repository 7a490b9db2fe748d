import { getApiKey as getApiKeyRow, updateApiKey as updateApiKeyRow } from '../../store/apiKeys.repository.js';
import type { ApiKeyWebhook } from '../../records/apiKey.js';
import { GatewayError } from '../errors.js';
import type { ApiKey, ApiKeyLimits, ApiKeysContext } from './apiKey.js';
import { toApiKey } from './apiKey.js';
import { checkLimits, checkName, normalizePayoutAddress, parseSponsorshipAllowance } from './checkSettings.js';
import { apiKeyNotFound } from './getApiKey.js';
import { validateWebhook, type ValidateWebhookParameters } from './validateWebhook.js';

/**
 * Fields to change; an absent field is kept. `webhook: null` removes the webhook; a webhook's absent fields
 * are kept from the current webhook (so `{ enabled: false }` pauses it); `limits` replaces them all.
 */
export interface UpdateApiKeyParameters {
  name?: string | undefined;
  sponsorshipEnabled?: boolean | undefined;
  limits?: ApiKeyLimits | undefined;
  webhook?: Partial<ValidateWebhookParameters> | null | undefined;
  businessVerified?: boolean | undefined;
  payoutAddress?: string | null | undefined;
  /** Fee sponsorship allowed to the key, micro-USD as a decimal integer string (see `ApiKey`). */
  sponsorshipAllowanceUsdMicros?: string | undefined;
}

/**
 * Changes a key's settings (`PATCH /admin/api-keys/{id}`, `npm run keys -- update`); the key itself is
 * unchanged. Throws `NOT_FOUND`, or `INVALID_INPUT` for a bad webhook or limits, or for enabling a webhook of a
 * key whose signing secret the gateway does not keep (its deliveries could never be signed: rotate the key
 * where it can be sealed first).
 */
export async function updateApiKey(
  ctx: ApiKeysContext,
  id: string,
  params: UpdateApiKeyParameters,
  options: { allowPrivateWebhooks: boolean },
): Promise<ApiKey> {
  const webhook =
    params.webhook === undefined || params.webhook === null
      ? params.webhook
      : await mergeWebhook(ctx, id, params.webhook);
  const record = await updateApiKeyRow(ctx.db, id, {
    ...(params.name === undefined ? {} : { name: checkName(params.name) }),
    ...(params.sponsorshipEnabled === undefined ? {} : { sponsorshipEnabled: params.sponsorshipEnabled }),
    ...(params.limits === undefined ? {} : { limits: checkLimits(params.limits) }),
    ...(webhook === undefined
      ? {}
      : {
          webhook: webhook === null ? null : validateWebhook(webhook, { allowPrivate: options.allowPrivateWebhooks }),
        }),
    ...(params.businessVerified === undefined ? {} : { businessVerified: params.businessVerified }),
    ...(params.payoutAddress === undefined ? {} : { payoutAddress: normalizePayoutAddress(params.payoutAddress) }),
    ...(params.sponsorshipAllowanceUsdMicros === undefined
      ? {}
      : { sponsorshipAllowanceUsdMicros: parseSponsorshipAllowance(params.sponsorshipAllowanceUsdMicros) }),
  });
  if (record === undefined) throw apiKeyNotFound(id);
  return toApiKey(ctx, record);
}

/**
 * The webhook after a partial change: fields not given are the current webhook's. Without a current webhook the
 * change must create one, so it needs `url`. (Read, then written: two admins patching the same webhook at once
 * may lose one change, which an admin operation can live with.)
 */
async function mergeWebhook(
  ctx: ApiKeysContext,
  id: string,
  change: Partial<ValidateWebhookParameters>,
): Promise<ValidateWebhookParameters> {
  const record = await getApiKeyRow(ctx.db, id);
  if (record === undefined) throw apiKeyNotFound(id);
  if (record.webhookSecret === null && (change.enabled ?? record.webhook?.enabled ?? true)) {
    throw new GatewayError(
      'INVALID_INPUT',
      `The gateway keeps no webhook signing secret for API key ${id} (it was made or rotated where the key could not be sealed), so its webhook could never be signed: rotate the key (POST /admin/api-keys/${id}/rotate) to seal a new one, then set the webhook`,
      { data: 'webhook' },
    );
  }
  const current: ApiKeyWebhook | null = record.webhook;
  if (current === null) {
    if (change.url === undefined) {
      throw new GatewayError(
        'INVALID_INPUT',
        'webhook.url is required: this key has no webhook yet, so the change would create one',
        { data: 'webhook.url' },
      );
    }
    return { url: change.url, headers: change.headers, enabled: change.enabled };
  }
  return {
    url: change.url ?? current.url,
    headers: change.headers ?? current.headers,
    enabled: change.enabled ?? current.enabled,
  };
}
