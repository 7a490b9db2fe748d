import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { WebSocket } from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import { authenticate } from '../core/apiKeys/authenticate.js';
import type { CoreContext } from '../core/context.js';
import { isGatewayError } from '../core/errors.js';
import type { RequestStatusUpdate } from '../core/events/statusStream.js';
import { subscribeRequestStatus } from '../core/events/subscribeRequestStatus.js';
import type { WebhookStatusData } from '../core/webhooks/webhookPayload.js';
import { toWebhookDepositAddress } from '../core/requests/statusRules.js';
import type { Caller } from '../core/vocabulary/caller.js';
import type { SocketGuard } from './socketGuard.js';
import { rawDataText } from './rawData.js';

/** The only event of the reference's stream. */
const STATUS_EVENT = 'request.status.updated';

/** Close codes this endpoint uses (RFC 6455). */
export enum WsCloseCode {
  /** The server is shutting down (rolling restart): reconnect. */
  GoingAway = 1001,
  /** The `apiKey` query parameter names no valid key. */
  PolicyViolation = 1008,
}

export interface RegisterStatusWebSocketOptions {
  /** Interval of websocket-level pings, in ms; a socket that has not answered the previous ping is terminated. 0 disables. Default 30 000. */
  pingIntervalMs?: number;
  /** Subscriptions one connection may hold at once. Default: the guard's, else 100. */
  maxSubscriptions?: number;
  /** Connection cap per client, rate limit per message, slow consumers dropped (the gateway always sets it). */
  guard?: SocketGuard;
}

/** Closes every `/ws` connection (1001) and refuses new ones. Idempotent. */
export type DisposeStatusWebSocket = () => Promise<void>;

const asyncapiFile = new URL('../../schema/asyncapi.yaml', import.meta.url);

/**
 * The reference's status stream on `GET /ws` (see `schema/asyncapi.yaml`, served at
 * `/documentation/asyncapi.yaml`): a ready message, `subscribe` / `unsubscribe` by `filters.id`, then
 * `request.status.updated` events with `publishedAt`, starting with the current status. A malformed message gets
 * an error frame and the socket stays open; a JSON `ping` gets a `pong`. Requires @fastify/websocket on `app`.
 */
export async function registerStatusWebSocket(
  app: FastifyInstance,
  core: CoreContext,
  options: RegisterStatusWebSocketOptions = {},
): Promise<DisposeStatusWebSocket> {
  const pingIntervalMs = options.pingIntervalMs ?? 30_000;
  const { guard } = options;
  const maxSubscriptions = options.maxSubscriptions ?? guard?.maxSubscriptions ?? 100;
  const sockets = new Set<WebSocket>();
  let disposing: Promise<void> | null = null;
  const asyncapi = readFileSync(asyncapiFile, 'utf8');

  app.get('/documentation/asyncapi.yaml', async (_request, reply) =>
    reply.type('application/yaml; charset=utf-8').send(asyncapi),
  );
  app.get<{ Querystring: { apiKey?: string } }>('/ws', { websocket: true }, (socket, request) => {
    if (disposing) {
      socket.close(WsCloseCode.GoingAway, 'Server is shutting down');
      return;
    }
    if (guard !== undefined && !guard.open(socket, request.ip)) return;
    sockets.add(socket);
    const connection = new Connection(socket, core, maxSubscriptions);
    socket.once('close', () => {
      sockets.delete(socket);
      connection.close();
    });
    const apiKey = typeof request.query.apiKey === 'string' ? request.query.apiKey : undefined;
    // Messages that arrive before the key is checked wait for it; the client should wait for `ready` anyway.
    const ready = authenticate(core, apiKey).then(
      (caller) => {
        connection.caller = caller;
        connection.send({ type: 'connection', status: 'ready', data: { id: connection.id } });
        return true;
      },
      (error: unknown) => {
        connection.sendError('connection', error);
        socket.close(WsCloseCode.PolicyViolation, 'Invalid API key');
        return false;
      },
    );
    // Messages are handled one at a time in arrival order, each counted by the rate limiter first (a socket is
    // not a way around the limit its upgrade was counted against).
    let handled: Promise<boolean> = ready;
    socket.on('message', (raw, isBinary) => {
      const text = isBinary ? null : rawDataText(raw);
      handled = handled.then(async (ok) => {
        if (!ok) return false;
        if (guard !== undefined) {
          try {
            await guard.admit(apiKey, request.ip);
          } catch (error) {
            connection.sendError('error', error);
            return true;
          }
        }
        connection.handle(text);
        return true;
      });
    });
    if (pingIntervalMs > 0) keepAlive(socket, pingIntervalMs);
  });

  return () => {
    disposing ??= Promise.all(
      [...sockets].map(
        (socket) =>
          new Promise<void>((resolve) => {
            if (socket.readyState === socket.CLOSED) return resolve();
            const timer = setTimeout(() => socket.terminate(), 1_000);
            socket.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
            socket.close(WsCloseCode.GoingAway, 'Server is shutting down');
          }),
      ),
    ).then(() => undefined);
    return disposing;
  };
}

