import {
  createPublicClient,
  defineChain,
  fallback,
  http,
  InternalRpcError,
  LimitExceededRpcError,
  type HttpTransportConfig,
  type PublicClient,
} from 'viem';
import type { ChainConfig } from '../core/chains/types.js';
import { withLogRangeSplitting } from './logRanges.js';
import { createNodeFetch } from './nodeFetch.js';
import { withRateLimitBackoff } from './rateLimitBackoff.js';

export type ChainClients = ReadonlyMap<number, PublicClient>;

/** A viem chain object for a configured chain (viem needs one for signing and sending, and for Multicall3). */
function toViemChain(chain: ChainConfig) {
  return defineChain({
    id: chain.id,
    name: chain.displayName,
    nativeCurrency: {
      name: chain.nativeCurrency.name,
      symbol: chain.nativeCurrency.symbol,
      decimals: chain.nativeCurrency.decimals,
    },
    rpcUrls: { default: { http: [chain.httpRpcUrl], webSocket: [chain.wsRpcUrl] } },
    contracts: { multicall3: { address: chain.contracts.multicall3 } },
  });
}

export interface CreateChainClientsOptions {
  /** Milliseconds before an RPC request fails with a timeout; defaults to 5000. */
  timeout?: number;
  /** Called before every HTTP request (tests count requests with it). */
  onFetchRequest?: HttpTransportConfig['onFetchRequest'];
  /** Called after every HTTP request to a chain's RPC with its duration and whether it answered 2xx (`/metrics`). */
  observeRpc?: (chainId: number, seconds: number, ok: boolean) => void;
}

/**
 * One public client per configured chain, over HTTP, with bounded timeouts so a dead RPC fails fast.
 * Concurrent `eth_call`s without a sender (contract reads) are batched into one Multicall3 `aggregate3` call
 * per tick, so many balance or price reads cost one RPC request.
 *
 * What real providers need, in one place so that every consumer of a chain (watchers, senders, market reads)
 * gets it:
 * - `httpRpcUrl` and then each of `fallbackHttpRpcUrls`, in that order (viem's `fallback`): a request the
 *   provider cannot serve (HTTP error, timeout, rate limit) goes to the next one; an answer from a node (a
 *   revert, "nonce too low") stands and is not asked again elsewhere.
 * - A 429 cools its endpoint down (`Retry-After`, or a doubling back-off): `withRateLimitBackoff`.
 * - `getLogs` splits a range the provider refuses (too many blocks or results): `withLogRangeSplitting`.
 */
export function createChainClients(chains: ChainConfig[], options: CreateChainClientsOptions = {}): ChainClients {
  const { timeout = 5_000, onFetchRequest, observeRpc } = options;
  const nodeFetch = createNodeFetch();
  const fetchFor = (chainId: number, alternatives: boolean): typeof fetch => {
    const observed: typeof nodeFetch =
      observeRpc === undefined
        ? nodeFetch
        : async (url, init) => {
            const started = performance.now();
            try {
              const response = await nodeFetch(url, init);
              observeRpc(chainId, (performance.now() - started) / 1000, response.ok);
              return response;
            } catch (error) {
              observeRpc(chainId, (performance.now() - started) / 1000, false);
              throw error;
            }
          };
    return withRateLimitBackoff(observed, { alternatives }) as unknown as typeof fetch;
  };
  return new Map(
    chains.map((chain) => {
      const urls = [chain.httpRpcUrl, ...(chain.fallbackHttpRpcUrls ?? [])];
      const alternatives = urls.length > 1;
      // Under `fallback` an endpoint's failure goes straight to the next endpoint (an endpoint's own retry would
      // wait out a `Retry-After` first); the fallback as a whole is retried once, as a lone endpoint is.
      const transports = urls.map((url) =>
        http(url, {
          timeout,
          retryCount: alternatives ? 0 : 1,
          onFetchRequest,
          fetchFn: fetchFor(chain.id, alternatives),
        }),
      );
      const client = createPublicClient({
        chain: toViemChain(chain),
        transport: withLogRangeSplitting(
          transports.length === 1 ? transports[0]! : fallback(transports, { retryCount: 1, shouldThrow: nodeAnswered }),
        ),
        // 4 KiB of calldata is ~100 balanceOf calls: one request, far below any RPC's eth_call gas cap.
        batch: { multicall: { batchSize: 4_096, wait: 0 } },
      }) as PublicClient;
      return [chain.id, client];
    }),
  );
}

/**
 * Whether a failure is a node's answer (a JSON-RPC error object: a revert, "nonce too low", "already known"),
 * which the next provider must not be asked about, rather than the provider failing to serve the request. A
 * provider's own limits (-32005) and internal errors are not answers: the next provider is tried.
 */
function nodeAnswered(error: Error): boolean {
  if (!('code' in error) || typeof error.code !== 'number') return false;
  return error.code !== LimitExceededRpcError.code && error.code !== InternalRpcError.code && error.code !== -1;
}
