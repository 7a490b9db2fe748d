import http from 'node:http';
import https from 'node:https';

/** What viem's HTTP transport reads of a response (`utils/rpc/http.ts`, `utils/internal/http.ts`). */
export interface RpcResponse {
  ok: boolean;
  status: number;
  statusText: string;
  /** viem only calls `get` (content type and length; `Retry-After` of a failed answer). */
  headers: Pick<Headers, 'get'>;
  /** Always null: the body is read whole, and `text()` gives it. */
  body: null;
  text(): Promise<string>;
}

export interface RpcRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal | null;
}

/** A response's headers as `Headers.get` reads them, straight from node's (lower-case names, repeats joined). */
class ResponseHeaders {
  constructor(private readonly raw: http.IncomingHttpHeaders) {}

  get(name: string): string | null {
    const value = this.raw[name.toLowerCase()];
    return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
  }
}

/** The rejection of an aborted request, named as `fetch` names it (viem recognises it by its name). */
export function abortError(signal: AbortSignal): Error {
  const error = new Error('This operation was aborted', { cause: signal.reason });
  error.name = 'AbortError';
  return Object.assign(error, { code: 'ABORT_ERR' });
}

/**
 * A `fetch` for viem's HTTP transport (`fetchFn`) on node's own HTTP client with keep-alive agents. JSON-RPC
 * requests are small and many (a quote reads a balance on every request), and the WHATWG `fetch` costs several
 * times more CPU per request than `http.request`: its Request, Headers and stream objects. Answers are read
 * whole (RPC answers are small; viem still enforces its size limit on the text), and a failed connection
 * rejects as `fetch` does, so viem reports it as the same `HttpRequestError`. `signal` aborts the request, as
 * viem's timeout does: through one listener of our own, because node's `signal` option of `http.request` (a
 * stream abort hook plus end-of-stream watchers) cost half of the request's construction.
 */
export function createNodeFetch(): (url: string | URL, init?: RpcRequestInit) => Promise<RpcResponse> {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
  };
  /** Parsed RPC URLs: a gateway talks to a handful. */
  const targets = new Map<string, URL>();
  const targetOf = (url: string | URL): URL => {
    if (typeof url !== 'string') return url;
    let target = targets.get(url);
    if (target === undefined) {
      target = new URL(url);
      if (targets.size < 64) targets.set(url, target);
    }
    return target;
  };
  return (url, init = {}) =>
    new Promise((resolve, reject) => {
      const { signal } = init;
      if (signal?.aborted) return reject(abortError(signal));
      const target = targetOf(url);
      const secure = target.protocol === 'https:';
      const agent = secure ? agents['https:'] : agents['http:'];
      let onAbort: (() => void) | undefined;
      const settle = () => {
        if (onAbort !== undefined) signal!.removeEventListener('abort', onAbort);
      };
      const fail = (error: Error) => {
        settle();
        reject(error);
      };
      const request = (secure ? https : http).request(
        target,
        { method: init.method ?? 'GET', headers: init.headers, agent },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', fail);
          response.on('end', () => {
            settle();
            const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
            const status = response.statusCode ?? 0;
            resolve({
              ok: status >= 200 && status < 300,
              status,
              statusText: response.statusMessage ?? '',
              headers: new ResponseHeaders(response.headers),
              body: null,
              text: async () => text,
            });
          });
        },
      );
      request.on('error', fail);
      if (signal) {
        onAbort = () => request.destroy(abortError(signal));
        signal.addEventListener('abort', onAbort, { once: true });
      }
      request.end(init.body);
    });
}
