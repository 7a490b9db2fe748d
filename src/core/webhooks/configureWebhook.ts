import { getApiKey, hasWebhookSecret, setApiKeyWebhook } from '../../store/apiKeys.repository.js';
import type { ApiKeyRecord } from '../../records/apiKey.js';
import { hashApiKey } from '../apiKeys/authenticate.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { sealWebhookSecret } from '../apiKeys/webhookSecret.js';
import { validateWebhook, type ValidateWebhookParameters } from '../apiKeys/validateWebhook.js';

export interface ConfigureWebhookParameters {
  apiKeyId: string;
  /** The webhook (one per key; `headers` default `{}`, `enabled` true); null removes it. */
  webhook: ValidateWebhookParameters | null;
  /**
   * The API key itself, when the gateway does not keep its signing secret yet (keys created without one):
   * it must hash to the key's stored hash, and is then kept sealed to sign deliveries.
   */
  apiKey?: string;
}
export type ConfigureWebhookReturnType = ApiKeyRecord;

/**
 * Set or remove the webhook of an API key (for the admin surface), with the checks of `validateWebhook` (no
 * private or loopback URL unless the server allows them, no reserved or malformed header). Enabling a webhook
 * of a key whose signing secret the gateway does not hold needs `apiKey`.
 *
 * @throws `INVALID_INPUT` for a refused URL, header or key; `NOT_FOUND` for an unknown key;
 *   `SERVICE_UNAVAILABLE` when the gateway runs without webhook delivery.
 */
export async function configureWebhook(
  ctx: CoreContext,
  params: ConfigureWebhookParameters,
): Promise<ConfigureWebhookReturnType> {
  const webhooks = ctx.webhooks;
  if (webhooks === undefined)
    throw new GatewayError('SERVICE_UNAVAILABLE', 'Webhook delivery is not configured on this gateway');
  const record = await getApiKey(ctx.db, params.apiKeyId);
  if (record === undefined) throw new GatewayError('NOT_FOUND', `No API key ${params.apiKeyId}`);
  const webhook =
    params.webhook === null ? null : validateWebhook(params.webhook, { allowPrivate: webhooks.settings.allowPrivate });
  let webhookSecret: string | undefined;
  if (params.apiKey !== undefined) {
    if (hashApiKey(params.apiKey) !== record.keyHash)
      throw new GatewayError('INVALID_INPUT', 'apiKey is not the key of this API key id');
    webhookSecret = sealWebhookSecret(webhooks.settings.encryptionKey, record.id, params.apiKey);
  } else if (webhook?.enabled === true && !(await hasWebhookSecret(ctx.db, record.id))) {
    throw new GatewayError(
      'INVALID_INPUT',
      'The gateway does not hold the signing secret of this key: pass apiKey once to enable its webhook',
    );
  }
  const updated = await setApiKeyWebhook(ctx.db, record.id, {
    webhook,
    ...(webhookSecret === undefined ? {} : { webhookSecret }),
  });
  if (updated === undefined) throw new GatewayError('NOT_FOUND', `No API key ${params.apiKeyId}`);
  return updated;
}
