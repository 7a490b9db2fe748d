import { createHash } from 'node:crypto';
import { parseUnits } from 'viem';
import { getApiKeyByHash } from '../../store/apiKeys.repository.js';
import type { ApiKeyRecord } from '../../records/apiKey.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { Caller } from '../vocabulary/caller.js';

/** `limits.fastFillUsd` (a decimal USD string, e.g. "5000") in micro-USD; null when absent or not a positive amount. */
function fastFillLimit(value: unknown): bigint | null {
  if (typeof value !== 'string' || !/^[0-9]+(\.[0-9]{1,6})?$/.test(value)) return null;
  const micros = parseUnits(value, 6);
  return micros > 0n ? micros : null;
}

/** The stored form of an API key: hex SHA-256 of the key (the key itself is never stored). */
export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** A caller without a key. */
export const anonymousCaller: Caller = Object.freeze({ apiKey: null });

/** The one refusal of a key that is unknown or revoked, wherever it was presented. */
export const invalidApiKey = (): GatewayError =>
  new GatewayError('UNAUTHORIZED', 'Unauthorized: the x-api-key header does not name a valid API key');

/** The key is usable: known and not revoked. */
export const isLiveKey = (record: ApiKeyRecord | undefined): record is ApiKeyRecord =>
  record !== undefined && record.revokedAt === null;

/**
 * Who is calling: no key gives an anonymous caller; a key must be known and not revoked, or the call fails
 * `UNAUTHORIZED` (401) rather than silently running without the key's privileges. REST resolves its caller once
 * per request when admitting it (`admitRequest`); GraphQL and `/ws` call this once per operation or connection.
 */
export async function authenticate(ctx: Pick<CoreContext, 'db'>, key: string | undefined): Promise<Caller> {
  if (key === undefined || key === '') return anonymousCaller;
  const record = await getApiKeyByHash(ctx.db, hashApiKey(key));
  if (!isLiveKey(record)) throw invalidApiKey();
  return callerOf(record);
}

/** The caller a live key makes: its id and the privileges its record grants. */
export function callerOf(record: ApiKeyRecord): Caller {
  return {
    apiKey: {
      id: record.id,
      sponsorshipEnabled: record.sponsorshipEnabled,
      revenueShareEligible: record.businessVerified && record.payoutAddress !== null,
      fastFillLimitUsdMicros: fastFillLimit(record.limits.fastFillUsd),
      payoutAddress: record.payoutAddress,
    },
  };
}
