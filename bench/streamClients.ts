/**
 * The observers of `npm run bench:stream`: a graphql-ws subscriber (`requestStatus` on `/graphql`), a subscriber
 * of the reference's `/ws` stream, and a webhook receiver. Each notes every status it is told about with the
 * server's `updatedAt` and this process's wall clock (`Date.now()`, the gateway's own clock on this machine)
 * at the moment the frame or the POST is handled. They only record: `streamReport.ts` judges.
 *
 * Kept minimal on purpose (one subscription per connection, no reconnects); `test/events/clients.ts` and
 * `test/webhooks/receiver.ts` are the test suite's fuller versions.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { rawDataText } from '../src/ws/rawData.js';

export type Protocol = 'graphql-ws' | '/ws';

/** One status as an observer received it. */
export interface Receipt {
  /** Lower case, as on REST (`pending`), whatever the transport's spelling. */
  status: string;
  /** The record's `updatedAt` in the message (Unix ms, the gateway's clock). */
  updatedAt: number;
  /** `Date.now()` in this process when the message was handled. */
  receivedAt: number;
  /** `/ws` only: the event's `publishedAt`, the gateway's `Date.now()` when it sent the frame. */
  publishedAt?: number;
}

/** One subscriber: one connection, one `requestStatus` subscription of one request. */
export interface Subscriber {
  index: number;
  protocol: Protocol;
  requestId: string;
  /** `performance.now()` when the connection was started. */
  startedAt: number;
  /** `performance.now()` when the first status (the current one) arrived: the subscription is live. */
  confirmedAt: number | null;
  /** The first status message: the request's status when the subscription started. */
  initial: Receipt | null;
  /** Every later status message, in arrival order. */
  changes: Receipt[];
  /** What went wrong on the transport: error frames, GraphQL errors, an unexpected close. */
  problems: string[];
  /** graphql-ws only: the server completed the subscription (it must, after `success`); null on `/ws`. */
  completed: boolean | null;
  /** Resolves when the subscription is live (first status), rejects on a failure before that. */
  confirmed: Promise<void>;
  close(): Promise<void>;
}

const STATUS_EVENT = 'request.status.updated';
const STATUS_SUBSCRIPTION = 'subscription($id: ID!) { requestStatus(requestId: $id) { requestId status updatedAt } }';

/** `updatedAt` as a number: the GraphQL `Timestamp` scalar is Unix ms, but accept an ISO string too. */
function unixMs(value: unknown): number {
  if (typeof value === 'number') return value;
  if (typeof value === 'string') return /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  return Number.NaN;
}

const describe = (error: unknown): string => {
  if (error instanceof Error) return error.message;
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const close = error as { code: unknown; reason?: unknown };
    return `socket closed (${String(close.code)}${typeof close.reason === 'string' && close.reason !== '' ? ` ${close.reason}` : ''})`;
  }
  return JSON.stringify(error);
};

/** Shared bookkeeping of both protocols: the first status confirms, the rest are changes. */
function newSubscriber(index: number, protocol: Protocol, requestId: string, close: () => Promise<void>) {
  let confirm!: () => void;
  let fail!: (error: Error) => void;
  const confirmed = new Promise<void>((resolve, reject) => {
    confirm = resolve;
    fail = reject;
  });
  // A failure after confirmation is only recorded; nobody awaits `confirmed` any more.
  confirmed.catch(() => undefined);
  const subscriber: Subscriber = {
    index,
    protocol,
    requestId,
    startedAt: performance.now(),
    confirmedAt: null,
    initial: null,
    changes: [],
    problems: [],
    completed: protocol === 'graphql-ws' ? false : null,
    confirmed,
    close,
  };
  const receive = (status: unknown, updatedAt: unknown, receivedAt: number, publishedAt?: unknown): void => {
    const receipt: Receipt = { status: String(status).toLowerCase(), updatedAt: unixMs(updatedAt), receivedAt };
    if (publishedAt !== undefined) receipt.publishedAt = unixMs(publishedAt);
    if (subscriber.initial !== null) return void subscriber.changes.push(receipt);
    subscriber.initial = receipt;
    subscriber.confirmedAt = performance.now();
    confirm();
  };
  const problem = (text: string): void => {
    subscriber.problems.push(text);
    if (subscriber.initial === null) fail(new Error(text));
  };
  return { subscriber, receive, problem };
}

/** A graphql-ws client of `/graphql` with one `requestStatus` subscription (the key in `connection_init`). */
export function openGraphQLSubscriber(wsBaseUrl: string, apiKey: string, requestId: string, index: number): Subscriber {
  let closing = false;
  const { subscriber, receive, problem } = newSubscriber(index, 'graphql-ws', requestId, async () => {
    closing = true;
    await client.dispose();
  });
  const client: Client = createClient({
    url: `${wsBaseUrl}/graphql`,
    webSocketImpl: WebSocket,
    connectionParams: { apiKey },
    retryAttempts: 0,
    lazy: true,
  });
  client.subscribe(
    { query: STATUS_SUBSCRIPTION, variables: { id: requestId } },
    {
      next: (result) => {
        const receivedAt = Date.now();
        if (result.errors?.length) return problem(`GraphQL error: ${JSON.stringify(result.errors).slice(0, 300)}`);
        const record = (result.data as { requestStatus?: { status?: unknown; updatedAt?: unknown } } | null | undefined)
          ?.requestStatus;
        if (!record) return problem(`no requestStatus in ${JSON.stringify(result).slice(0, 300)}`);
        receive(record.status, record.updatedAt, receivedAt);
      },
      error: (error) => {
        if (!closing) problem(`subscription error: ${describe(error)}`);
      },
      complete: () => {
        subscriber.completed = true;
        if (subscriber.initial === null) problem('completed before any status');
      },
    },
  );
  return subscriber;
}

