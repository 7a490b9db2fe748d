import { isIP } from 'node:net';
import type { ApiKeyWebhook } from '../../records/apiKey.js';
import { GatewayError } from '../errors.js';

export interface ValidateWebhookParameters {
  url: string;
  headers?: Record<string, string> | undefined;
  enabled?: boolean | undefined;
}

export interface ValidateWebhookOptions {
  /** Accept private, loopback and link-local destinations (`GATEWAY_WEBHOOKS_ALLOW_PRIVATE=true`). */
  allowPrivate: boolean;
}

/** Headers the gateway sets itself on a delivery; a key cannot override them. */
const reservedHeaders = new Set(['host', 'content-length', 'content-type', 'transfer-encoding', 'connection']);

/**
 * Checks a webhook given to an admin operation and returns it with defaults (`headers: {}`, `enabled: true`).
 * The URL must be http(s) without credentials; a private address (IP literal or a local name) is refused
 * unless allowed, so a key's owner cannot make the gateway call into its own network. Host names are not
 * resolved here (they can change): the dispatcher must check the resolved address again at delivery.
 * Throws `INVALID_INPUT`.
 */
export function validateWebhook(params: ValidateWebhookParameters, options: ValidateWebhookOptions): ApiKeyWebhook {
  let url: URL;
  try {
    url = new URL(params.url);
  } catch {
    throw new GatewayError('INVALID_INPUT', `webhook.url is not a valid URL: ${params.url}`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new GatewayError('INVALID_INPUT', 'webhook.url must be an http or https URL');
  }
  if (url.username !== '' || url.password !== '') {
    throw new GatewayError('INVALID_INPUT', 'webhook.url must not carry credentials; use webhook.headers');
  }
  if (!options.allowPrivate && isPrivateHost(url.hostname)) {
    throw new GatewayError(
      'INVALID_INPUT',
      `webhook.url points at a private or loopback address (${url.hostname}); set GATEWAY_WEBHOOKS_ALLOW_PRIVATE=true to allow it`,
    );
  }
  const headers = params.headers ?? {};
  for (const [name, value] of Object.entries(headers)) {
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      throw new GatewayError('INVALID_INPUT', `webhook.headers: '${name}' is not a header name`);
    if (reservedHeaders.has(name.toLowerCase()))
      throw new GatewayError('INVALID_INPUT', `webhook.headers: '${name}' is set by the gateway`);
    if (/[\r\n\0]/.test(value))
      throw new GatewayError('INVALID_INPUT', `webhook.headers: the value of '${name}' contains a line break`);
  }
  return { url: url.toString(), headers: { ...headers }, enabled: params.enabled ?? true };
}

/** A host name that is an IP literal in a non-public range, or a name that only means something locally. */
function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (isIP(host) !== 0) return isPrivateAddress(host);
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    host.endsWith('.local') ||
    host.endsWith('.internal') ||
    !host.includes('.')
  );
}

/**
 * An IPv4 or IPv6 address that is not publicly routable: loopback, private (RFC 1918, ULA), link-local,
 * carrier-grade NAT, unspecified, or an IPv4-mapped form of those. Exported for the webhook dispatcher, which
 * checks the address a name resolves to.
 */
export function isPrivateAddress(address: string): boolean {
  const ip = address.toLowerCase();
  if (isIP(ip) === 4) {
    const [a = 0, b = 0] = ip.split('.').map(Number);
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 100 && b >= 64 && b <= 127) ||
      a >= 224
    );
  }
  if (isIP(ip) === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(ip);
    if (mapped) return isPrivateAddress(mapped[1]!);
    // The WHATWG URL parser writes a mapped IPv4 address in hex: [::ffff:127.0.0.1] -> [::ffff:7f00:1].
    const mappedHex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(ip);
    if (mappedHex) {
      const high = parseInt(mappedHex[1]!, 16);
      const low = parseInt(mappedHex[2]!, 16);
      return isPrivateAddress(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`);
    }
    if (ip === '::' || ip === '::1') return true;
    return /^f[cd]/.test(ip) || /^fe[89ab]/.test(ip) || /^ff/.test(ip);
  }
  return false;
}
