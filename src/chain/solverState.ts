import { erc20Abi, zeroAddress, type Address } from 'viem';
import type { SolverChainState, SolverStateReader } from '../core/reconciliation/reconciler.js';
import type { ChainClients } from './clients.js';

/**
 * The solver's balances and transaction count at one block (the chain's head when read), for the ledger's
 * reconciliation: every read names that block, so they are of one state.
 */
export function createSolverStateReader(clients: ChainClients, solver: Address): SolverStateReader {
  return {
    async read(chainId, currencies): Promise<SolverChainState> {
      const client = clients.get(chainId);
      if (client === undefined) throw new Error(`no client for chain ${chainId}`);
      const blockNumber = await client.getBlockNumber({ cacheTime: 0 });
      const [nonce, ...balances] = await Promise.all([
        client.getTransactionCount({ address: solver, blockNumber }),
        ...currencies.map((currency) =>
          currency.toLowerCase() === zeroAddress
            ? client.getBalance({ address: solver, blockNumber })
            : client.readContract({
                address: currency,
                abi: erc20Abi,
                functionName: 'balanceOf',
                args: [solver],
                blockNumber,
              }),
        ),
      ]);
      return {
        blockNumber,
        nonce: BigInt(nonce),
        balances: new Map(currencies.map((currency, i) => [currency.toLowerCase(), balances[i]!])),
      };
    },
  };
}
