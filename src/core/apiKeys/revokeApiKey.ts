import { revokeApiKey as revokeApiKeyRow } from '../../store/apiKeys.repository.js';
import { toApiKey, type ApiKey, type ApiKeysContext } from './apiKey.js';
import { apiKeyNotFound } from './getApiKey.js';

/**
 * Revokes a key for good (`POST /admin/api-keys/{id}/revoke`, `npm run keys -- revoke`): from the next request
 * on it is answered 401. The record stays (requests quoted with it keep their owner); revoking twice keeps the
 * first time. Throws `NOT_FOUND`.
 */
export async function revokeApiKey(ctx: ApiKeysContext, id: string): Promise<ApiKey> {
  const record = await revokeApiKeyRow(ctx.db, id, ctx.now());
  if (record === undefined) throw apiKeyNotFound(id);
  return toApiKey(ctx, record);
}
