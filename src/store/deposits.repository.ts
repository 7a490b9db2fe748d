import { sql, type Kysely, type Selectable } from 'kysely';
import type { LedgerMovement } from './ledgerMovements.js';
import { insertLedgerMovements, ledgerEntryRows } from './ledger.repository.js';
import { getRequest, getRequests } from './requests.repository.js';
import type { RequestRecord } from '../records/request.js';
import { groupByRequest, normalizeHex, toBigInt, toNumber, toUint256 } from './mappers.js';
import type { DepositsTable, Tables } from './tables.js';
import type { DepositRecord, DepositStatus } from '../records/deposit.js';

export interface InsertDepositParameters {
  chainId: number;
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
  blockHash: string;
  requestId: string;
  depositor: string;
  token: string;
  amount: bigint;
  depositIndex?: bigint | null;
  /** The transaction's `from`. */
  sender?: string | null;
  /** The solver's transaction that carried it, when the solver sent it. */
  carrier?: string | null;
  status?: DepositStatus;
  now: number;
}

/**
 * Record a deposit log. Re-reading a range is harmless: when the log (chain, tx, log index) is already
 * recorded, the stored row is returned unchanged with `inserted: false`.
 */
export async function insertDeposit(
  db: Kysely<Tables>,
  params: InsertDepositParameters,
): Promise<{ deposit: DepositRecord; inserted: boolean }> {
  const key = { chainId: params.chainId, txHash: normalizeHex(params.txHash), logIndex: params.logIndex };
  const row = await db
    .insertInto('deposits')
    .values(depositRow(params))
    .onConflict((oc) => oc.columns(['chain_id', 'tx_hash', 'log_index']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (row !== undefined) return { deposit: toDepositRecord(row), inserted: true };
  const existing = await getDepositByLog(db, key.chainId, key.txHash, key.logIndex);
  if (existing === undefined) throw new Error('Deposit conflicted on insert but cannot be read back');
  return { deposit: existing, inserted: false };
}

/**
 * `insertDeposit` for several logs in one statement: the ones not recorded yet are inserted (`inserted: true`);
 * each one already recorded is read back as `insertDeposit` does. Results in the order given.
 */
export async function insertDeposits(
  db: Kysely<Tables>,
  params: readonly InsertDepositParameters[],
): Promise<Array<{ deposit: DepositRecord; inserted: boolean }>> {
  if (params.length === 0) return [];
  if (params.length === 1) return [await insertDeposit(db, params[0]!)];
  const rows = [];
  // Chunks keep a long backfill range within PostgreSQL's 65,535 parameters per statement (14 per row).
  for (let start = 0; start < params.length; start += INSERT_BATCH) {
    rows.push(
      ...(await db
        .insertInto('deposits')
        .values(params.slice(start, start + INSERT_BATCH).map(depositRow))
        .onConflict((oc) => oc.columns(['chain_id', 'tx_hash', 'log_index']).doNothing())
        .returningAll()
        .execute()),
    );
  }
  const fresh = new Map(
    rows.map(toDepositRecord).map((deposit) => [logKey(deposit.chainId, deposit.txHash, deposit.logIndex), deposit]),
  );
  const results: Array<{ deposit: DepositRecord; inserted: boolean }> = [];
  for (const one of params) {
    const deposit = fresh.get(logKey(one.chainId, normalizeHex(one.txHash), one.logIndex));
    results.push(deposit === undefined ? await insertDeposit(db, one) : { deposit, inserted: true });
  }
  return results;
}

/** Most deposits one `insertDeposits` statement inserts. */
const INSERT_BATCH = 500;

const logKey = (chainId: number, txHash: string, logIndex: number): string => `${chainId}:${txHash}:${logIndex}`;

function depositRow(params: InsertDepositParameters) {
  return {
    chain_id: params.chainId,
    tx_hash: normalizeHex(params.txHash),
    log_index: params.logIndex,
    block_number: params.blockNumber.toString(),
    block_hash: normalizeHex(params.blockHash),
    request_id: normalizeHex(params.requestId),
    depositor: normalizeHex(params.depositor),
    token: normalizeHex(params.token),
    amount: toUint256(params.amount),
    deposit_index: params.depositIndex == null ? null : params.depositIndex.toString(),
    sender: params.sender == null ? null : normalizeHex(params.sender),
    carrier: params.carrier ?? null,
    status: params.status ?? 'seen',
    created_at: params.now,
    updated_at: params.now,
  };
}

export async function getDeposit(db: Kysely<Tables>, id: number): Promise<DepositRecord | undefined> {
  const row = await db.selectFrom('deposits').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toDepositRecord(row);
}

/** The deposit recorded for one log, if any. */
async function getDepositByLog(
  db: Kysely<Tables>,
  chainId: number,
  txHash: string,
  logIndex: number,
): Promise<DepositRecord | undefined> {
  const row = await db
    .selectFrom('deposits')
    .selectAll()
    .where('chain_id', '=', chainId)
    .where('tx_hash', '=', normalizeHex(txHash))
    .where('log_index', '=', logIndex)
    .executeTakeFirst();
  return row === undefined ? undefined : toDepositRecord(row);
}

/** Every deposit that carried `requestId`, oldest first: more than one live deposit is a double spend. */
export async function listDepositsForRequest(db: Kysely<Tables>, requestId: string): Promise<DepositRecord[]> {
  const rows = await db
    .selectFrom('deposits')
    .selectAll()
    .where('request_id', '=', normalizeHex(requestId))
    .orderBy('id', 'asc')
    .execute();
  return rows.map(toDepositRecord);
}

/**
 * The ledger movement of a deposit and its request (undefined: none such), the core's rule
 * (`src/core/ledger/movements.ts`, `depositRules`): `received` when it is confirmed, `lost` when a reorg took a used
 * one off the chain. The store reads the request in the change's transaction and writes what the rule books.
 */
export type DepositRule = (deposit: DepositToConfirm, request: RequestRecord | undefined) => LedgerMovement;

export interface UpdateDepositStatusParameters {
  status: DepositStatus;
  /** Apply only from this status (e.g. confirm only what is still `seen`); null is returned otherwise. */
  fromStatus?: DepositStatus;
  /** The rule of the deposit's receipt: required to move it to `confirmed`, which books it. */
  received?: DepositRule;
  now: number;
}

/** Move a deposit along seen -> confirmed -> consumed, or to removed on a reorg. Null when it did not apply. */
export async function updateDepositStatus(
  db: Kysely<Tables>,
  id: number,
  params: UpdateDepositStatusParameters,
): Promise<DepositRecord | null> {
  if (params.status === 'confirmed' && !db.isTransaction)
    return db.transaction().execute((trx) => updateDepositStatus(trx, id, params));
  let query = db.updateTable('deposits').set({ status: params.status, updated_at: params.now }).where('id', '=', id);
  if (params.fromStatus !== undefined) query = query.where('status', '=', params.fromStatus);
  const row = await query.returningAll().executeTakeFirst();
  return row === undefined ? null : recordIfConfirmed(db, toDepositRecord(row), params);
}

export interface ListChainDepositsParameters {
  chainId: number;
  status: DepositStatus;
  /** Only deposits in blocks at or below this one. */
  maxBlockNumber?: bigint;
  /** Only deposits in blocks at or above this one. */
  minBlockNumber?: bigint;
}

/** One chain's deposits in one status, oldest block first (a watcher's pending or unprocessed deposits). */
export async function listChainDeposits(
  db: Kysely<Tables>,
  params: ListChainDepositsParameters,
): Promise<DepositRecord[]> {
  let query = db
    .selectFrom('deposits')
    .selectAll()
    .where('chain_id', '=', params.chainId)
    .where('status', '=', params.status);
  if (params.maxBlockNumber !== undefined) query = query.where('block_number', '<=', params.maxBlockNumber.toString());
  if (params.minBlockNumber !== undefined) query = query.where('block_number', '>=', params.minBlockNumber.toString());
  const rows = await query.orderBy('block_number', 'asc').orderBy('log_index', 'asc').execute();
  return rows.map(toDepositRecord);
}

export interface UpdateDepositStatusAtBlockParameters extends UpdateDepositStatusParameters {
  /** Apply only while the deposit is still recorded in this block (the hash the caller just checked). */
  blockHash: string;
}

/**
 * `updateDepositStatus`, guarded by the block hash the caller verified: a watcher confirming or removing a
 * deposit must not act on a row that a concurrent re-read has meanwhile moved to another block.
 */
export async function updateDepositStatusAtBlock(
  db: Kysely<Tables>,
  id: number,
  params: UpdateDepositStatusAtBlockParameters,
): Promise<DepositRecord | null> {
  if (params.status === 'confirmed' && !db.isTransaction)
    return db.transaction().execute((trx) => updateDepositStatusAtBlock(trx, id, params));
  let query = db
    .updateTable('deposits')
    .set({ status: params.status, updated_at: params.now })
    .where('id', '=', id)
    .where('block_hash', '=', normalizeHex(params.blockHash));
  if (params.fromStatus !== undefined) query = query.where('status', '=', params.fromStatus);
  const row = await query.returningAll().executeTakeFirst();
  return row === undefined ? null : recordIfConfirmed(db, toDepositRecord(row), params);
}

/** Most deposits one `confirmDepositsAtBlocks` statement confirms (longer lists are confirmed in several). */
const CONFIRM_BATCH = 64;

/**
 * What `confirmDepositsAtBlocks` needs of a deposit: its id, the block hash the caller just checked, and its log's
 * fields, which its ledger movement is written from (a recorded log's fields never change; only its block and
 * status do).
 */
export type DepositToConfirm = Pick<
  DepositRecord,
  'id' | 'blockHash' | 'requestId' | 'chainId' | 'txHash' | 'logIndex' | 'token' | 'amount' | 'depositIndex'
>;

/** A deposit `confirmDepositsAtBlocks` moved, with the request it carried the id of. */
export interface ConfirmedDeposit {
  deposit: DepositRecord;
  /**
   * The deposit's request as read just before its confirmation (undefined: no such request then), handed on with
   * it so that its consumer need not read it again. Only what a request never changes (its order: chains,
   * currencies, amounts in, user, refund address, quoted fees) is sure to be current: its status may have moved.
   */
  request: RequestRecord | undefined;
}

/**
 * `updateDepositStatusAtBlock` to `confirmed` from `seen` for several deposits, each still guarded by its own block
 * hash and by `seen`, and each with its ledger movement, in one statement (atomic on its own, so no transaction:
 * on PGlite a transaction holds every other statement from BEGIN to COMMIT; more than `CONFIRM_BATCH` deposits take
 * a statement per batch, in one transaction). The movements need the deposits'
 * requests (their quoted value), read first in one statement: only fields a request never changes go into a
 * movement, and a request with a deposit is never deleted. Returns the deposits it moved, in block and log order,
 * each with its request as read; a deposit that is no longer `seen` in that block is left out, as the single
 * update returns null for it.
 */
export async function confirmDepositsAtBlocks(
  db: Kysely<Tables>,
  deposits: readonly DepositToConfirm[],
  now: number,
  received: DepositRule,
): Promise<ConfirmedDeposit[]> {
  if (deposits.length === 0) return [];
  // More than one statement's worth (a backfill): one transaction, so that the batch commits or not as a whole and a
  // failure leaves every deposit `seen` for the next pass, none confirmed without being handed on.
  if (deposits.length > CONFIRM_BATCH && !db.isTransaction)
    return db.transaction().execute((trx) => confirmDepositsAtBlocks(trx, deposits, now, received));
  const requests = await getRequests(db, [...new Set(deposits.map((deposit) => normalizeHex(deposit.requestId)))]);
  const requestOf = (deposit: { requestId: string }) => requests.get(normalizeHex(deposit.requestId));
  const confirmed: ConfirmedDeposit[] = [];
  for (let start = 0; start < deposits.length; start += CONFIRM_BATCH) {
    const batch = deposits.slice(start, start + CONFIRM_BATCH);
    const receipts = batch.flatMap((deposit) =>
      ledgerEntryRows([received(deposit, requestOf(deposit))], now).map((row) => ({
        depositId: deposit.id,
        row,
      })),
    );
    // The ledger insert reads the update's rows: a deposit's movement is written only when it was confirmed here.
    const { rows } = await sql<Selectable<DepositsTable>>`
      with confirmed as (
        update deposits set status = 'confirmed', updated_at = ${now}
        where status = 'seen' and (${sql.join(
          batch.map((deposit) => sql`(id = ${deposit.id} and block_hash = ${normalizeHex(deposit.blockHash)})`),
          sql` or `,
        )})
        returning *
      ),
      received (deposit_id, movement_key, kind, account, chain_id, currency, amount, usd_micros, request_id) as (
        values ${sql.join(
          receipts.map(
            ({ depositId, row }) =>
              sql`(${depositId}::bigint, ${row.movement_key}::text, ${row.kind}::text, ${row.account}::text,
                ${row.chain_id}::bigint, ${row.currency}::text, ${row.amount}::numeric, ${row.usd_micros}::numeric,
                ${row.request_id}::text)`,
          ),
        )}
      ),
      ledger as (
        insert into ledger_entries
          (movement_key, kind, account, chain_id, currency, amount, usd_micros, request_id, created_at)
        select received.movement_key, received.kind, received.account, received.chain_id, received.currency,
          received.amount, received.usd_micros, received.request_id, ${now}::bigint
        from received join confirmed on confirmed.id = received.deposit_id
        on conflict (movement_key, account) do nothing
      )
      select * from confirmed`.execute(db);
    for (const row of rows) {
      const deposit = toDepositRecord(row);
      confirmed.push({ deposit, request: requestOf(deposit) });
    }
  }
  return confirmed.sort(({ deposit: a }, { deposit: b }) =>
    a.blockNumber === b.blockNumber ? a.logIndex - b.logIndex : a.blockNumber < b.blockNumber ? -1 : 1,
  );
}

/** A deposit becoming `confirmed` is received: its ledger movement commits with the status (`db` is a transaction). */
async function recordIfConfirmed(
  db: Kysely<Tables>,
  deposit: DepositRecord,
  params: UpdateDepositStatusParameters,
): Promise<DepositRecord> {
  if (params.status === 'confirmed') {
    if (params.received === undefined) throw new Error('a deposit confirmed books its receipt: pass its rule');
    await insertLedgerMovements(db, [params.received(deposit, await getRequest(db, deposit.requestId))], params.now);
  }
  return deposit;
}

export interface ReviveDepositParameters {
  blockNumber: bigint;
  blockHash: string;
  now: number;
}

/**
 * A recorded log found again in a canonical block after a reorg: it becomes `seen` in that block. Applies to a
 * `removed` deposit, or a `seen` one recorded in another block; never to `confirmed` or `consumed` ones, nor to one
 * flagged as reorged after it was used (null).
 */
export async function reviveDeposit(
  db: Kysely<Tables>,
  id: number,
  params: ReviveDepositParameters,
): Promise<DepositRecord | null> {
  const blockHash = normalizeHex(params.blockHash);
  const row = await db
    .updateTable('deposits')
    .set({ status: 'seen', block_number: params.blockNumber.toString(), block_hash: blockHash, updated_at: params.now })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        // A deposit flagged as reorged after it was used is never `seen` again: it was used already.
        eb.and([eb('status', '=', 'removed'), eb('reorged_at', 'is', null)]),
        eb.and([eb('status', '=', 'seen'), eb('block_hash', '<>', blockHash)]),
      ]),
    )
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? null : toDepositRecord(row);
}

