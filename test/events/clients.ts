import { createClient, type Client } from 'graphql-ws';
import WebSocket from 'ws';
import { rawDataText } from '../../src/ws/rawData.js';

/** A raw `ws` client of `/ws` that records every JSON message with its arrival time. */
export interface RawStreamClient {
  socket: WebSocket;
  messages: Array<Record<string, any>>;
  arrivals: number[];
  send(message: unknown): void;
  sendRaw(text: string): void;
  /** The first message (from index `from`) satisfying `predicate`; fails after `timeoutMs`. */
  next(predicate: (message: Record<string, any>) => boolean, timeoutMs?: number): Promise<Record<string, any>>;
  close(): Promise<void>;
}

export async function connectRaw(url: string): Promise<RawStreamClient> {
  const socket = new WebSocket(url);
  const messages: Array<Record<string, any>> = [];
  const arrivals: number[] = [];
  const listeners = new Set<() => void>();
  socket.on('message', (data) => {
    messages.push(JSON.parse(rawDataText(data)));
    arrivals.push(performance.now());
    for (const listener of listeners) listener();
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  let seen = 0;
  const client: RawStreamClient = {
    socket,
    messages,
    arrivals,
    send: (message) => socket.send(JSON.stringify(message)),
    sendRaw: (text) => socket.send(text),
    next(predicate, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          while (seen < messages.length) {
            const message = messages[seen++]!;
            if (predicate(message)) {
              listeners.delete(listener);
              clearTimeout(timer);
              resolve(message);
              return true;
            }
          }
          return false;
        };
        const listener = (): void => void check();
        const timer = setTimeout(() => {
          listeners.delete(listener);
          reject(new Error(`no matching message in ${timeoutMs} ms; got ${JSON.stringify(messages)}`));
        }, timeoutMs);
        if (!check()) listeners.add(listener);
      });
    },
    close: () =>
      new Promise<void>((resolve) => {
        if (socket.readyState === socket.CLOSED) return resolve();
        socket.once('close', () => resolve());
        socket.close();
      }),
  };
  return client;
}

/** A graphql-ws client of `/graphql` (over `ws`, no retries). */
export function connectGraphQL(url: string, connectionParams?: Record<string, unknown>): Client {
  return createClient({
    url,
    webSocketImpl: WebSocket,
    retryAttempts: 0,
    lazy: true,
    ...(connectionParams ? { connectionParams } : {}),
  });
}

/** Collects the results of one subscription; `done` resolves when the server completes it. */
export function collectSubscription(client: Client, query: string, variables: Record<string, unknown>) {
  const results: Array<{ data?: any; errors?: any }> = [];
  const arrivals: number[] = [];
  let dispose = (): void => {};
  const done = new Promise<void>((resolve, reject) => {
    dispose = client.subscribe(
      { query, variables },
      {
        next: (result) => {
          results.push(result);
          arrivals.push(performance.now());
        },
        error: reject,
        complete: resolve,
      },
    );
  });
  return { results, arrivals, done, unsubscribe: () => dispose() };
}

export const wsUrlOf = (httpUrl: string, path: string): string => httpUrl.replace(/^http/, 'ws') + path;