/** Websocket pings; a socket whose previous ping got no pong is dead and terminated. */
function keepAlive(socket: WebSocket, intervalMs: number): void {
  let alive = true;
  socket.on('pong', () => {
    alive = true;
  });
  const timer = setInterval(() => {
    if (!alive) {
      socket.terminate();
      return;
    }
    alive = false;
    socket.ping();
  }, intervalMs);
  timer.unref();
  socket.once('close', () => clearInterval(timer));
}

type ClientMessage = { type?: unknown; event?: unknown; filters?: unknown };

/** One `/ws` connection: its caller and its subscriptions (one status stream per request id). */
class Connection {
  readonly id = randomBytes(6).toString('hex');
  caller: Caller = { apiKey: null };
  private readonly streams = new Map<string, AsyncIterableIterator<RequestStatusUpdate>>();
  /** Subscriptions being opened (their slot is taken before the first await, so a burst cannot pass the cap). */
  private opening = new Set<string>();
  private closed = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly core: CoreContext,
    private readonly maxSubscriptions: number,
  ) {}

  send(message: object): void {
    if (this.socket.readyState === this.socket.OPEN) this.socket.send(JSON.stringify(message));
  }

  /** An error frame: `type` is the message type it answers (`error` when the message had none we know). */
  sendError(type: string, error: unknown, extra: object = {}): void {
    let errorCode = 'UNKNOWN_ERROR';
    let message = 'Unexpected error';
    if (isGatewayError(error)) {
      errorCode = error.code;
      message = error.message;
    } else if (typeof error === 'string') {
      errorCode = 'INVALID_INPUT';
      message = error;
    } else {
      this.core.log.error({ err: error, connection: this.id }, 'unexpected error on /ws');
    }
    this.send({ type, status: 'error', data: { ...extra, errorCode, message } });
  }

  handle(text: string | null): void {
    if (this.closed) return;
    let message: ClientMessage;
    try {
      if (text === null) throw new Error('binary');
      const parsed: unknown = JSON.parse(text);
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      message = parsed;
    } catch {
      this.sendError('error', 'Messages must be JSON objects (text frames)');
      return;
    }
    switch (message.type) {
      case 'ping':
        this.send({ type: 'pong', data: { timestamp: Date.now() } });
        return;
      case 'subscribe':
      case 'unsubscribe': {
        const target = this.targetOf(message);
        if (typeof target === 'string') {
          this.sendError(message.type, target, { event: message.event ?? null });
          return;
        }
        if (message.type === 'subscribe') void this.subscribe(target.id);
        else this.unsubscribe(target.id);
        return;
      }
      default:
        this.sendError(
          'error',
          `Unknown message type ${JSON.stringify(message.type ?? null)}: use subscribe, unsubscribe or ping`,
        );
    }
  }

  /** The request id a (un)subscribe names, or what is wrong with it. */
  private targetOf(message: ClientMessage): { id: string } | string {
    if (message.event !== STATUS_EVENT) return `event must be "${STATUS_EVENT}"`;
    const filters = message.filters as { id?: unknown } | undefined;
    if (filters === null || typeof filters !== 'object' || typeof filters.id !== 'string') {
      return 'filters.id must be the request id to follow';
    }
    return { id: filters.id };
  }

  private async subscribe(requestId: string): Promise<void> {
    const key = requestId.toLowerCase();
    const ack = { type: 'subscribe', status: 'success', data: { event: STATUS_EVENT, filters: { id: requestId } } };
    if (this.streams.has(key) || this.opening.has(key)) {
      this.send(ack);
      return;
    }
    if (this.streams.size + this.opening.size >= this.maxSubscriptions) {
      this.sendError('subscribe', `At most ${this.maxSubscriptions} subscriptions per connection`, {
        event: STATUS_EVENT,
        filters: { id: requestId },
      });
      return;
    }
    this.opening.add(key);
    let stream: AsyncIterableIterator<RequestStatusUpdate>;
    try {
      stream = await subscribeRequestStatus(this.core, { requestId, caller: this.caller });
    } catch (error) {
      this.sendError('subscribe', error, { event: STATUS_EVENT, filters: { id: requestId } });
      return;
    } finally {
      this.opening.delete(key);
    }
    if (this.closed || this.streams.has(key)) {
      await stream.return?.();
      if (!this.closed) this.send(ack);
      return;
    }
    this.streams.set(key, stream);
    this.send(ack);
    try {
      for await (const update of stream) {
        if (this.socket.readyState === this.socket.OPEN) this.socket.send(statusEventFrame(update, Date.now()));
      }
    } finally {
      if (this.streams.get(key) === stream) this.streams.delete(key);
    }
  }

  private unsubscribe(requestId: string): void {
    const key = requestId.toLowerCase();
    const stream = this.streams.get(key);
    this.streams.delete(key);
    void stream?.return?.();
    this.send({ type: 'unsubscribe', status: 'success', data: { event: STATUS_EVENT, filters: { id: requestId } } });
  }

  close(): void {
    this.closed = true;
    for (const stream of this.streams.values()) void stream.return?.();
    this.streams.clear();
  }
}

