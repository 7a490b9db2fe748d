import { sql, type Kysely, type Updateable } from 'kysely';
import { toDepositRecord } from './deposits.repository.js';
import type { DepositRecord } from '../records/deposit.js';
import { normalizeHex, toNumber } from './mappers.js';
import type { SettlementItemsTable, Tables } from './tables.js';

/**
 * `pending` until the batch is mined: `settled`, or `failed` (the batch reverted or was refused: an operator looks);
 * `rejected`: the depository refuses this deposit's release (`SettlementRejection`), found out before its batch was
 * sent or after the batch reverted; it is never retried, and the rest of its batch goes on without it. An item the
 * chain shows released already is `settled` when the release went to the solver, and `rejected` `ALREADY_RELEASED`
 * (not the solver's to settle) when it went to anyone else; either way with the release's transaction
 * (`release_tx_hash`).
 */
export type SettlementStatus = 'pending' | 'settled' | 'failed' | 'rejected';

/**
 * Why a deposit's release is refused: `ALREADY_RELEASED` (released by another transaction: an operator, a second
 * database with the same key, a run whose database was lost; with `release_tx_hash` when the chain shows it released
 * to someone else than the solver, not the solver's to settle), `UNKNOWN_DEPOSIT` (the depository holds nothing at that index), `REMOVED_BY_REORG`
 * (the same, for a deposit whose block a reorg took away), `DEPOSIT_MISMATCH` (another deposit holds that index:
 * a reorg that gave it to someone else), `REVERTED` (any other revert).
 */
export type SettlementRejection =
  'ALREADY_RELEASED' | 'UNKNOWN_DEPOSIT' | 'REMOVED_BY_REORG' | 'DEPOSIT_MISMATCH' | 'REVERTED';

/**
 * Deposits of one origin chain that are due to the solver and in no batch yet: held by the depository
 * (`deposit_index` set), the very deposit that paid its request (`requests.deposit_id`: two deposits of one
 * transaction share its hash, and only one of them paid), and that request `success`. A refunded request, a double
 * spend or an orphan is never among them. Oldest first.
 */
export async function listSettleableDeposits(
  db: Kysely<Tables>,
  params: { chainId: number; limit: number },
): Promise<DepositRecord[]> {
  const rows = await db
    .selectFrom('deposits as d')
    .innerJoin('requests as r', 'r.id', 'd.request_id')
    .selectAll('d')
    .where('d.chain_id', '=', params.chainId)
    .where('d.status', '=', 'consumed')
    .where('d.deposit_index', 'is not', null)
    .where('r.status', '=', 'success')
    .whereRef('r.deposit_id', '=', 'd.id')
    .where((eb) =>
      eb.not(
        eb.exists(eb.selectFrom('settlement_items as s').select('s.deposit_id').whereRef('s.deposit_id', '=', 'd.id')),
      ),
    )
    .orderBy('d.id', 'asc')
    .limit(params.limit)
    .execute();
  return rows.map(toDepositRecord);
}

/**
 * Puts deposits into a new batch, all or none (one statement): a deposit already in a batch is a unique
 * violation, so two instances can never put one deposit in two batches.
 */
export async function insertSettlementBatch(
  db: Kysely<Tables>,
  params: { chainId: number; batchKey: string; depositIds: readonly number[]; now: number },
): Promise<void> {
  if (params.depositIds.length === 0) return;
  await db
    .insertInto('settlement_items')
    .values(
      params.depositIds.map((id) => ({
        deposit_id: id,
        batch_key: normalizeHex(params.batchKey),
        chain_id: params.chainId,
        status: 'pending',
        created_at: params.now,
        updated_at: params.now,
      })),
    )
    .execute();
}

export interface SettlementBatch {
  batchKey: string;
  chainId: number;
  deposits: DepositRecord[];
}

/** Batches of one chain still `pending` (started, not known mined), with their deposits in order. */
export async function listPendingSettlementBatches(db: Kysely<Tables>, chainId: number): Promise<SettlementBatch[]> {
  const rows = await db
    .selectFrom('settlement_items as s')
    .innerJoin('deposits as d', 'd.id', 's.deposit_id')
    .selectAll('d')
    .select('s.batch_key')
    .where('s.chain_id', '=', chainId)
    .where('s.status', '=', 'pending')
    .orderBy('s.batch_key')
    .orderBy('d.id')
    .execute();
  const batches = new Map<string, SettlementBatch>();
  for (const { batch_key, ...row } of rows) {
    let batch = batches.get(batch_key);
    if (batch === undefined) batches.set(batch_key, (batch = { batchKey: batch_key, chainId, deposits: [] }));
    batch.deposits.push(toDepositRecord(row));
  }
  return [...batches.values()];
}

/** One deposit set aside from its batch (`rejectSettlementItems`). */
export interface SettlementItemRejection {
  depositId: number;
  reason: SettlementRejection;
  /** The decoded revert (and, for a release read from the chain, to whom and by which transaction). */
  detail: string;
  /** The transaction that released the deposit to someone else, when the chain shows it. */
  releaseTxHash?: string | undefined;
}

/**
 * Sets deposits of a batch aside as `rejected`, each with its reason, if still `pending`. Returns the deposit ids
 * that moved: a second call (a retry, another instance) moves none, so each rejection is reported once.
 */
