import type { ServerOptions } from 'node:http';
import type { FastifyServerOptions } from 'fastify';
import { defaultSurfaceLimits, type GatewayConfig, type TrustProxy } from './config.js';

/**
 * Fastify's HTTP/1 server options that stop a slow client from holding a connection forever: the headers and
 * the whole request must arrive within their deadlines (a slow-loris client dribbling a header byte at a time
 * is answered 408 and closed), and an idle keep-alive connection is closed. Node checks the deadlines on a
 * timer; it runs at a quarter of the headers timeout so a deadline is enforced within about 25% of its length.
 * Websockets are not affected: after the upgrade the socket leaves the HTTP parser (ws clears its timeout).
 */
export function httpServerOptions(
  config: Pick<GatewayConfig, 'surfaces' | 'trustProxy'>,
): Pick<FastifyServerOptions, 'keepAliveTimeout' | 'requestTimeout' | 'trustProxy'> & { http: ServerOptions } {
  const limits = config.surfaces ?? defaultSurfaceLimits;
  const headersTimeout = Math.min(limits.httpHeadersTimeoutMs, limits.httpRequestTimeoutMs);
  return {
    keepAliveTimeout: limits.httpKeepAliveTimeoutMs,
    requestTimeout: limits.httpRequestTimeoutMs,
    http: { headersTimeout, connectionsCheckingInterval: Math.max(25, Math.floor(headersTimeout / 4)) },
    trustProxy: trustProxyOption(config.trustProxy ?? false),
  };
}

/**
 * Fastify's `trustProxy` for the configured proxies. A hop count is a function believing the first `hops`
 * addresses of the chain (the socket's peer, then X-Forwarded-For from the right): Fastify 5 treats a bare number
 * as "trust nothing".
 */
function trustProxyOption(trust: TrustProxy): FastifyServerOptions['trustProxy'] {
  if (trust === false) return false;
  if (typeof trust === 'number') return (_address: string, hop: number) => hop < trust;
  return trust;
}
