/**
 * An HTTP proxy in front of an RPC endpoint (anvil) that can answer some requests itself: the faults a real anvil
 * cannot be made to produce on demand (a provider's 503, 429, range limits). Everything it does not answer is
 * forwarded unchanged.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProxiedCall {
  method: string;
  params: unknown[];
  /** `Date.now()` when the proxy received it. */
  at: number;
}

/** What the proxy answers instead of the upstream: an HTTP status with a body, or a JSON-RPC error. */
export type Injected =
  { status: number; headers?: Record<string, string>; body?: string } | { rpcError: { code: number; message: string } };

export interface RpcProxy {
  url: string;
  /** Every JSON-RPC call received, in order (a batch counts as its calls). */
  calls: ProxiedCall[];
  /** Decides per call; `undefined` forwards it. Replace it at any time. */
  inject: (call: ProxiedCall) => Injected | undefined;
  close(): Promise<void>;
}

export async function startRpcProxy(upstream: string): Promise<RpcProxy> {
  const proxy: RpcProxy = { url: '', calls: [], inject: () => undefined, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let parsed: { id?: unknown; method?: string; params?: unknown[] } | undefined;
      try {
        const value = JSON.parse(body) as unknown;
        parsed = Array.isArray(value) ? undefined : (value as typeof parsed);
      } catch {
        parsed = undefined;
      }
      if (parsed?.method !== undefined) {
        const call = { method: parsed.method, params: parsed.params ?? [], at: Date.now() };
        proxy.calls.push(call);
        const injected = proxy.inject(call);
        if (injected !== undefined) {
          if ('rpcError' in injected) {
            res
              .writeHead(200, { 'content-type': 'application/json' })
              .end(JSON.stringify({ jsonrpc: '2.0', id: parsed.id, error: injected.rpcError }));
          } else {
            res
              .writeHead(injected.status, { 'content-type': 'text/plain', ...injected.headers })
              .end(injected.body ?? '');
          }
          return;
        }
      }
      fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        .then(async (answer) =>
          res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text()),
        )
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return proxy;
}
