import type { Hex } from 'viem';
import { onlyOwnerMulticallerAbi } from '../../generated/contracts/index.js';
import type { ChainConfig } from '../core/chains/types.js';
import type { OrderTruth } from '../core/solver/ports.js';
import type { ChainClients } from './clients.js';

/**
 * Reads what the chains say of orders: the fill contract records every request id it filled
 * (`OnlyOwnerMulticaller.filled`), so whether an order was filled is one read, whatever the database remembers.
 */
export function createOrderTruth(chains: readonly ChainConfig[], clients: ChainClients): OrderTruth {
  return {
    async filled(chainId: number, requestId: Hex): Promise<boolean> {
      const chain = chains.find((candidate) => candidate.id === chainId);
      const client = clients.get(chainId);
      if (chain === undefined || client === undefined) throw new Error(`chain ${chainId} is not configured`);
      return client.readContract({
        address: chain.contracts.onlyOwnerMulticaller,
        abi: onlyOwnerMulticallerAbi,
        functionName: 'filled',
        args: [requestId],
      });
    },
  };
}
