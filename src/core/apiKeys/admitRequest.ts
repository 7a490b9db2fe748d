import { getApiKeyByHash } from '../../store/apiKeys.repository.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { ApiKeyLimits } from './apiKey.js';
import type { Caller } from '../vocabulary/caller.js';
import { anonymousCaller, callerOf, hashApiKey, invalidApiKey, isLiveKey } from './authenticate.js';
import { clientBucket } from './clientBucket.js';
import type { RateLimiter } from './rateLimiter.js';

/** A request refused by its rate limit: `429 RATE_LIMITED`, with the seconds to wait for `Retry-After`. */
export class RateLimitedError extends GatewayError {
  constructor(
    readonly retryAfterSeconds: number,
    limit: number,
    windowSeconds: number,
  ) {
    super(
      'RATE_LIMITED',
      `Rate limit exceeded: ${limit} requests per ${windowSeconds} s; retry after ${retryAfterSeconds} s`,
    );
  }
}

export interface AdmitRequestParameters {
  /** The `x-api-key` header, if any. */
  apiKey: string | undefined;
  /** The client address (`request.ip`): the bucket of requests without a key. */
  address: string;
  /**
   * What the key means: `authenticate` (REST operations) refuses an unknown or revoked key with 401;
   * `lenient` (GraphQL, whose resolvers check keys themselves) counts a valid key against its limit and
   * anything else against the address; `ignore` (admin operations) always counts the address.
   */
  keyMode: 'authenticate' | 'lenient' | 'ignore';
}

/**
 * Lets a request in or refuses it, before any operation runs: a key must be known and live (`UNAUTHORIZED`),
 * then the request counts against the key's limit (`limits.requestsPerMinute`, else the keyed default) or, without
 * a key, against its address's (the anonymous default; an IPv6 address by its /64). A key this process has not
 * yet seen valid is first counted against its address's key-probe bucket (the anonymous limit), before it is
 * looked up: a flood of random keys is then refused 429 by the limiter without touching the key table.
 * Resolves with the caller (the key's, or anonymous without a key, with a key `lenient` did not accept, and in
 * `ignore` mode): the one key lookup of the request. Throws `UNAUTHORIZED` or `RateLimitedError`.
 */
export async function admitRequest(
  ctx: Pick<CoreContext, 'db'>,
  limiter: RateLimiter,
  params: AdmitRequestParameters,
): Promise<Caller> {
  const { settings } = limiter;
  const addressBucket = clientBucket(params.address);
  let bucket = addressBucket;
  let perMinute = settings.anonymousPerMinute;
  let caller = anonymousCaller;
  if (params.keyMode !== 'ignore' && params.apiKey !== undefined && params.apiKey !== '') {
    const hash = hashApiKey(params.apiKey);
    const known = limiter.knownKeys.has(hash);
    // Its own bucket per address (not the anonymous one), so a real key is not refused for its address's traffic.
    if (!known && settings.enabled) await consume(limiter, `keyprobe:${addressBucket}`, settings.anonymousPerMinute);
    const record = await getApiKeyByHash(ctx.db, hash);
    if (isLiveKey(record)) {
      limiter.knownKeys.add(hash);
      caller = callerOf(record);
      bucket = `key:${record.id}`;
      const own = (record.limits as ApiKeyLimits).requestsPerMinute;
      perMinute = typeof own === 'number' && Number.isSafeInteger(own) && own > 0 ? own : settings.keyPerMinute;
    } else {
      limiter.knownKeys.delete(hash);
      if (params.keyMode === 'authenticate') throw invalidApiKey();
    }
  }
  if (settings.enabled) await consume(limiter, bucket, perMinute);
  return caller;
}

async function consume(limiter: RateLimiter, bucket: string, perMinute: number): Promise<void> {
  const decision = await limiter.consume(bucket, perMinute);
  if (!decision.allowed)
    throw new RateLimitedError(decision.retryAfterSeconds, decision.limit, limiter.settings.windowSeconds);
}
