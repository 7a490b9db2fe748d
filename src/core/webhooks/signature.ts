import { createHmac, timingSafeEqual } from 'node:crypto';

/** Headers that carry a webhook's signature (the reference's names). */
export const signatureTimestampHeader = 'X-Signature-Timestamp';
export const signatureHeader = 'X-Signature-SHA256';

/** Headers a webhook's custom headers cannot set: the gateway sets them (signature, framing). */
export const reservedHeader = (name: string): boolean =>
  /^(x-signature-timestamp|x-signature-sha256|content-type|content-length|host|transfer-encoding|connection)$/i.test(
    name,
  );

/**
 * The signature of a webhook: hex HMAC-SHA256 of `<timestamp>.<body>` keyed with the API key (the reference's
 * formula). `body` is the exact JSON text sent.
 */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex');
}

export interface VerifyWebhookSignatureParameters {
  /** The API key. */
  secret: string;
  /** `X-Signature-Timestamp` as received. */
  timestamp: string;
  /** The raw body as received (not re-serialised JSON). */
  body: string;
  /** `X-Signature-SHA256` as received. */
  signature: string;
}

/** What a receiver does: recompute the signature and compare in constant time. */
export function verifyWebhookSignature(params: VerifyWebhookSignatureParameters): boolean {
  const expected = Buffer.from(signWebhook(params.secret, params.timestamp, params.body), 'hex');
  const given = /^[0-9a-fA-F]{64}$/.test(params.signature) ? Buffer.from(params.signature, 'hex') : Buffer.alloc(0);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
