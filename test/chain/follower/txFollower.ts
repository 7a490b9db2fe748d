/**
 * A follower of every transaction of a chain, recorded in a table of the test's own (`follower_test_txs`): the
 * smallest set of hooks that exercises the chain follower (`src/chain/follower/`) on its own, without the deposit
 * watchers' contracts. Used by `follower.test.ts` in the test's process and by `followerProcess.ts` in a child
 * process that the test kills.
 */
import { sql, type Kysely } from 'kysely';
import type { PublicClient } from 'viem';
import { createChainFollower, type ChainFollower } from '../../../src/chain/follower/follower.js';
import { holdsNoTransaction } from '../../../src/chain/logsBloom.js';
import type { Logger } from '../../../src/core/logger.js';
import type { Tables } from '../../../src/store/tables.js';

export const TX_FOLLOWER_CURSOR = 'follower-test';

export interface FollowedTx {
  txHash: string;
  blockNumber: bigint;
  blockHash: string;
  status: 'seen' | 'removed' | 'confirmed';
}

export async function createTxTable(db: Kysely<Tables>): Promise<void> {
  await sql`create table if not exists follower_test_txs (
    tx_hash text primary key, block_number numeric(78, 0) not null, block_hash text not null, status text not null
  )`.execute(db);
}

interface Row {
  tx_hash: string;
  block_number: string;
  block_hash: string;
  status: FollowedTx['status'];
}

const toTx = (row: Row): FollowedTx => ({
  txHash: row.tx_hash,
  blockNumber: BigInt(row.block_number),
  blockHash: row.block_hash,
  status: row.status,
});

export async function listTxs(db: Kysely<Tables>): Promise<FollowedTx[]> {
  const { rows } = await sql<Row>`select * from follower_test_txs order by block_number, tx_hash`.execute(db);
  return rows.map(toTx);
}

export interface CreateTxFollowerParameters {
  client: PublicClient;
  db: Kysely<Tables>;
  log: Logger;
  chainId: number;
  confirmations: number;
  /** Each transaction confirmed, once its conditional update committed. */
  onConfirmed: (tx: FollowedTx) => void;
  onRewind?: (toBlock: bigint) => void;
  maxBlockRange?: bigint;
  reorgWindow?: bigint;
  pollIntervalMs?: number;
}

export function createTxFollower(params: CreateTxFollowerParameters): ChainFollower<FollowedTx> {
  const { client, db } = params;
  return createChainFollower<Omit<FollowedTx, 'status'>, FollowedTx>({
    chainId: params.chainId,
    blockTime: 1,
    confirmations: params.confirmations,
    client,
    db,
    log: params.log,
    now: Date.now,
    cursorName: TX_FOLLOWER_CURSOR,
    label: 'transaction follower',
    context: { chainId: params.chainId },
    maxBlockRange: params.maxBlockRange ?? 100n,
    reorgWindow: params.reorgWindow,
    pollIntervalMs: params.pollIntervalMs ?? 20,
    hooks: {
      async read({ fromBlock, toBlock, header }) {
        if (header !== undefined && holdsNoTransaction(header)) return [];
        const found: Omit<FollowedTx, 'status'>[] = [];
        for (let number = fromBlock; number <= toBlock; number++) {
          const block = await client.getBlock({ blockNumber: number });
          for (const hash of block.transactions)
            found.push({ txHash: hash, blockNumber: number, blockHash: block.hash.toLowerCase() });
        }
        return found;
      },
      async record(trx, found) {
        for (const tx of found)
          // A transaction known in another block (reorged and mined again) is `seen` in its new block.
          await sql`insert into follower_test_txs values (${tx.txHash}, ${tx.blockNumber.toString()}, ${tx.blockHash}, 'seen')
            on conflict (tx_hash) do update set block_number = excluded.block_number, block_hash = excluded.block_hash,
            status = 'seen' where follower_test_txs.status = 'removed'`.execute(trx);
        return found.map((tx) => tx.blockNumber);
      },
      async listSeen(maxBlockNumber) {
        const { rows } = await sql<Row>`select * from follower_test_txs where status = 'seen'
          and (${maxBlockNumber?.toString() ?? null}::numeric is null or block_number <= ${maxBlockNumber?.toString() ?? null}::numeric)
          order by block_number, tx_hash`.execute(db);
        return rows.map(toTx);
      },
      async remove(tx) {
        const { rows } = await sql<Row>`update follower_test_txs set status = 'removed'
          where tx_hash = ${tx.txHash} and status = 'seen' and block_hash = ${tx.blockHash} returning *`.execute(db);
        return rows[0] === undefined ? null : toTx(rows[0]);
      },
      async confirm(records) {
        const confirmed: FollowedTx[] = [];
        for (const tx of records) {
          const { rows } = await sql<Row>`update follower_test_txs set status = 'confirmed'
            where tx_hash = ${tx.txHash} and status = 'seen' and block_hash = ${tx.blockHash} returning *`.execute(db);
          if (rows[0] === undefined) continue;
          confirmed.push(toTx(rows[0]));
          params.onConfirmed(toTx(rows[0]));
        }
        return confirmed;
      },
      onRewind: params.onRewind,
    },
  });
}
