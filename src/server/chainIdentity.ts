import type { Kysely } from 'kysely';
import type { ChainClients } from '../chain/clients.js';
import type { ChainConfig } from '../core/chains/types.js';
import type { Logger } from '../core/logger.js';
import {
  getGenesisHash,
  highestCursorBlock,
  resetChainState,
  setGenesisHash,
} from '../store/chainGenesis.repository.js';
import type { Tables } from '../store/tables.js';

/** A configured chain is not the chain the database recorded: the gateway refuses to start on it. */
export class ChainIdentityError extends Error {
  override readonly name = 'ChainIdentityError';
}

export interface CheckChainIdentitiesParameters {
  db: Kysely<Tables>;
  chains: readonly ChainConfig[];
  clients: ChainClients;
  /** The embedded devnet: a chain that changed is reset instead of refused. */
  devnet: boolean;
  log: Pick<Logger, 'warn'>;
  now: () => number;
}

/**
 * Before the watchers and senders run: is each configured chain the chain the database followed? It is not when
 * its genesis block differs from the recorded one, or when its head is below a watcher's cursor (a database from
 * before genesis hashes were recorded). On the devnet (a new devnet on a saved database) that chain's state is
 * reset (`resetChainState`) with a warning; on a configured network the gateway refuses to start, naming the
 * chain: the database belongs to another network, and only the operator can say which of the two is wrong.
 * A chain seen for the first time has its genesis recorded.
 */
export async function checkChainIdentities(params: CheckChainIdentitiesParameters): Promise<void> {
  for (const chain of params.chains) {
    const client = params.clients.get(chain.id);
    if (client === undefined) continue;
    let genesis: { hash: string };
    let head: bigint;
    try {
      [genesis, head] = await Promise.all([client.getBlock({ blockNumber: 0n }), client.getBlockNumber()]);
    } catch (error) {
      // An unreachable chain does not stop the gateway (readiness reports it); it is checked at the next start.
      params.log.warn(
        { err: error, chainId: chain.id },
        `chain ${chain.id} (${chain.name}): could not read its genesis block to check it is the chain the database followed`,
      );
      continue;
    }
    const genesisHash = genesis.hash.toLowerCase();
    const [recorded, cursor] = await Promise.all([
      getGenesisHash(params.db, chain.id),
      highestCursorBlock(params.db, chain.id),
    ]);
    const reason =
      recorded !== undefined && recorded !== genesisHash
        ? `its genesis block is ${genesisHash}, the database recorded ${recorded}`
        : cursor !== undefined && head < cursor
          ? `its head is block ${head}, below block ${cursor} where the database's watchers stopped`
          : null;
    if (reason === null) {
      if (recorded === undefined) await setGenesisHash(params.db, chain.id, genesisHash, params.now());
      continue;
    }
    if (!params.devnet) {
      throw new ChainIdentityError(
        `chain ${chain.id} (${chain.name}) is not the chain this database followed: ${reason}. ` +
          `Point the gateway at the database of this network (DATABASE_URL / GATEWAY_DATA_DIR / GATEWAY_DATABASE_SCHEMA), ` +
          `or at its RPC (httpRpcUrl / wsRpcUrl of chain ${chain.id}) if the RPC is the wrong one; ` +
          `to start over on this chain, use an empty database.`,
      );
    }
    const result = await resetChainState(params.db, chain.id, genesisHash, params.now());
    params.log.warn(
      { chainId: chain.id, chain: chain.name, ...result },
      `chain ${chain.id} (${chain.name}) is a new devnet chain (${reason}): its cursors, deposits, deposit-address transfers and solver transactions were reset, ${result.failedRequests} open request(s) and ${result.failedClaims} unpaid app-fee claim(s) of it failed`,
    );
  }
}
