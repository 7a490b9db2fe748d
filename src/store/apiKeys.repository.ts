import type { Kysely, Selectable } from 'kysely';
import { toJson, toNumber, toNumberOrNull } from './mappers.js';
import type { ApiKeysTable, JsonObject, Tables } from './tables.js';

/** The webhook of an API key (one per key, as in the reference). */
export interface ApiKeyWebhook {
  url: string;
  /** Custom headers sent with every delivery. */
  headers: Record<string, string>;
  enabled: boolean;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** Hash of the key (the key itself is never stored); the lookup key for `x-api-key`. */
  keyHash: string;
  sponsorshipEnabled: boolean;
  /** Rate limits and quotas; shape owned by the core. */
  limits: JsonObject;
  webhook: ApiKeyWebhook | null;
  createdAt: number;
  revokedAt: number | null;
  /** Business verification completed (a revenue-share condition). */
  businessVerified: boolean;
  /** EVM address that receives the revenue share, when one is on file. */
  payoutAddress: string | null;
}

export interface InsertApiKeyParameters {
  id: string;
  name: string;
  keyHash: string;
  sponsorshipEnabled?: boolean;
  limits?: JsonObject;
  webhook?: ApiKeyWebhook | null;
  businessVerified?: boolean;
  payoutAddress?: string | null;
  now: number;
}

/** Store a new key. A duplicate `keyHash` fails with a unique violation (`api_keys_key_hash_key`). */
export async function insertApiKey(db: Kysely<Tables>, params: InsertApiKeyParameters): Promise<ApiKeyRecord> {
  const row = await db
    .insertInto('api_keys')
    .values({
      id: params.id,
      name: params.name,
      key_hash: params.keyHash,
      sponsorship_enabled: params.sponsorshipEnabled ?? false,
      limits: toJson(params.limits ?? {}),
      webhook: params.webhook == null ? null : toJson(params.webhook),
      business_verified: params.businessVerified ?? false,
      payout_address: params.payoutAddress ?? null,
      created_at: params.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toApiKeyRecord(row);
}

export async function getApiKey(db: Kysely<Tables>, id: string): Promise<ApiKeyRecord | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toApiKeyRecord(row);
}

/** The key an `x-api-key` header hashes to, revoked or not (the caller decides what a revoked key means). */
export async function getApiKeyByHash(db: Kysely<Tables>, keyHash: string): Promise<ApiKeyRecord | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst();
  return row === undefined ? undefined : toApiKeyRecord(row);
}

/** Revoke a key; revoking twice keeps the first time. Undefined when there is no such key. */
export async function revokeApiKey(db: Kysely<Tables>, id: string, now: number): Promise<ApiKeyRecord | undefined> {
  const row = await db
    .updateTable('api_keys')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(now)) }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? undefined : toApiKeyRecord(row);
}

export function toApiKeyRecord(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    keyHash: row.key_hash,
    sponsorshipEnabled: row.sponsorship_enabled,
    limits: row.limits as JsonObject,
    // Written only by insertApiKey, from an ApiKeyWebhook.
    webhook: row.webhook as unknown as ApiKeyWebhook | null,
    createdAt: toNumber(row.created_at),
    revokedAt: toNumberOrNull(row.revoked_at),
    businessVerified: row.business_verified,
    payoutAddress: row.payout_address,
  };
}