/** A raw `ws` client of `/ws?apiKey=`: waits for `ready`, subscribes to one request, records its events. */
export function openWsSubscriber(wsBaseUrl: string, apiKey: string, requestId: string, index: number): Subscriber {
  const socket = new WebSocket(`${wsBaseUrl}/ws?apiKey=${encodeURIComponent(apiKey)}`);
  let closing = false;
  const { subscriber, receive, problem } = newSubscriber(index, '/ws', requestId, () => {
    closing = true;
    return new Promise<void>((resolve) => {
      if (socket.readyState === WebSocket.CLOSED) return resolve();
      socket.once('close', () => resolve());
      socket.close();
    });
  });
  socket.on('message', (data) => {
    const receivedAt = Date.now();
    let message: {
      type?: unknown;
      status?: unknown;
      event?: unknown;
      publishedAt?: unknown;
      data?: { status?: unknown; updatedAt?: unknown; requestId?: unknown };
    };
    try {
      message = JSON.parse(rawDataText(data)) as typeof message;
    } catch {
      return problem(`not JSON: ${rawDataText(data).slice(0, 200)}`);
    }
    if (message.status === 'error') return problem(`error frame: ${JSON.stringify(message).slice(0, 300)}`);
    if (message.type === 'connection' && message.status === 'ready') {
      socket.send(JSON.stringify({ type: 'subscribe', event: STATUS_EVENT, filters: { id: requestId } }));
      return;
    }
    if (message.type === 'subscribe' && message.status === 'success') return;
    if (message.event === STATUS_EVENT && message.data) {
      if (String(message.data.requestId).toLowerCase() !== requestId.toLowerCase())
        return problem(`event of another request ${String(message.data.requestId)}`);
      return receive(message.data.status, message.data.updatedAt, receivedAt, message.publishedAt);
    }
    problem(`unexpected message: ${JSON.stringify(message).slice(0, 300)}`);
  });
  socket.on('error', (error) => {
    if (!closing) problem(`socket error: ${error.message}`);
  });
  socket.on('close', (code, reason) => {
    if (!closing) problem(`socket closed by the server (${code}${reason.length > 0 ? ` ${reason.toString()}` : ''})`);
  });
  return subscriber;
}

/** One POST the webhook receiver got. */
export interface WebhookReceipt extends Receipt {
  requestId: string;
  /** `X-Signature-SHA256` verified with the key (the reference's formula). */
  verified: boolean;
  event: unknown;
}

export interface WebhookReceiver {
  url: string;
  /** The API key the signatures are checked with; set once the key exists (its webhook needs `url` first). */
  key: string;
  received: WebhookReceipt[];
  /** Bodies that were not a status webhook at all. */
  malformed: string[];
  close(): Promise<void>;
}

/** The reference's signature: hex HMAC-SHA256 of `<X-Signature-Timestamp>.<raw body>` keyed with the API key. */
function verifySignature(key: string, timestamp: string, body: string, signature: string): boolean {
  const expected = createHmac('sha256', key).update(`${timestamp}.${body}`).digest();
  const given = Buffer.from(/^[0-9a-f]{64}$/i.test(signature) ? signature : '', 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * A webhook receiver on a free loopback port. It answers 200 at once (so the gateway has no reason to retry),
 * notes when each request's headers arrived, and checks the signature once the body is in.
 */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: WebhookReceipt[] = [];
  const malformed: string[] = [];
  const server = http.createServer((req, res) => {
    const receivedAt = Date.now();
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      res.statusCode = 200;
      res.end();
      let json: { event?: unknown; data?: { requestId?: unknown; status?: unknown; updatedAt?: unknown } };
      try {
        json = JSON.parse(body) as typeof json;
      } catch {
        return void malformed.push(body.slice(0, 300));
      }
      if (typeof json.data?.requestId !== 'string' || typeof json.data.status !== 'string')
        return void malformed.push(body.slice(0, 300));
      const verified = verifySignature(
        receiver.key,
        String(req.headers['x-signature-timestamp'] ?? ''),
        body,
        String(req.headers['x-signature-sha256'] ?? ''),
      );
      received.push({
        requestId: json.data.requestId.toLowerCase(),
        status: json.data.status.toLowerCase(),
        updatedAt: unixMs(json.data.updatedAt),
        receivedAt,
        verified,
        event: json.event,
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`,
    key: '',
    received,
    malformed,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return receiver;
}

/** Creates an API key (through the admin API) whose webhook posts to `receiver`; returns the key. */
export async function createWebhookKey(
  baseUrl: string,
  adminToken: string,
  receiver: WebhookReceiver,
): Promise<string> {
  const response = await fetch(`${baseUrl}/admin/api-keys`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` },
    body: JSON.stringify({ name: 'bench:stream', webhook: { url: receiver.url } }),
  });
  const text = await response.text();
  if (response.status !== 201)
    throw new Error(`creating the API key failed: HTTP ${response.status} ${text.slice(0, 500)}`);
  const { key, apiKey } = JSON.parse(text) as {
    key: string;
    apiKey: { webhook: { url: string; enabled: boolean } | null };
  };
  if (apiKey.webhook?.enabled !== true) throw new Error(`the API key has no enabled webhook: ${text.slice(0, 500)}`);
  return key;
}
