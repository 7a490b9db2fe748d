import type { FastifyInstance } from 'fastify';
import { admitRequest, RateLimitedError } from '../core/apiKeys/admitRequest.js';
import { anonymousCaller } from '../core/apiKeys/authenticate.js';
import type { RateLimiter } from '../core/apiKeys/rateLimiter.js';
import type { CoreContext } from '../core/context.js';
import type { Caller } from '../core/vocabulary/caller.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling, resolved once when the request is admitted (anonymous on routes that are not admitted). */
    caller: Caller;
  }
}

/** Route config set by `registerRest` on every operation of the contract. */
export interface OperationRouteConfig {
  operationId?: string;
  /** `exempt`: never counted (health, readiness); `address`: counted per client address, key ignored (admin). */
  rateLimit?: 'exempt' | 'address';
}

/**
 * Admits every request before it reaches an operation (`admitRequest`) and sets `request.caller` from the same
 * key lookup, which the REST handlers receive as `context.caller`: REST operations refuse an unknown
 * `x-api-key` with 401 and count against the key or the client address; `/graphql` and `/ws` count a valid key or
 * else the address (they check keys themselves); admin operations count the address; health, readiness, the documentation and unknown routes are not counted.
 * A refused request gets the error body, and a 429 also `Retry-After`.
 */
export function registerRateLimit(app: FastifyInstance, core: Pick<CoreContext, 'db'>, limiter: RateLimiter): void {
  app.decorateRequest<Caller | null>('caller', null);
  app.addHook('onRequest', async (request, reply) => {
    request.caller = anonymousCaller;
    const config = request.routeOptions.config as OperationRouteConfig;
    let keyMode: 'authenticate' | 'lenient' | 'ignore';
    if (config.operationId !== undefined) {
      if (config.rateLimit === 'exempt') return;
      keyMode = config.rateLimit === 'address' ? 'ignore' : 'authenticate';
    } else if (request.routeOptions.url === '/graphql' || request.routeOptions.url === '/ws') {
      keyMode = 'lenient';
    } else {
      return;
    }
    const header = request.headers['x-api-key'];
    try {
      request.caller = await admitRequest(core, limiter, {
        apiKey: Array.isArray(header) ? header[0] : header,
        address: request.ip,
        keyMode,
      });
    } catch (error) {
      if (error instanceof RateLimitedError) reply.header('retry-after', String(error.retryAfterSeconds));
      throw error;
    }
  });
}
