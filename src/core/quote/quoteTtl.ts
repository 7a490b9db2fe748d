import type { QuoteSettings } from '../chains/types.js';
import { GatewayError } from '../errors.js';

/**
 * Seconds a new quote's request stays fillable: the client's `ttl` when it gives one, else the configured
 * default. A client-chosen `ttl` is a free option on the solver's inventory for that long, so
 * it is capped by `maxTtlSeconds`; zero, negative, fractional or larger values fail `INVALID_INPUT` on every
 * transport (REST and GraphQL reach this the same way).
 */
export function quoteTtlSeconds(
  settings: Pick<QuoteSettings, 'ttlSeconds' | 'maxTtlSeconds'>,
  ttl: number | undefined,
): number {
  if (ttl === undefined) return settings.ttlSeconds;
  if (!Number.isInteger(ttl) || ttl < 1 || ttl > settings.maxTtlSeconds) {
    throw new GatewayError(
      'INVALID_INPUT',
      `ttl must be a whole number of seconds from 1 to ${settings.maxTtlSeconds}, got ${ttl}`,
      { data: 'ttl' },
    );
  }
  return ttl;
}
