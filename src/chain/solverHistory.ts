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

/** A chain where transactions of the solver key wait in the node's pool, not mined, that this database never recorded. */
export interface UnknownInFlight {
  chainId: number;
  /** The solver account's mined transaction count (at `latest`). */
  mined: bigint;
  /** Its count with the node's pool (at `pending`). */
  pending: bigint;
  /** The count this database accounts for (`knownSolverNonce`). */
  knownNonce: bigint;
}

/**
 * Compares, on every chain, the solver account's pending transaction count with its mined count and with what the
 * database accounts for. A chain whose pending count is ahead of both holds transactions of the key in flight that
 * this database never recorded: a fill or a refund broadcast by a run whose database was lost, or restored from a
 * backup older than it. Until they are mined (or dropped) the chain cannot say what they did, and a deposit decided
 * meanwhile would be filled a second time or refunded although its fill is about to land. Returns those chains; a chain
 * that cannot be read is left to `findUnknownSolverHistory` and the key watch.
 */
export async function findUnknownInFlight(
  chains: readonly ChainConfig[],
  clients: ChainClients,
  db: Kysely<Tables>,
  solver: Address,
): Promise<UnknownInFlight[]> {
  const found = await Promise.all(
    chains.map(async (chain): Promise<UnknownInFlight | undefined> => {
      const client = clients.get(chain.id);
      if (client === undefined) throw new Error(`no client for chain ${chain.id}`);
      const counts = await Promise.all([
        client.getTransactionCount({ address: solver, blockTag: 'latest' }),
        client.getTransactionCount({ address: solver, blockTag: 'pending' }),
      ]).catch(() => undefined);
      if (counts === undefined) return undefined;
      const [mined, pending] = counts.map(BigInt) as [bigint, bigint];
      const knownNonce = await knownSolverNonce(db, chain.id, solver);
      if (pending <= mined || pending <= knownNonce) return undefined;
      return { chainId: chain.id, mined, pending, knownNonce };
    }),
  );
  return found.filter((entry) => entry !== undefined);
}
