import { createHash, timingSafeEqual } from 'node:crypto';
import { GatewayError } from '../errors.js';

const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * Guards the admin operations: the `Authorization: Bearer <token>` header must carry the configured admin
 * token. Compared in constant time (over SHA-256 digests, so the length leaks nothing either). Throws
 * `NOT_FOUND` when no token is configured (the admin interface is off), `UNAUTHORIZED` without a bearer token,
 * `FORBIDDEN` for a wrong one.
 */
export function authorizeAdmin(configuredToken: string | undefined, authorization: string | undefined): void {
  if (configuredToken === undefined || configuredToken === '') {
    throw new GatewayError('NOT_FOUND', 'The admin interface is disabled: set GATEWAY_ADMIN_TOKEN to enable it');
  }
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization ?? '');
  if (match === null)
    throw new GatewayError('UNAUTHORIZED', 'Admin operations need an Authorization: Bearer <admin token> header');
  if (!timingSafeEqual(digest(match[1]!), digest(configuredToken))) {
    throw new GatewayError('FORBIDDEN', 'The admin token is not valid');
  }
}
