import { listApiKeys } from '../apiKeys/listApiKeys.js';
import type { ApiKeysContext } from '../apiKeys/apiKey.js';
import type { Logger } from '../logger.js';

/**
 * At start: a warning for each live key whose webhook is enabled but whose deliveries cannot be signed (no
 * sealed secret, or one sealed under another encryption key). Such a webhook looks enabled in the key's
 * settings, yet its receiver gets nothing; the listing shows it too (`webhookSigning`). Returns their ids.
 */
export async function warnUnsignableWebhooks(ctx: ApiKeysContext, log: Logger): Promise<string[]> {
  const unsignable = (await listApiKeys(ctx)).filter(
    (key) => key.webhook?.enabled === true && key.webhookSigning !== 'ready',
  );
  for (const key of unsignable) {
    log.warn(
      { apiKeyId: key.id, webhookSigning: key.webhookSigning },
      key.webhookSigning === 'noSecret'
        ? `webhook of API key ${key.id} is enabled but can never be signed: the gateway keeps no signing secret for it, so no delivery is made; rotate the key (POST /admin/api-keys/${key.id}/rotate) to seal one`
        : `webhook of API key ${key.id} is enabled but its signing secret does not open with this gateway's webhook encryption key (GATEWAY_WEBHOOK_SECRET_KEY or the solver key changed?): its deliveries are dropped; restore the key, or rotate the API key`,
    );
  }
  return unsignable.map((key) => key.id);
}
