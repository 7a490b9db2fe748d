import { getApiKey, getApiKeyByHash } from '../../store/apiKeys.repository.js';
import { hashApiKey } from '../apiKeys/authenticate.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { Caller } from '../vocabulary/caller.js';

/**
 * Which requests a history call may filter by key and referrer, and whose owner-only data it may see.
 *
 * The referrer of a request is owner-only data (`data.referrer` of `/requests/v3`), so filtering by it is too:
 * otherwise anyone could learn which requests an integrator sent by listing its referrer label.
 */
export interface KeyScope {
  /** Restrict the listing to requests quoted with these keys (ids); undefined: no restriction. */
  apiKeyIds: string[] | undefined;
  /** Requests quoted with these keys show their owner-only data (referrer, API key name, platform fee). */
  owners: ReadonlyMap<string, { name: string }>;
}

export interface ScopeParameters {
  /** The `apiKey` list of the call: API keys (as sent in `x-api-key`) or key ids. */
  apiKeys?: readonly string[] | undefined;
  referrer?: string | undefined;
  /**
   * `apiKeys` (REST `/requests/v3`): `referrer` must be paired with `apiKey` (400 otherwise), as in the
   * reference. `caller` (GraphQL `requests`): `referrer` matches only the calling key's requests.
   */
  referrerScope: 'apiKeys' | 'caller';
}

/**
 * The scope of an authenticated history call (`/requests/v3`, GraphQL). Every key named in `apiKeys` must be
 * the caller's own: a key is one integrator, and the gateway has no accounts that own several keys.
 *
 * @throws `UNAUTHORIZED` (401) when `apiKeys` or a GraphQL `referrer` is given without an `x-api-key`;
 *   `FORBIDDEN` (403) when a listed key is not the caller's; `INVALID_INPUT` (400) for a REST `referrer`
 *   without `apiKey`, or an empty `apiKey` list.
 */
export async function scopeForCaller(ctx: CoreContext, caller: Caller, params: ScopeParameters): Promise<KeyScope> {
  const key = caller.apiKey;
  const owners = new Map<string, { name: string }>();
  if (key !== null) {
    const record = await getApiKey(ctx.db, key.id);
    owners.set(key.id, { name: record?.name ?? key.id });
  }

  const listed = params.apiKeys;
  if (listed !== undefined) {
    if (listed.length === 0)
      throw new GatewayError('INVALID_INPUT', 'apiKey must name at least one API key', { data: 'apiKey' });
    if (key === null) {
      throw new GatewayError('UNAUTHORIZED', 'Filtering by apiKey needs the x-api-key header of the key owner', {
        data: 'apiKey',
      });
    }
    for (const entry of listed) {
      if (entry !== key.id && (await keyIdOf(ctx, entry)) !== key.id) {
        throw new GatewayError('FORBIDDEN', "apiKey names an API key that is not the caller's (x-api-key)", {
          data: 'apiKey',
        });
      }
    }
    return { apiKeyIds: [key.id], owners };
  }

  if (params.referrer === undefined) return { apiKeyIds: undefined, owners };
  if (params.referrerScope === 'apiKeys') {
    throw new GatewayError('INVALID_INPUT', 'Filtering by referrer requires apiKey naming your API key(s)', {
      data: 'referrer',
    });
  }
  if (key === null)
    throw new GatewayError(
      'UNAUTHORIZED',
      "Filtering by referrer needs an x-api-key: it matches only your key's requests",
      { data: 'referrer' },
    );
  return { apiKeyIds: [key.id], owners };
}

/**
 * The scope of the earlier history (`/requests/v2`), which declares no 401/403: there the `apiKey` list
 * authenticates itself (presenting a key proves owning it), and `referrer` needs it as on v3.
 *
 * @throws `INVALID_INPUT` (400) for an entry that is not a valid API key, and for `referrer` without `apiKey`.
 */
export async function scopeForApiKeys(
  ctx: CoreContext,
  params: Omit<ScopeParameters, 'referrerScope'>,
): Promise<KeyScope> {
  const listed = params.apiKeys;
  if (listed === undefined) {
    if (params.referrer !== undefined) {
      throw new GatewayError('INVALID_INPUT', 'Filtering by referrer requires apiKey naming your API key(s)', {
        data: 'referrer',
      });
    }
    return { apiKeyIds: undefined, owners: new Map() };
  }
  if (listed.length === 0)
    throw new GatewayError('INVALID_INPUT', 'apiKey must name at least one API key', { data: 'apiKey' });
  const owners = new Map<string, { name: string }>();
  for (const entry of listed) {
    const record = await getApiKeyByHash(ctx.db, hashApiKey(entry));
    if (record === undefined || record.revokedAt !== null) {
      throw new GatewayError('INVALID_INPUT', 'apiKey names an API key that does not exist or was revoked', {
        data: 'apiKey',
      });
    }
    owners.set(record.id, { name: record.name });
  }
  return { apiKeyIds: [...owners.keys()], owners };
}

/** The id of a valid (not revoked) API key given as the key itself, or undefined. */
async function keyIdOf(ctx: CoreContext, key: string): Promise<string | undefined> {
  const record = await getApiKeyByHash(ctx.db, hashApiKey(key));
  return record === undefined || record.revokedAt !== null ? undefined : record.id;
}