/** The JSON of each message's event data: the subscribers of a change share its message (`toStatusUpdate`). */
const eventDataJson = new WeakMap<RequestStatusUpdate, string>();

/**
 * The status event frame, byte for byte `JSON.stringify({ event, data: toEventData(update), publishedAt })`, with
 * `data` serialized once per message rather than once per subscriber.
 */
export function statusEventFrame(update: RequestStatusUpdate, publishedAt: number): string {
  let data = eventDataJson.get(update);
  if (data === undefined) {
    data = JSON.stringify(toEventData(update));
    eventDataJson.set(update, data);
  }
  return `{"event":"${STATUS_EVENT}","data":${data},"publishedAt":${publishedAt}}`;
}

/**
 * The event's `data`: the webhook form of the status record (api-facts §5.2/5.3), from the stream message (whose
 * `referrer` is already the subscriber's to see). Its members keep the order this stream has always sent.
 */
export function toEventData(update: RequestStatusUpdate): WebhookStatusData {
  return {
    requestId: update.requestId,
    status: update.status,
    inTxHashes: update.inTxHashes,
    txHashes: update.txHashes,
    updatedAt: update.updatedAt,
    originChainId: update.originChainId,
    destinationChainId: update.destinationChainId,
    details: update.details,
    failReason: update.failReason,
    refundFailReason: update.refundFailReason,
    referrer: update.referrer,
    depositAddress: toWebhookDepositAddress(update.depositAddress),
  };
}
