import { createPublicClient, defineChain, http, type PublicClient } from 'viem';
import type { ChainConfig } from '../core/chains/types.js';

export type ChainClients = ReadonlyMap<number, PublicClient>;

/** A viem chain object for a configured chain (viem needs one for signing and sending). */
export function toViemChain(chain: ChainConfig) {
  return defineChain({
    id: chain.id,
    name: chain.displayName,
    nativeCurrency: { name: chain.nativeCurrency.name, symbol: chain.nativeCurrency.symbol, decimals: chain.nativeCurrency.decimals },
    rpcUrls: { default: { http: [chain.httpRpcUrl], webSocket: [chain.wsRpcUrl] } },
  });
}

/** One public client per configured chain, over HTTP, with bounded timeouts so a dead RPC fails fast. */
export function createChainClients(chains: ChainConfig[]): ChainClients {
  return new Map(
    chains.map((chain) => [
      chain.id,
      createPublicClient({
        chain: toViemChain(chain),
        transport: http(chain.httpRpcUrl, { timeout: 5_000, retryCount: 1 }),
      }) as PublicClient,
    ]),
  );
}
