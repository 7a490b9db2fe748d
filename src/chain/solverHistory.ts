import type { Address } from 'viem';
import type { Kysely } from 'kysely';
import type { ChainConfig } from '../core/chains/types.js';
import { knownSolverNonce } from '../store/solverNonces.repository.js';
import type { Tables } from '../store/tables.js';
import type { ChainClients } from './clients.js';

/** A chain where the solver key made transactions this database never recorded. */
export interface UnknownSolverHistory {
  chainId: number;
  /** The solver account's transaction count on the chain (at `latest`). */
  chainNonce: bigint;
  /** The count this database accounts for (`knownSolverNonce`). */
  knownNonce: bigint;
  /** Where the rebuild from chain events starts (`ChainConfig.deploymentBlock`); undefined when not configured. */
  fromBlock: bigint | undefined;
}

/**
 * Compares, on every chain, the solver account's transaction count with what the database accounts for. A chain
 * ahead of the database holds fills, refunds or releases the database does not know: the key was used with another
 * database (this one lost, restored from an older backup, or another gateway's). Returns those chains.
 */
export async function findUnknownSolverHistory(
  chains: readonly ChainConfig[],
  clients: ChainClients,
  db: Kysely<Tables>,
  solver: Address,
  onUnreadable?: (chainId: number, error: unknown) => void,
): Promise<UnknownSolverHistory[]> {
  const found = await Promise.all(
    chains.map(async (chain): Promise<UnknownSolverHistory | undefined> => {
      const client = clients.get(chain.id);
      if (client === undefined) throw new Error(`no client for chain ${chain.id}`);
      const [chainNonce, knownNonce] = await Promise.all([
        client
          .getTransactionCount({ address: solver, blockTag: 'latest' })
          .then(BigInt)
          .catch((error: unknown) => {
            // An RPC down at start must not keep the gateway from serving the other chains; its own readiness check
            // reports it. The key watch compares the count once the chain answers (`src/chain/keyWatch.ts`): a
            // database behind it then stops the solver on that chain until a restart rebuilds it.
            onUnreadable?.(chain.id, error);
            return undefined;
          }),
        knownSolverNonce(db, chain.id, solver),
      ]);
      if (chainNonce === undefined) return undefined;
      if (chainNonce <= knownNonce) return undefined;
      const fromBlock = chain.deploymentBlock === undefined ? undefined : BigInt(chain.deploymentBlock);
      return { chainId: chain.id, chainNonce, knownNonce, fromBlock };
    }),
  );
  return found.filter((entry) => entry !== undefined);
}
