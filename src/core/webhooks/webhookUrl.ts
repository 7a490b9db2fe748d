import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { isPrivateAddress, validateWebhook } from '../apiKeys/validateWebhook.js';

/**
 * Check a webhook URL before a delivery connects, with the rules of configuration time (`validateWebhook`:
 * http(s), no credentials, no literal private address or local name unless `allowPrivate`); the settings
 * may have changed since the URL was stored. Names are checked once resolved (`guardedLookup`).
 * Throws `INVALID_INPUT`.
 */
export function checkWebhookUrl(value: string, options: { allowPrivate: boolean }): URL {
  return new URL(validateWebhook({ url: value }, options).url);
}

/**
 * A `lookup` for `http.request` that refuses private addresses: the check applies to the address the socket
 * really connects to, so a name that resolves (or re-resolves, DNS rebinding) to an internal address is refused.
 */
export const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
    if (error) return callback(error, '', 0);
    const allowed = addresses.filter((a) => !isPrivateAddress(a.address));
    if (allowed.length === 0) {
      const refused = Object.assign(new Error(`${hostname} resolves to a private or loopback address`), {
        code: 'WEBHOOK_PRIVATE_ADDRESS',
      });
      return callback(refused, '', 0);
    }
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, allowed);
    callback(null, allowed[0]!.address, allowed[0]!.family);
  });
};
