import { createPublicClient, defineChain, http, type HttpTransportConfig, type PublicClient } from 'viem';
import type { ChainConfig } from '../core/chains/types.js';
import { createNodeFetch } from './nodeFetch.js';

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
 */
export function createChainClients(chains: ChainConfig[], options: CreateChainClientsOptions = {}): ChainClients {
  const { timeout = 5_000, onFetchRequest, observeRpc } = options;
  const nodeFetch = createNodeFetch();
  const fetchFor = (chainId: number): typeof fetch => {
    if (observeRpc === undefined) return nodeFetch as unknown as typeof fetch;
    const observed: typeof nodeFetch = async (url, init) => {
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
    return observed as unknown as typeof fetch;
  };
  return new Map(
    chains.map((chain) => [
      chain.id,
      createPublicClient({
        chain: toViemChain(chain),
        transport: http(chain.httpRpcUrl, { timeout, retryCount: 1, onFetchRequest, fetchFn: fetchFor(chain.id) }),
        // 4 KiB of calldata is ~100 balanceOf calls: one request, far below any RPC's eth_call gas cap.
        batch: { multicall: { batchSize: 4_096, wait: 0 } },
      }) as PublicClient,
    ]),
  );
}
