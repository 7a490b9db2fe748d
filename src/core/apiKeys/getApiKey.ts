import { getApiKey as selectApiKey } from '../../store/apiKeys.repository.js';
import { GatewayError } from '../errors.js';
import { toApiKey, type ApiKey, type ApiKeysContext } from './apiKey.js';

/** One API key by id, without its secret (`GET /admin/api-keys/{id}`). Throws `NOT_FOUND`. */
export async function getApiKey(ctx: ApiKeysContext, id: string): Promise<ApiKey> {
  const record = await selectApiKey(ctx.db, id);
  if (record === undefined) throw apiKeyNotFound(id);
  return toApiKey(ctx, record);
}

export const apiKeyNotFound = (id: string): GatewayError => new GatewayError('NOT_FOUND', `No API key with id ${id}`);