export async function rejectSettlementItems(
  db: Kysely<Tables>,
  params: { batchKey: string; items: readonly SettlementItemRejection[]; now: number },
): Promise<number[]> {
  return movePendingItems(db, params.batchKey, params.items, (item) => ({
    status: 'rejected',
    reason: item.reason,
    detail: item.detail,
    release_tx_hash: item.releaseTxHash === undefined ? null : normalizeHex(item.releaseTxHash),
    updated_at: params.now,
  }));
}

/** One deposit of a batch that the chain shows released to the solver already, by `releaseTxHash`. */
export interface SettlementItemReleased {
  depositId: number;
  releaseTxHash: string;
}

/**
 * Records deposits of a batch as `settled` by the transaction the chain shows released them to the solver (not the
 * batch's own), if still `pending`. Returns the deposit ids that moved, so the caller books and reports each once.
 */
export async function settleSettlementItemsFromChain(
  db: Kysely<Tables>,
  params: { batchKey: string; items: readonly SettlementItemReleased[]; now: number },
): Promise<number[]> {
  return movePendingItems(db, params.batchKey, params.items, (item) => ({
    status: 'settled',
    release_tx_hash: normalizeHex(item.releaseTxHash),
    updated_at: params.now,
  }));
}

/**
 * Moves each item of a batch that is still `pending` as `changes` says; the deposit ids that moved (a second call,
 * a retry or another instance, moves none).
 */
async function movePendingItems<Item extends { depositId: number }>(
  db: Kysely<Tables>,
  batchKey: string,
  items: readonly Item[],
  changes: (item: Item) => Updateable<SettlementItemsTable>,
): Promise<number[]> {
  const moved: number[] = [];
  for (const item of items) {
    const row = await db
      .updateTable('settlement_items')
      .set(changes(item))
      .where('deposit_id', '=', item.depositId)
      .where('batch_key', '=', normalizeHex(batchKey))
      .where('status', '=', 'pending')
      .returning('deposit_id')
      .executeTakeFirst();
    if (row !== undefined) moved.push(item.depositId);
  }
  return moved;
}

/**
 * Moves the still `pending` deposits of a batch whose transaction reverted into a new batch, so they are released
 * by a transaction of their own (a batch's key names one live transaction, and that one is spent).
 */
export async function rebatchSettlementItems(
  db: Kysely<Tables>,
  params: { fromBatchKey: string; toBatchKey: string; depositIds: readonly number[]; now: number },
): Promise<void> {
  if (params.depositIds.length === 0) return;
  await db
    .updateTable('settlement_items')
    .set({ batch_key: normalizeHex(params.toBatchKey), updated_at: params.now })
    .where('batch_key', '=', normalizeHex(params.fromBatchKey))
    .where('deposit_id', 'in', params.depositIds)
    .where('status', '=', 'pending')
    .execute();
}

/** A deposit whose release was refused, as `listRejectedSettlementItems` shows it to an operator. */
export interface RejectedSettlementItem {
  depositId: number;
  chainId: number;
  batchKey: string;
  reason: SettlementRejection;
  detail: string | null;
  /** The transaction that released the deposit to someone else, when the chain shows it. */
  releaseTxHash: string | null;
  updatedAt: number;
}

/** Rejected settlement items, of one chain or all, newest first. */
export async function listRejectedSettlementItems(
  db: Kysely<Tables>,
  params: { chainId?: number } = {},
): Promise<RejectedSettlementItem[]> {
  let query = db.selectFrom('settlement_items').selectAll().where('status', '=', 'rejected');
  if (params.chainId !== undefined) query = query.where('chain_id', '=', params.chainId);
  const rows = await query.orderBy('updated_at', 'desc').orderBy('deposit_id', 'desc').execute();
  return rows.map((row) => ({
    depositId: toNumber(row.deposit_id),
    chainId: toNumber(row.chain_id),
    batchKey: row.batch_key,
    reason: row.reason as SettlementRejection,
    detail: row.detail,
    releaseTxHash: row.release_tx_hash,
    updatedAt: toNumber(row.updated_at),
  }));
}

/** Ends a pending batch. Returns how many deposits moved (zero when it was no longer pending). */
export async function finishSettlementBatch(
  db: Kysely<Tables>,
  params: { batchKey: string; status: Exclude<SettlementStatus, 'pending'>; now: number },
): Promise<number> {
  const result = await db
    .updateTable('settlement_items')
    .set({ status: params.status, updated_at: params.now })
    .where('batch_key', '=', normalizeHex(params.batchKey))
    .where('status', '=', 'pending')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Per chain and currency: deposits due to the solver that are not settled yet (no batch, or a pending one). */
export async function sumPendingSettlement(
  db: Kysely<Tables>,
): Promise<Array<{ chainId: number; currency: string; amount: bigint }>> {
  const rows = await db
    .selectFrom('deposits as d')
    .innerJoin('requests as r', 'r.id', 'd.request_id')
    .leftJoin('settlement_items as s', 's.deposit_id', 'd.id')
    .select(['d.chain_id', 'd.token', sql<string>`sum(d.amount)::text`.as('amount')])
    .where('d.status', '=', 'consumed')
    .where('d.deposit_index', 'is not', null)
    .where('r.status', '=', 'success')
    .whereRef('r.deposit_id', '=', 'd.id')
    .where((eb) => eb.or([eb('s.status', 'is', null), eb('s.status', '=', 'pending')]))
    .groupBy(['d.chain_id', 'd.token'])
    .execute();
  return rows.map((row) => ({ chainId: toNumber(row.chain_id), currency: row.token, amount: BigInt(row.amount) }));
}
