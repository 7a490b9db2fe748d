import { createHash } from 'node:crypto';
import { parseUnits } from 'viem';
import { getApiKeyByHash } from '../../store/apiKeys.repository.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { Caller } from '../quote/types.js';

/** `limits.fastFillUsd` (a decimal USD string, e.g. "5000") in micro-USD; null when absent or not a positive amount. */
function fastFillLimit(value: unknown): bigint | null {
  if (typeof value !== 'string' || !/^[0-9]+(\.[0-9]{1,6})?$/.test(value)) return null;
  const micros = parseUnits(value, 6);
  return micros > 0n ? micros : null;
}

/** The stored form of an API key: hex SHA-256 of the key (the key itself is never stored). */
export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/**
 * Who is calling: no key gives an anonymous caller; a key must be known and not revoked, or the call fails
 * `UNAUTHORIZED` (401) rather than silently running without the key's privileges.
 */
export async function authenticate(ctx: CoreContext, key: string | undefined): Promise<Caller> {
  if (key === undefined || key === '') return { apiKey: null };
  const record = await getApiKeyByHash(ctx.db, hashApiKey(key));
  if (record === undefined || record.revokedAt !== null) {
    throw new GatewayError('UNAUTHORIZED', 'Unauthorized: the x-api-key header does not name a valid API key');
  }
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
