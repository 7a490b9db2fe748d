import type { Kysely, Selectable } from 'kysely';
import { toBigInt, toNumber } from './mappers.js';
import type { ChainCursorsTable, Tables } from './tables.js';

/** Where a named watcher stopped on a chain: the last block it fully processed. */
export interface ChainCursor {
  chainId: number;
  /** What reads the chain, e.g. `deposits`; several watchers can follow one chain independently. */
  name: string;
  blockNumber: bigint;
  /** Compared with the chain on restart to detect that the block was reorged away. */
  blockHash: string;
  updatedAt: number;
}

/** The cursor of `name` on `chainId`, or undefined before the watcher's first run. */
export async function getCursor(db: Kysely<Tables>, chainId: number, name: string): Promise<ChainCursor | undefined> {
  const row = await db
    .selectFrom('chain_cursors')
    .selectAll()
    .where('chain_id', '=', chainId)
    .where('name', '=', name)
    .executeTakeFirst();
  return row === undefined ? undefined : toChainCursor(row);
}

export interface SetCursorParameters {
  chainId: number;
  name: string;
  blockNumber: bigint;
  blockHash: string;
  now: number;
}

/**
 * Create or move a cursor. It may move backwards: that is how a watcher rewinds after a reorg. Call it in the
 * transaction that stores what was read up to that block, so a crash never skips a block.
 */
export async function setCursor(db: Kysely<Tables>, params: SetCursorParameters): Promise<ChainCursor> {
  const row = await db
    .insertInto('chain_cursors')
    .values({
      chain_id: params.chainId,
      name: params.name,
      block_number: params.blockNumber.toString(),
      block_hash: params.blockHash.toLowerCase(),
      updated_at: params.now,
    })
    .onConflict((oc) =>
      oc.columns(['chain_id', 'name']).doUpdateSet((eb) => ({
        block_number: eb.ref('excluded.block_number'),
        block_hash: eb.ref('excluded.block_hash'),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
  return toChainCursor(row);
}

function toChainCursor(row: Selectable<ChainCursorsTable>): ChainCursor {
  return {
    chainId: toNumber(row.chain_id),
    name: row.name,
    blockNumber: toBigInt(row.block_number),
    blockHash: row.block_hash,
    updatedAt: toNumber(row.updated_at),
  };
}
