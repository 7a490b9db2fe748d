import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** The spec's formula, written out independently of the gateway: hex HMAC-SHA256 of `<timestamp>.<body>` keyed with the API key. */
export function verifySpecSignature(key: string, timestamp: string, body: string, signature: string): boolean {
  const expected = createHmac('sha256', key).update(`${timestamp}.${body}`).digest();
  const given = Buffer.from(/^[0-9a-f]{64}$/i.test(signature) ? signature : '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export interface ReceivedWebhook {
  headers: http.IncomingHttpHeaders;
  body: string;
  json: any;
  at: number;
  /** Whether the signature verified with the receiver's key. */
  verified: boolean;
  /** What the receiver answered. */
  answered: number;
}

export interface Receiver {
  url: string;
  received: ReceivedWebhook[];
  /** Answers (status) for the next requests, in order; when empty, `fallback`. */
  script: number[];
  fallback: number;
  /** When set, decides the answer of each verified request (instead of `script` / `fallback`). */
  decide?: (json: any) => number;
  /** Delay before answering, ms. */
  delayMs: number;
  /** Resolves once `predicate` holds over `received`; rejects after `timeoutMs`. */
  waitFor(predicate: (received: ReceivedWebhook[]) => boolean, timeoutMs?: number): Promise<void>;
  close: () => Promise<void>;
}

/**
 * A real webhook receiver on a loopback port (a free one unless given): it verifies each request's signature with `key` (the spec's
 * formula, constant-time) and answers 401 when it does not verify, else the scripted status.
 */
export async function startReceiver(key: string, port = 0): Promise<Receiver> {
  const received: ReceivedWebhook[] = [];
  const waiters = new Set<() => void>();
  const receiver: Receiver = {
    url: '',
    received,
    script: [],
    fallback: 200,
    delayMs: 0,
    async waitFor(predicate, timeoutMs = 10_000) {
      if (predicate(received)) return;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver: condition not met in ${timeoutMs} ms; received ${received.length}`));
        }, timeoutMs);
        const check = () => {
          if (!predicate(received)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        waiters.add(check);
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      const timestamp = String(req.headers['x-signature-timestamp'] ?? '');
      const signature = String(req.headers['x-signature-sha256'] ?? '');
      const verified = verifySpecSignature(key, timestamp, body, signature);
      const answered = !verified
        ? 401
        : receiver.decide
          ? receiver.decide(safeJson(body))
          : (receiver.script.shift() ?? receiver.fallback);
      const respond = () => {
        received.push({ headers: req.headers, body, json: safeJson(body), at: Date.now(), verified, answered });
        res.statusCode = answered;
        res.end();
        for (const waiter of [...waiters]) waiter();
      };
      if (receiver.delayMs > 0) setTimeout(respond, receiver.delayMs);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return receiver;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
