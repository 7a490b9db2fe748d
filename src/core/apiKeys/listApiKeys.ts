import { listApiKeys as selectApiKeys } from '../../store/apiKeys.repository.js';
import { toApiKey, type ApiKey, type ApiKeysContext } from './apiKey.js';

export interface ListApiKeysParameters {
  /** Include revoked keys (default false). */
  includeRevoked?: boolean | undefined;
}

/** Every API key, oldest first, without secrets (`GET /admin/api-keys`, `npm run keys -- list`). */
export async function listApiKeys(ctx: ApiKeysContext, params: ListApiKeysParameters = {}): Promise<ApiKey[]> {
  const records = await selectApiKeys(ctx.db, { includeRevoked: params.includeRevoked ?? false });
  return records.map((record) => toApiKey(ctx, record));
}
