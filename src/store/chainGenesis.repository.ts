import type { Kysely } from 'kysely';
import { toBigInt } from './mappers.js';
import { failRequests } from './requests.repository.js';
import type { RequestStatus } from '../records/requestStatus.js';
import type { Tables } from './tables.js';

/** The genesis block hash recorded for `chainId`, or undefined before the gateway first followed it. */
export async function getGenesisHash(db: Kysely<Tables>, chainId: number): Promise<string | undefined> {
  const row = await db
    .selectFrom('chain_genesis')
    .select('genesis_hash')
    .where('chain_id', '=', chainId)
    .executeTakeFirst();
  return row?.genesis_hash;
}

/** Record (or replace, after a reset) the genesis block hash of `chainId`. */
export async function setGenesisHash(
  db: Kysely<Tables>,
  chainId: number,
  genesisHash: string,
  now: number,
): Promise<void> {
  await db
    .insertInto('chain_genesis')
    .values({ chain_id: chainId, genesis_hash: genesisHash.toLowerCase(), recorded_at: now })
    .onConflict((oc) =>
      oc.column('chain_id').doUpdateSet((eb) => ({
        genesis_hash: eb.ref('excluded.genesis_hash'),
        recorded_at: eb.ref('excluded.recorded_at'),
      })),
    )
    .execute();
}

/** The highest block any watcher's cursor reached on `chainId`; undefined when none has run there. */
export async function highestCursorBlock(db: Kysely<Tables>, chainId: number): Promise<bigint | undefined> {
  const row = await db
    .selectFrom('chain_cursors')
    .select((eb) => eb.fn.max('block_number').as('block'))
    .where('chain_id', '=', chainId)
    .executeTakeFirst();
  return row?.block == null ? undefined : toBigInt(row.block);
}

/** Statuses from which a request can still move: the ones a reset must end, so no stale record is acted on. */
const openStatuses: readonly RequestStatus[] = ['waiting', 'depositing', 'pending', 'submitted'];

/**
 * The `failReason` of the requests a chain reset ended: the reference's enumeration has no value for "the chain
 * was replaced", so they answer `UNKNOWN` (the warning in the log names the chain).
 */
export const chainResetFailReason = 'UNKNOWN';

/**
 * Open requests a reset fails per statement (`failRequests`). One statement a request took ~3 ms each on PGlite:
 * a devnet restarted on a saved database after a benchmark's 36,713 quotes started only after two minutes.
 */
const RESET_FAILS_PER_STATEMENT = 500;

export interface ChainResetResult {
  /** Requests of the chain (as origin or destination) that were still open and are now `failure`. */
  failedRequests: number;
  deposits: number;
  outgoingTxs: number;
  /** Transfers to deposit addresses seen on the old chain (their sweeps are among `outgoingTxs`). */
  depositAddressTransfers: number;
  /** App-fee claims authorized on the chain and not paid, now `failed` (their value is the wallet's again). */
  failedClaims: number;
}

/**
 * Forget what the database knows of `chainId`'s blocks, for a chain that is not the one it was recorded on (a new
 * devnet): its watchers' cursors (the deposit-address watcher's too), its deposits (and their settlement items),
 * the transfers seen at its deposit addresses, the solver's transactions (sweeps included) and so its nonces there;
 * the deposit addresses themselves stay (they belong to requests of the history); its app-fee claims not paid yet
 * (deleted when unsigned, failed when authorized); every request of the chain still open becomes `failure`
 * (`UNKNOWN`), with its event,
 * so nothing is ever filled or refunded from a record of the old chain. Finished requests, their events and the
 * ledger stay as history (the reconciliation takes a new opening balance for the new genesis). One transaction: all of it or none.
 */
export async function resetChainState(
  db: Kysely<Tables>,
  chainId: number,
  genesisHash: string,
  now: number,
): Promise<ChainResetResult> {
  return db.transaction().execute(async (trx) => {
    const open = await trx
      .selectFrom('requests')
      .select('id')
      .where((eb) => eb.or([eb('origin_chain_id', '=', chainId), eb('destination_chain_id', '=', chainId)]))
      .where('status', 'in', openStatuses)
      .execute();
    let failedRequests = 0;
    for (let start = 0; start < open.length; start += RESET_FAILS_PER_STATEMENT) {
      const ids = open.slice(start, start + RESET_FAILS_PER_STATEMENT).map((row) => row.id);
      const failed = await failRequests(trx, ids, {
        fromStatus: openStatuses,
        failReason: chainResetFailReason,
        now,
      });
      failedRequests += failed.filter((request) => request !== null).length;
    }
    await trx
      .deleteFrom('settlement_items')
      .where((eb) =>
        eb.or([
          eb('chain_id', '=', chainId),
          eb('deposit_id', 'in', eb.selectFrom('deposits').select('id').where('chain_id', '=', chainId)),
        ]),
      )
      .execute();
    // Claims paid out on the chain: one not signed yet is deleted (it holds nothing); one authorized and not paid
    // fails, so its value returns to the wallet's balance (its payout transaction, below, is forgotten). Paid
    // claims stay as history, as the ledger does.
    await trx
      .deleteFrom('app_fee_claims')
      .where('chain_id', '=', chainId)
      .where('status', '=', 'authorizing')
      .execute();
    const claims = await trx
      .updateTable('app_fee_claims')
      .set({ status: 'failed', tx_hash: null, updated_at: now })
      .where('chain_id', '=', chainId)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    const deposits = await trx.deleteFrom('deposits').where('chain_id', '=', chainId).executeTakeFirst();
    const outgoing = await trx.deleteFrom('outgoing_txs').where('chain_id', '=', chainId).executeTakeFirst();
    const transfers = await trx
      .deleteFrom('deposit_address_transfers')
      .where('chain_id', '=', chainId)
      .executeTakeFirst();
    await trx.updateTable('deposit_addresses').set({ reindexed_at: null }).where('chain_id', '=', chainId).execute();
    await trx.deleteFrom('chain_cursors').where('chain_id', '=', chainId).execute();
    // The reconciliation's numbers were the old chain's; the new genesis opens the ledger there again.
    await trx.deleteFrom('ledger_reconciliations').where('chain_id', '=', chainId).execute();
    await setGenesisHash(trx, chainId, genesisHash, now);
    return {
      failedRequests,
      deposits: Number(deposits.numDeletedRows),
      outgoingTxs: Number(outgoing.numDeletedRows),
      depositAddressTransfers: Number(transfers.numDeletedRows),
      failedClaims: Number(claims.numUpdatedRows),
    };
  });
}
