import { sql, type Kysely } from 'kysely';
import { normalizeHex, toBigInt, toNumber } from './mappers.js';
import type { Tables } from './tables.js';

/**
 * What the reconciliation job (`src/core/ledger/reconciler.ts`) reads of the database for one chain, in one
 * snapshot (repeatable read), so the ledger and the transactions it is compared with are of one moment.
 */
export interface SolverLedgerSnapshot {
  /** The ledger's `solver` account per currency (lower-case address), signed smallest units. */
  ledger: Map<string, bigint>;
  /** Movement keys of the opening balances written on this chain. */
  openings: Set<string>;
  /** Nonces of the solver's transactions on the chain that the database has not seen mined yet. */
  unminedNonces: bigint[];
  /** Fills mined (their receipt recorded) whose request has not moved to `success` yet: the fill is not in the ledger. */
  unfinishedFills: number;
  /** Deposits forwarded to the solver's wallet (no depository index) seen and not confirmed yet, per currency. */
  incoming: Map<string, bigint>;
}

export async function readSolverLedgerSnapshot(
  db: Kysely<Tables>,
  params: { chainId: number; signer: string },
): Promise<SolverLedgerSnapshot> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const ledgerRows = await trx
        .selectFrom('ledger_entries')
        .select(['currency', sql<string>`sum(amount)::text`.as('amount')])
        .where('account', '=', 'solver')
        .where('chain_id', '=', params.chainId)
        .groupBy('currency')
        .execute();
      const openingRows = await trx
        .selectFrom('ledger_entries')
        .select('movement_key')
        .where('kind', '=', 'opening')
        .where('account', '=', 'solver')
        .where('chain_id', '=', params.chainId)
        .execute();
      const unmined = await trx
        .selectFrom('outgoing_txs')
        .select('nonce')
        .where('chain_id', '=', params.chainId)
        .where('signer', '=', normalizeHex(params.signer))
        .where('status', 'in', ['prepared', 'broadcast'])
        .where('nonce', 'is not', null)
        .execute();
      const fills = await trx
        .selectFrom('outgoing_txs')
        .innerJoin('requests', 'requests.id', 'outgoing_txs.request_id')
        .select(sql<string>`count(*)::text`.as('count'))
        .where('outgoing_txs.chain_id', '=', params.chainId)
        .where('outgoing_txs.kind', '=', 'fill')
        .where('outgoing_txs.status', '=', 'confirmed')
        .where('requests.status', 'in', ['pending', 'submitted'])
        .executeTakeFirst();
      const incomingRows = await trx
        .selectFrom('deposits')
        .select(['token', sql<string>`sum(amount)::text`.as('amount')])
        .where('chain_id', '=', params.chainId)
        .where('deposit_index', 'is', null)
        .where('status', '=', 'seen')
        .groupBy('token')
        .execute();
      return {
        ledger: new Map(ledgerRows.map((row) => [row.currency.toLowerCase(), toBigInt(row.amount)])),
        openings: new Set(openingRows.map((row) => row.movement_key)),
        unminedNonces: unmined.map((row) => toBigInt(row.nonce!)),
        unfinishedFills: Number(fills?.count ?? '0'),
        incoming: new Map(incomingRows.map((row) => [row.token.toLowerCase(), toBigInt(row.amount)])),
      };
    });
}

export interface ReconciliationRecord {
  chainId: number;
  currency: string;
  blockNumber: bigint;
  onChain: bigint;
  ledger: bigint;
  incoming: bigint;
  /** onChain - (ledger + incoming). */
  drift: bigint;
  checkedAt: number;
  /** The last check that found transactions in flight and compared nothing, when after `checkedAt`. */
  inFlightAt: number | null;
}

/** Replaces the latest result of each chain and currency given. */
export async function saveReconciliations(
  db: Kysely<Tables>,
  records: readonly Omit<ReconciliationRecord, 'inFlightAt'>[],
): Promise<void> {
  if (records.length === 0) return;
  await db
    .insertInto('ledger_reconciliations')
    .values(
      records.map((record) => ({
        chain_id: record.chainId,
        currency: normalizeHex(record.currency),
        block_number: record.blockNumber.toString(),
        on_chain: record.onChain.toString(),
        ledger: record.ledger.toString(),
        incoming: record.incoming.toString(),
        drift: record.drift.toString(),
        checked_at: record.checkedAt,
        in_flight_at: null,
      })),
    )
    .onConflict((oc) =>
      oc.columns(['chain_id', 'currency']).doUpdateSet((eb) => ({
        block_number: eb.ref('excluded.block_number'),
        on_chain: eb.ref('excluded.on_chain'),
        ledger: eb.ref('excluded.ledger'),
        incoming: eb.ref('excluded.incoming'),
        drift: eb.ref('excluded.drift'),
        checked_at: eb.ref('excluded.checked_at'),
        in_flight_at: null,
      })),
    )
    .execute();
}

/** Notes a check of `chainId` that found transactions in flight: the previous numbers stay, with this time. */
export async function markReconciliationInFlight(db: Kysely<Tables>, chainId: number, now: number): Promise<void> {
  await db.updateTable('ledger_reconciliations').set({ in_flight_at: now }).where('chain_id', '=', chainId).execute();
}

/** The latest result of every chain and currency, by chain then currency. */
export async function listReconciliations(db: Kysely<Tables>): Promise<ReconciliationRecord[]> {
  const rows = await db
    .selectFrom('ledger_reconciliations')
    .selectAll()
    .orderBy('chain_id')
    .orderBy('currency')
    .execute();
  return rows.map((row) => ({
    chainId: toNumber(row.chain_id),
    currency: row.currency,
    blockNumber: toBigInt(row.block_number),
    onChain: toBigInt(row.on_chain),
    ledger: toBigInt(row.ledger),
    incoming: toBigInt(row.incoming),
    drift: toBigInt(row.drift),
    checkedAt: toNumber(row.checked_at),
    inFlightAt: row.in_flight_at === null ? null : toNumber(row.in_flight_at),
  }));
}
