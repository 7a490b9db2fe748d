import http from 'node:http';
import https from 'node:https';

/** What viem's HTTP transport reads of a response (`utils/rpc/http.ts`, `utils/internal/http.ts`). */
interface RpcResponse {
  ok: boolean;
  status: number;
  statusText: string;
  headers: Headers;
  /** Always null: the body is read whole, and `text()` gives it. */
  body: null;
  text(): Promise<string>;
}

interface RpcRequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  signal?: AbortSignal | null;
}

/**
 * A `fetch` for viem's HTTP transport (`fetchFn`) on node's own HTTP client with keep-alive agents. JSON-RPC
 * requests are small and many (a quote reads a balance on every request), and the WHATWG `fetch` costs several
 * times more CPU per request than `http.request`: its Request, Headers and stream objects. Answers are read
 * whole (RPC answers are small; viem still enforces its size limit on the text), and a failed connection
 * rejects as `fetch` does, so viem reports it as the same `HttpRequestError`. `signal` aborts the request, as
 * viem's timeout does.
 */
export function createNodeFetch(): (url: string | URL, init?: RpcRequestInit) => Promise<RpcResponse> {
  const agents = {
    'http:': new http.Agent({ keepAlive: true, maxSockets: 64 }),
    'https:': new https.Agent({ keepAlive: true, maxSockets: 64 }),
  };
  return (url, init = {}) =>
    new Promise((resolve, reject) => {
      const target = typeof url === 'string' ? new URL(url) : url;
      const transport = target.protocol === 'https:' ? https : http;
      const agent = target.protocol === 'https:' ? agents['https:'] : agents['http:'];
      const request = transport.request(
        target,
        { method: init.method ?? 'GET', headers: init.headers, agent, ...(init.signal ? { signal: init.signal } : {}) },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', reject);
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const headers = new Headers();
            for (const [name, value] of Object.entries(response.headers)) {
              if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
            }
            const status = response.statusCode ?? 0;
            resolve({
              ok: status >= 200 && status < 300,
              status,
              statusText: response.statusMessage ?? '',
              headers,
              body: null,
              text: async () => text,
            });
          });
        },
      );
      request.on('error', reject);
      request.end(init.body);
    });
}
