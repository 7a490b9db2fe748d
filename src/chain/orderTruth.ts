import type { Hex } from 'viem';
import { depositoryAbi, onlyOwnerMulticallerAbi } from '../../generated/contracts/index.js';
import type { ChainConfig } from '../core/chains/types.js';
import type { DepositRelease, OrderTruth } from '../core/ports/solver.js';
import type { ChainClients } from './clients.js';

/**
 * Reads what the chains say of orders: the fill contract records every request id it filled
 * (`OnlyOwnerMulticaller.filled`) and the depository every deposit it released (`Depository.isReleased`, and to
 * whom by which transaction in its `Released` event), so each is one read, whatever the database remembers.
 */
export function createOrderTruth(chains: readonly ChainConfig[], clients: ChainClients): OrderTruth {
  const chainOf = (chainId: number) => {
    const chain = chains.find((candidate) => candidate.id === chainId);
    const client = clients.get(chainId);
    if (chain === undefined || client === undefined) throw new Error(`chain ${chainId} is not configured`);
    return { chain, client };
  };
  return {
    async released(chainId: number, depositIndex: bigint): Promise<boolean> {
      const { chain, client } = chainOf(chainId);
      return client.readContract({
        address: chain.contracts.depository,
        abi: depositoryAbi,
        functionName: 'isReleased',
        args: [depositIndex],
      });
    },
    async release(chainId: number, depositIndex: bigint, fromBlock: bigint): Promise<DepositRelease | undefined> {
      const { chain, client } = chainOf(chainId);
      // One indexed query over the deposit's life (the client splits a range the provider refuses); a deposit is
      // released at most once, so the first event is the release.
      const [event] = await client.getContractEvents({
        address: chain.contracts.depository,
        abi: depositoryAbi,
        eventName: 'Released',
        args: { depositIndex },
        fromBlock,
        toBlock: 'latest',
        strict: true,
      });
      if (event === undefined) return undefined;
      return {
        to: event.args.to.toLowerCase(),
        amount: event.args.amount,
        txHash: event.transactionHash.toLowerCase(),
        blockNumber: event.blockNumber,
      };
    },
    async head(chainId: number): Promise<bigint> {
      return chainOf(chainId).client.getBlockNumber({ cacheTime: 0 });
    },
    async filled(chainId: number, requestId: Hex): Promise<boolean> {
      const { chain, client } = chainOf(chainId);
      return client.readContract({
        address: chain.contracts.onlyOwnerMulticaller,
        abi: onlyOwnerMulticallerAbi,
        functionName: 'filled',
        args: [requestId],
      });
    },
  };
}
