import type { WebSocket } from '@fastify/websocket';
import { admitRequest } from '../core/apiKeys/admitRequest.js';
import { clientBucket } from '../core/apiKeys/clientBucket.js';
import type { RateLimiter } from '../core/apiKeys/rateLimiter.js';
import type { CoreContext } from '../core/context.js';
import type { Caller } from '../core/vocabulary/caller.js';

/** Close code for a connection refused or dropped by a limit (RFC 6455 policy violation). */
const policyViolation = 1008;

/**
 * What both websocket endpoints (graphql-ws on `/graphql`, the status stream on `/ws`) share to stay bounded:
 * a cap on open connections per client (IPv6 by /64), the rate limiter for every message that starts work
 * (the upgrade alone was counted once, after which a socket could send without limit), and dropping a socket
 * whose unsent data grows past a limit (a client that stops reading would otherwise grow the server's memory
 * with every event).
 */
export interface SocketGuard {
  readonly maxSubscriptions: number;
  /** Registers a new socket of `address`; false (and the socket closed 1008) when the client has too many. */
  open(socket: WebSocket, address: string): boolean;
  /** Counts one message against the key's or the address's limit (answers the caller a valid key makes, else
   * anonymous); throws `RateLimitedError`. */
  admit(apiKey: string | undefined, address: string): Promise<Caller>;
  /** Sends `data`, then terminates the socket if what it has not yet sent exceeds the limit. */
  send(socket: WebSocket, data: string): void;
}

/** The websocket caps (`GatewayConfig.surfaces`, read from the environment by `src/server/config.ts`). */
export interface SocketLimits {
  /** Websocket connections (graphql-ws and `/ws` together) per client address. */
  wsConnectionsPerClient: number;
  /** Subscriptions one websocket may hold. */
  wsMaxSubscriptions: number;
  /** A websocket whose unsent data exceeds this many bytes is dropped. */
  wsMaxBufferedBytes: number;
}

export function createSocketGuard(
  core: Pick<CoreContext, 'db' | 'log'>,
  limiter: RateLimiter,
  limits: SocketLimits,
): SocketGuard {
  const open = new Map<string, number>();
  const guard: SocketGuard = {
    maxSubscriptions: limits.wsMaxSubscriptions,
    open(socket, address) {
      const bucket = clientBucket(address);
      const count = open.get(bucket) ?? 0;
      if (count >= limits.wsConnectionsPerClient) {
        socket.close(policyViolation, `At most ${limits.wsConnectionsPerClient} websocket connections per client`);
        return false;
      }
      open.set(bucket, count + 1);
      socket.once('close', () => {
        const left = (open.get(bucket) ?? 1) - 1;
        if (left <= 0) open.delete(bucket);
        else open.set(bucket, left);
      });
      // Every frame graphql-ws sends goes through `send`; so does every /ws frame (Connection.send).
      const send = socket.send.bind(socket) as (...args: unknown[]) => void;
      socket.send = ((...args: unknown[]) => {
        send(...args);
        dropIfSlow(socket);
      }) as typeof socket.send;
      return true;
    },
    admit: (apiKey, address) => admitRequest(core, limiter, { apiKey, address, keyMode: 'lenient' }),
    send(socket, data) {
      if (socket.readyState === socket.OPEN) socket.send(data);
    },
  };
  const dropIfSlow = (socket: WebSocket): void => {
    if (socket.bufferedAmount > limits.wsMaxBufferedBytes) {
      core.log.warn(
        { bufferedBytes: socket.bufferedAmount },
        'websocket dropped: the client does not read what it is sent',
      );
      socket.terminate();
    }
  };
  return guard;
}