/**
 * A `consumed` deposit whose log a reorg moved into another block (the same transaction mined again): the row
 * follows it there and stays `consumed`. Null when it is no longer `consumed` in the block the caller checked.
 */
export async function moveConsumedDeposit(
  db: Kysely<Tables>,
  id: number,
  params: { fromBlockHash: string; blockNumber: bigint; blockHash: string; now: number },
): Promise<DepositRecord | null> {
  const row = await db
    .updateTable('deposits')
    .set({
      block_number: params.blockNumber.toString(),
      block_hash: normalizeHex(params.blockHash),
      updated_at: params.now,
    })
    .where('id', '=', id)
    .where('status', '=', 'consumed')
    .where('block_hash', '=', normalizeHex(params.fromBlockHash))
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? null : toDepositRecord(row);
}

/**
 * A `consumed` deposit that a reorg took off the chain: it becomes `removed` with `reorged_at` set, and its amount
 * is booked as a loss (`lost`, the core's `depositLost`) in the same transaction. Guarded by the block hash the
 * caller found gone, so a concurrent move to another block wins; null when it did not apply (already flagged, moved,
 * or not consumed).
 */
export async function markDepositReorged(
  db: Kysely<Tables>,
  deposit: Pick<DepositRecord, 'id' | 'blockHash'>,
  now: number,
  lost: DepositRule,
): Promise<DepositRecord | null> {
  if (!db.isTransaction) return db.transaction().execute((trx) => markDepositReorged(trx, deposit, now, lost));
  const row = await db
    .updateTable('deposits')
    .set({ status: 'removed', reorged_at: now, updated_at: now })
    .where('id', '=', deposit.id)
    .where('status', '=', 'consumed')
    .where('block_hash', '=', normalizeHex(deposit.blockHash))
    .returningAll()
    .executeTakeFirst();
  if (row === undefined) return null;
  const removed = toDepositRecord(row);
  await insertLedgerMovements(db, [lost(removed, await getRequest(db, removed.requestId))], now);
  return removed;
}

export function toDepositRecord(row: Selectable<DepositsTable>): DepositRecord {
  return {
    id: toNumber(row.id),
    chainId: toNumber(row.chain_id),
    txHash: row.tx_hash,
    logIndex: row.log_index,
    blockNumber: toBigInt(row.block_number),
    blockHash: row.block_hash,
    requestId: row.request_id,
    depositor: row.depositor,
    token: row.token,
    amount: toBigInt(row.amount),
    depositIndex: row.deposit_index === null ? null : toBigInt(row.deposit_index),
    sender: row.sender ?? null,
    carrier: row.carrier ?? null,
    status: row.status as DepositStatus,
    reorgedAt: row.reorged_at == null ? null : toNumber(row.reorged_at),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

/** The deposits of several requests (a listing's page), oldest first, by request id (lower-case hex). */
export async function listDepositsForRequests(
  db: Kysely<Tables>,
  requestIds: readonly string[],
): Promise<Map<string, DepositRecord[]>> {
  if (requestIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('deposits')
    .selectAll()
    .where('request_id', 'in', requestIds.map(normalizeHex))
    .orderBy('id', 'asc')
    .execute();
  return groupByRequest(rows.map(toDepositRecord));
}
