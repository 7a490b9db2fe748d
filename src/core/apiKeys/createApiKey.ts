import { insertApiKey } from '../../store/apiKeys.repository.js';
import { GatewayError } from '../errors.js';
import type { ApiKeyLimits, ApiKeysContext, ApiKeyWithSecret, SealWebhookSecret } from './apiKey.js';
import { generateApiKey, newApiKeyId, toApiKey } from './apiKey.js';
import { checkLimits, checkName, normalizePayoutAddress, parseSponsorshipAllowance } from './checkSettings.js';
import { validateWebhook, type ValidateWebhookParameters } from './validateWebhook.js';

export interface CreateApiKeyParameters {
  name: string;
  sponsorshipEnabled?: boolean | undefined;
  limits?: ApiKeyLimits | undefined;
  webhook?: ValidateWebhookParameters | null | undefined;
  businessVerified?: boolean | undefined;
  payoutAddress?: string | null | undefined;
  /** Fee sponsorship allowed to the key, micro-USD as a decimal integer string (see `ApiKey`). */
  sponsorshipAllowanceUsdMicros?: string | undefined;
}

export interface CreateApiKeyOptions {
  /** Accept webhook URLs on private addresses (`GATEWAY_WEBHOOKS_ALLOW_PRIVATE`). */
  allowPrivateWebhooks: boolean;
  sealWebhookSecret?: SealWebhookSecret | undefined;
}

/**
 * Issues a new API key (`POST /admin/api-keys`, `npm run keys -- create`). The key is random, only its hash is
 * stored, and this answer is the only place it appears. Throws `INVALID_INPUT` for a bad webhook or limits, and
 * for an enabled webhook when the key cannot be sealed as its signing secret here (no `sealWebhookSecret`): its
 * deliveries could never be signed, so none would ever be made.
 */
export async function createApiKey(
  ctx: ApiKeysContext,
  params: CreateApiKeyParameters,
  options: CreateApiKeyOptions,
): Promise<ApiKeyWithSecret> {
  const webhook =
    params.webhook == null ? null : validateWebhook(params.webhook, { allowPrivate: options.allowPrivateWebhooks });
  if (webhook?.enabled === true && options.sealWebhookSecret === undefined) {
    throw new GatewayError(
      'INVALID_INPUT',
      "The key's webhook could never be signed: its signing secret cannot be sealed without the gateway's webhook encryption key",
      { data: 'webhook' },
    );
  }
  const { key, keyHash } = generateApiKey();
  const id = newApiKeyId();
  const record = await insertApiKey(ctx.db, {
    id,
    webhookSecret: options.sealWebhookSecret?.(id, key) ?? null,
    name: checkName(params.name),
    keyHash,
    sponsorshipEnabled: params.sponsorshipEnabled ?? false,
    limits: checkLimits(params.limits ?? {}),
    webhook,
    businessVerified: params.businessVerified ?? false,
    payoutAddress: normalizePayoutAddress(params.payoutAddress),
    ...(params.sponsorshipAllowanceUsdMicros === undefined
      ? {}
      : { sponsorshipAllowanceUsdMicros: parseSponsorshipAllowance(params.sponsorshipAllowanceUsdMicros) }),
    now: ctx.now(),
  });
  return { apiKey: toApiKey(ctx, record), key };
}
