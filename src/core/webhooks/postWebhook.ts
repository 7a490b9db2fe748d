import http from 'node:http';
import https from 'node:https';
import { guardedLookup } from './webhookUrl.js';

export interface PostWebhookParameters {
  url: URL;
  body: string;
  headers: Record<string, string>;
  timeoutMs: number;
  /** Connect to private addresses too (devnet, tests); otherwise the resolved address is checked. */
  allowPrivate: boolean;
}

export interface PostWebhookResult {
  /** HTTP status; null when no answer came (timeout, connection error, refused address). */
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * One POST of a webhook, with a whole-exchange timeout. Never throws: every outcome is a result the delivery
 * log can keep. The answer's body is read and discarded (up to the timeout), so the connection is released.
 */
export function postWebhook(params: PostWebhookParameters): Promise<PostWebhookResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise((resolve) => {
    let settled = false;
    const finish = (statusCode: number | null, error: string | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ statusCode, error, durationMs: elapsed() });
    };
    const transport = params.url.protocol === 'https:' ? https : http;
    const request = transport.request(
      params.url,
      {
        method: 'POST',
        headers: {
          ...params.headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(params.body),
        },
        ...(params.allowPrivate ? {} : { lookup: guardedLookup }),
        agent: false,
      },
      (response) => {
        response.resume();
        response.on('end', () => finish(response.statusCode ?? null, null));
        response.on('error', (error) => finish(response.statusCode ?? null, error.message));
      },
    );
    const timer = setTimeout(() => {
      finish(null, `timed out after ${params.timeoutMs} ms`);
      request.destroy();
    }, params.timeoutMs);
    request.on('error', (error) => finish(null, error.message));
    request.end(params.body);
  });
}
