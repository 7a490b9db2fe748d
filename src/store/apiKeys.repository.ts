import { sql, type Kysely, type Selectable } from 'kysely';
import { toBigInt, toJson, toNumber, toNumberOrNull } from './mappers.js';
import type { ApiKeysTable, Tables } from './tables.js';
import type { JsonObject } from '../records/json.js';
import type { ApiKeyRecord, ApiKeyWebhook } from '../records/apiKey.js';

export interface InsertApiKeyParameters {
  id: string;
  name: string;
  keyHash: string;
  sponsorshipEnabled?: boolean;
  limits?: JsonObject;
  webhook?: ApiKeyWebhook | null;
  businessVerified?: boolean;
  payoutAddress?: string | null;
  /**
   * The key sealed for signing its webhooks (`sealWebhookSecret` in src/core/webhooks). Store it at creation,
   * the only moment the key is known, so that a webhook can be configured later.
   */
  webhookSecret?: string | null;
  /** Default 0: nothing is sponsored until the administrator sets an allowance. */
  sponsorshipAllowanceUsdMicros?: bigint;
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
      webhook_secret: params.webhookSecret ?? null,
      sponsorship_allowance_usd_micros: (params.sponsorshipAllowanceUsdMicros ?? 0n).toString(),
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

export interface SetApiKeyWebhookParameters {
  webhook: ApiKeyWebhook | null;
  /** The sealed signing secret; omitted: unchanged. */
  webhookSecret?: string;
}

/**
 * Set (or with null, remove) the webhook of a key, and its signing secret when given. Returns the key, or
 * undefined when there is none. Checks nothing: `configureWebhook` (src/core/webhooks) validates first.
 */
export async function setApiKeyWebhook(
  db: Kysely<Tables>,
  id: string,
  params: SetApiKeyWebhookParameters,
): Promise<ApiKeyRecord | undefined> {
  const row = await db
    .updateTable('api_keys')
    .set({
      webhook: params.webhook === null ? null : toJson(params.webhook),
      ...(params.webhookSecret === undefined ? {} : { webhook_secret: params.webhookSecret }),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? undefined : toApiKeyRecord(row);
}

/** Whether a key keeps a sealed signing secret (without reading it). */
export async function hasWebhookSecret(db: Kysely<Tables>, id: string): Promise<boolean> {
  const row = await db.selectFrom('api_keys').select('webhook_secret').where('id', '=', id).executeTakeFirst();
  return row !== undefined && row.webhook_secret !== null;
}

/** Every key, oldest first; revoked ones only when asked. */
export async function listApiKeys(
  db: Kysely<Tables>,
  options: { includeRevoked?: boolean } = {},
): Promise<ApiKeyRecord[]> {
  let query = db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id');
  if (options.includeRevoked !== true) query = query.where('revoked_at', 'is', null);
  return (await query.execute()).map(toApiKeyRecord);
}

/** The fields of a key an administrator may change; absent fields are left as they are. */
export interface UpdateApiKeyParameters {
  name?: string;
  sponsorshipEnabled?: boolean;
  limits?: JsonObject;
  webhook?: ApiKeyWebhook | null;
  businessVerified?: boolean;
  payoutAddress?: string | null;
  sponsorshipAllowanceUsdMicros?: bigint;
}

/** Change a key's settings (revoked keys too). Undefined when there is no such key. */
export async function updateApiKey(
  db: Kysely<Tables>,
  id: string,
  params: UpdateApiKeyParameters,
): Promise<ApiKeyRecord | undefined> {
  const values = {
    ...(params.name === undefined ? {} : { name: params.name }),
    ...(params.sponsorshipEnabled === undefined ? {} : { sponsorship_enabled: params.sponsorshipEnabled }),
    ...(params.limits === undefined ? {} : { limits: toJson(params.limits) }),
    ...(params.webhook === undefined ? {} : { webhook: params.webhook === null ? null : toJson(params.webhook) }),
    ...(params.businessVerified === undefined ? {} : { business_verified: params.businessVerified }),
    ...(params.payoutAddress === undefined ? {} : { payout_address: params.payoutAddress }),
    ...(params.sponsorshipAllowanceUsdMicros === undefined
      ? {}
      : { sponsorship_allowance_usd_micros: params.sponsorshipAllowanceUsdMicros.toString() }),
  };
  if (Object.keys(values).length === 0) return getApiKey(db, id);
  const row = await db.updateTable('api_keys').set(values).where('id', '=', id).returningAll().executeTakeFirst();
  return row === undefined ? undefined : toApiKeyRecord(row);
}

/**
 * Replace the hash of a live key (rotation), and the sealed webhook signing secret with it (the secret is the
 * key): the old key stops working in the same statement. Undefined when
 * there is no such key or it is revoked.
 */
export async function replaceApiKeyHash(
  db: Kysely<Tables>,
  id: string,
  params: {
    keyHash: string;
    /** The new key sealed as webhook signing secret; null forgets the old one. */ webhookSecret: string | null;
  },
): Promise<ApiKeyRecord | undefined> {
  const row = await db
    .updateTable('api_keys')
    .set({ key_hash: params.keyHash, webhook_secret: params.webhookSecret })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? undefined : toApiKeyRecord(row);
}

function toApiKeyRecord(row: Selectable<ApiKeysTable>): ApiKeyRecord {
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
    webhookSecret: row.webhook_secret,
    sponsorshipAllowanceUsdMicros: toBigInt(row.sponsorship_allowance_usd_micros),
    sponsorshipSpentUsdMicros: toBigInt(row.sponsorship_spent_usd_micros),
    sponsorshipReservedUsdMicros: toBigInt(row.sponsorship_reserved_usd_micros),
  };
}

/**
 * Draws `usdMicros` of fee sponsorship from a live key with sponsorship enabled, in one statement that checks
 * and adds (`spent + reserved + usdMicros <= allowance`: what sponsored quotes hold is not available): concurrent
 * draws are serialized by the row lock and cannot overdraw. Returns the key's remaining allowance after the draw, or
 * null when the key cannot pay it (missing, revoked, sponsorship off, or the allowance would be exceeded); then
 * nothing changed.
 */
export async function drawSponsorship(db: Kysely<Tables>, id: string, usdMicros: bigint): Promise<bigint | null> {
  // A negative draw would give allowance back: never a client's to ask for, whatever its input.
  if (usdMicros < 0n) throw new RangeError(`A sponsorship draw cannot be negative (${usdMicros})`);
  const amount = usdMicros.toString();
  const row = await db
    .updateTable('api_keys')
    .set({ sponsorship_spent_usd_micros: sql<string>`sponsorship_spent_usd_micros + ${amount}::numeric` })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where('sponsorship_enabled', '=', true)
    .where(
      sql<boolean>`sponsorship_spent_usd_micros + sponsorship_reserved_usd_micros + ${amount}::numeric <= sponsorship_allowance_usd_micros`,
    )
    .returning(['sponsorship_allowance_usd_micros', 'sponsorship_spent_usd_micros', 'sponsorship_reserved_usd_micros'])
    .executeTakeFirst();
  if (row === undefined) return null;
  return (
    toBigInt(row.sponsorship_allowance_usd_micros) -
    toBigInt(row.sponsorship_spent_usd_micros) -
    toBigInt(row.sponsorship_reserved_usd_micros)
  );
}

/** Gives back a draw whose batch never reached the chain (never below 0). */
export async function returnSponsorship(db: Kysely<Tables>, id: string, usdMicros: bigint): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({
      sponsorship_spent_usd_micros: sql<string>`greatest(sponsorship_spent_usd_micros - ${usdMicros.toString()}::numeric, 0)`,
    })
    .where('id', '=', id)
    .execute();
}
