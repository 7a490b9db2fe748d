import { getApiKey as selectApiKey, replaceApiKeyHash } from '../../store/apiKeys.repository.js';
import { GatewayError } from '../errors.js';
import {
  generateApiKey,
  toApiKey,
  type ApiKeysContext,
  type ApiKeyWithSecret,
  type SealWebhookSecret,
} from './apiKey.js';
import { apiKeyNotFound } from './getApiKey.js';

/**
 * Gives a key a new secret (`POST /admin/api-keys/{id}/rotate`, `npm run keys -- rotate`): the id, settings,
 * limits and history stay; the old secret stops working at once (there is no overlap period, so roll out the
 * new secret before rotating again). The new secret is shown only in this answer. Webhooks are signed with the
 * new key from now on (sealed with `sealWebhookSecret`; without it the old secret is dropped). Throws
 * `NOT_FOUND`, or `CONFLICT` for a revoked key.
 */
export async function rotateApiKey(
  ctx: ApiKeysContext,
  id: string,
  options: { sealWebhookSecret?: SealWebhookSecret | undefined } = {},
): Promise<ApiKeyWithSecret> {
  const { key, keyHash } = generateApiKey();
  const record = await replaceApiKeyHash(ctx.db, id, {
    keyHash,
    webhookSecret: options.sealWebhookSecret?.(id, key) ?? null,
  });
  if (record !== undefined) return { apiKey: toApiKey(ctx, record), key };
  if ((await selectApiKey(ctx.db, id)) === undefined) throw apiKeyNotFound(id);
  throw new GatewayError('CONFLICT', `API key ${id} is revoked and cannot be rotated`);
}
