import { sql, type Kysely } from 'kysely';
import { normalizeHex, toBigInt, toNumber } from './mappers.js';
import type { Tables } from './tables.js';
import type { ReconciliationRecord } from '../records/reconciliation.js';
import type { RequestStatus } from '../records/requestStatus.js';

/**
 * What the reconciliation job (`src/core/reconciliation/reconciler.ts`) reads of the database for one chain, in one
 * snapshot (one statement), so the ledger and the transactions it is compared with are of one moment.
 */
export interface SolverLedgerSnapshot {
  /** The ledger's `solver` account per currency (lower-case address), signed smallest units. */
  ledger: Map<string, bigint>;
  /** Movement keys of the opening balances written on this chain. */
  openings: Set<string>;
  /** Nonces of the solver's transactions on the chain that the database has not seen mined yet. */
  unminedNonces: bigint[];
  /**
   * Fills mined (their receipt recorded) whose request is still in one of `awaitingSuccess` (it has not moved to
   * `success` yet): the fill is not in the ledger.
   */
  unfinishedFills: number;
  /** Deposits forwarded to the solver's wallet (no depository index) seen and not confirmed yet, per currency. */
  incoming: Map<string, bigint>;
}

export async function readSolverLedgerSnapshot(
  db: Kysely<Tables>,
  params: { chainId: number; signer: string; awaitingSuccess: readonly RequestStatus[] },
): Promise<SolverLedgerSnapshot> {
  // One statement, so one snapshot: it was five in a repeatable-read transaction, seven round trips to the
  // database every check (every 10 s per chain on the devnet).
  const { chainId } = params;
  const { rows } = await sql<{
    ledger: Array<{ currency: string; amount: string }>;
    openings: string[];
    unmined: string[];
    fills: string;
    incoming: Array<{ token: string; amount: string }>;
  }>`
    select
      (select coalesce(json_agg(json_build_object('currency', currency, 'amount', amount)), '[]'::json)
         from (select currency, sum(amount)::text as amount from ledger_entries
               where account = 'solver' and chain_id = ${chainId} group by currency) l) as ledger,
      (select coalesce(json_agg(movement_key), '[]'::json) from ledger_entries
         where kind = 'opening' and account = 'solver' and chain_id = ${chainId}) as openings,
      (select coalesce(json_agg(nonce::text), '[]'::json) from outgoing_txs
         where chain_id = ${chainId} and signer = ${normalizeHex(params.signer)}
           and status in ('prepared', 'broadcast') and nonce is not null) as unmined,
      (select count(*)::text from outgoing_txs o join requests r on r.id = o.request_id
         where o.chain_id = ${chainId} and o.kind = 'fill' and o.status = 'confirmed'
           and r.status = any(${[...params.awaitingSuccess]}::text[])) as fills,
      (select coalesce(json_agg(json_build_object('token', token, 'amount', amount)), '[]'::json)
         from (select token, sum(amount)::text as amount from deposits
               where chain_id = ${chainId} and deposit_index is null and status = 'seen' group by token) i) as incoming
  `.execute(db);
  const row = rows[0]!;
  return {
    ledger: new Map(row.ledger.map((entry) => [entry.currency.toLowerCase(), toBigInt(entry.amount)])),
    openings: new Set(row.openings),
    unminedNonces: row.unmined.map((nonce) => toBigInt(nonce)),
    unfinishedFills: Number(row.fills),
    incoming: new Map(row.incoming.map((entry) => [entry.token.toLowerCase(), toBigInt(entry.amount)])),
  };
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
