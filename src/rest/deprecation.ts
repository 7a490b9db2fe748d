import type { FastifyInstance } from 'fastify';
import { requestsV2Deprecation } from '../core/requests/getRequestsV2.js';
import type { DeprecationNotice } from '../core/requests/types.js';
import type { OperationRouteConfig } from './rateLimit.js';

/** Deprecated operations, by operation id. */
const deprecatedOperations: Readonly<Record<string, DeprecationNotice>> = { getRequestsV2: requestsV2Deprecation };

/**
 * The deprecation headers of an operation: `Deprecation` (RFC 9745, `@` + Unix seconds), `Sunset` (RFC 8594,
 * an HTTP date) and `Link` to the documentation and the successor.
 */
function deprecationHeaders(notice: DeprecationNotice): Record<string, string> {
  return {
    deprecation: `@${Math.floor(notice.deprecatedAt / 1000)}`,
    sunset: new Date(notice.sunsetAt).toUTCString(),
    link: [
      `<${notice.documentation}>; rel="deprecation"; type="text/html"`,
      `<${notice.documentation}>; rel="sunset"; type="text/html"`,
      `<${notice.successor}>; rel="successor-version"`,
    ].join(', '),
  };
}

/**
 * Every answer of a deprecated operation, errors included, carries its deprecation headers; its 429 (refused
 * by the rate limit before the operation runs) also names the successor and the migration guide in the body,
 * as the reference's does.
 */
export function registerDeprecations(app: FastifyInstance): void {
  app.addHook('onSend', async (request, reply, payload) => {
    const operationId = (request.routeOptions.config as OperationRouteConfig | undefined)?.operationId;
    const notice = operationId === undefined ? undefined : deprecatedOperations[operationId];
    if (notice === undefined) return payload;
    reply.headers(deprecationHeaders(notice));
    if (reply.statusCode !== 429 || typeof payload !== 'string') return payload;
    const body = JSON.parse(payload) as Record<string, unknown>;
    return JSON.stringify({ ...body, successor: notice.successor, migrationGuide: notice.migrationGuide });
  });
}
