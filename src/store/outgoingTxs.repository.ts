import { sql, type Kysely, type Selectable } from 'kysely';
import {
  gasSpent,
  refundedRequestId,
  refundPaid,
  swappedBack,
  type SwapTransfer,
  settledRequestIds,
  settlementPaid,
  type LedgerMovement,
} from './ledgerMovements.js';
import { finishClaim } from './appFeeClaims.repository.js';
import { insertLedgerMovements } from './ledger.repository.js';
import type { RequestRecord } from './requestRecord.js';
import { getRequest } from './requests.repository.js';
import { appendUnique } from './fragments.js';
import { normalizeHex, toBigInt, toJson, toNumber } from './mappers.js';
import type { JsonObject, OutgoingTxsTable, Tables } from './tables.js';

/**
 * `deposit`: the gateway's own origin deposit of a permit (`POST /execute/permits`); `gasless`: a user's EIP-7702
 * batch the gateway submits for them (`POST /execute`), keyed by its request; `sweep`: a deposit address's
 * balance swept into the depository; `claim`: an app-fee claim's payout.
 */
/** `rebalance`: the solver's own inventory moves (an approval, a swap of a surplus back through the pools). */
export type OutgoingTxKind = 'fill' | 'refund' | 'settle' | 'deposit' | 'gasless' | 'sweep' | 'claim' | 'rebalance';
/**
 * `prepared`: recorded, not yet sent; `broadcast`: sent (every attempt's hash is in `hashes`); `confirmed` /
 * `failed`: mined, succeeded or reverted; `replaced`: superseded by another row, the only status that frees
 * the (request, kind) slot.
 */
export type OutgoingTxStatus = 'prepared' | 'broadcast' | 'confirmed' | 'failed' | 'replaced';

/** Name of the unique index that allows one live fill (and one live refund) per request. */
export const outgoingTxRequestKindKey = 'outgoing_txs_request_kind_key';
/** Name of the unique index that keeps two live transactions of one signer off the same nonce. */
export const outgoingTxSignerNonceKey = 'outgoing_txs_signer_nonce_key';

export interface OutgoingTxRecord {
  id: number;
  chainId: number;
  requestId: string;
  kind: OutgoingTxKind;
  signer: string;
  nonce: bigint | null;
  status: OutgoingTxStatus;
  /**
   * Every hash broadcast for this transaction, oldest first. Gas bumps append theirs just before broadcasting
   * (so a crash cannot lose a mined hash): the last one may never have reached a node.
   */
  hashes: string[];
  /** The transaction as built (to, data, value, gas), JSON-safe. */
  payload: JsonObject;
  createdAt: number;
  updatedAt: number;
}

export interface InsertOutgoingTxParameters {
  chainId: number;
  requestId: string;
  kind: OutgoingTxKind;
  signer: string;
  nonce?: bigint | null;
  status?: OutgoingTxStatus;
  payload: JsonObject;
  now: number;
}

/**
 * Record a transaction before it is broadcast. A second live fill or refund for the same request fails with a
 * unique violation on `outgoing_txs_request_kind_key` (see `isUniqueViolation`): that constraint, not a read
 * before the write, is what guarantees a request is never filled twice.
 */
export async function insertOutgoingTx(
  db: Kysely<Tables>,
  params: InsertOutgoingTxParameters,
): Promise<OutgoingTxRecord> {
  const row = await db
    .insertInto('outgoing_txs')
    .values(outgoingTxRow(params))
    .returningAll()
    .executeTakeFirstOrThrow();
  return toOutgoingTxRecord(row);
}

/** The `outgoing_txs` row an insert writes. */
function outgoingTxRow(params: InsertOutgoingTxParameters) {
  return {
    chain_id: params.chainId,
    request_id: normalizeHex(params.requestId),
    kind: params.kind,
    signer: normalizeHex(params.signer),
    nonce: params.nonce == null ? null : params.nonce.toString(),
    status: params.status ?? ('prepared' as const),
    payload: toJson(params.payload),
    created_at: params.now,
    updated_at: params.now,
  };
}

/**
 * `insertOutgoingTx` for several rows in one statement (all or none: one unique violation refuses them all), in
 * the order given.
 */
export async function insertOutgoingTxs(
  db: Kysely<Tables>,
  params: readonly InsertOutgoingTxParameters[],
): Promise<OutgoingTxRecord[]> {
  if (params.length === 0) return [];
  const rows = await db.insertInto('outgoing_txs').values(params.map(outgoingTxRow)).returningAll().execute();
  const records = rows.map(toOutgoingTxRecord);
  // RETURNING's order is not promised: match each row back by its (request, kind), unique among live rows.
  return params.map((one) => {
    const key = `${normalizeHex(one.requestId)}:${one.kind}`;
    const record = records.find((r) => `${normalizeHex(r.requestId)}:${r.kind}` === key);
    if (record === undefined) throw new Error(`outgoing tx for ${key} was not returned by its insert`);
    return record;
  });
}

export async function getOutgoingTx(db: Kysely<Tables>, id: number): Promise<OutgoingTxRecord | undefined> {
  const row = await db.selectFrom('outgoing_txs').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toOutgoingTxRecord(row);
}

/** The live (not replaced) transaction of this kind for a request: what recovery looks at after a restart. */
export async function getLiveOutgoingTx(
  db: Kysely<Tables>,
  requestId: string,
  kind: OutgoingTxKind,
): Promise<OutgoingTxRecord | undefined> {
  const row = await db
    .selectFrom('outgoing_txs')
    .selectAll()
    .where('request_id', '=', normalizeHex(requestId))
    .where('kind', '=', kind)
    .where('status', '<>', 'replaced')
    .executeTakeFirst();
  return row === undefined ? undefined : toOutgoingTxRecord(row);
}

export interface UpdateOutgoingTxParameters {
  status: OutgoingTxStatus;
  /** Apply only from this status; null is returned otherwise. */
  fromStatus?: OutgoingTxStatus;
  /** Set when the sender assigns the nonce. */
  nonce?: bigint;
  /** A broadcast hash to append (ignored when already recorded). */
  hash?: string;
  /**
   * The receipt, when the transaction was mined (`confirmed` or `failed`): its gas and, for a successful
   * refund, the refund itself go to the ledger in the same transaction as the status.
   */
  receipt?: {
    hash: string;
    gasUsed: bigint;
    effectiveGasPrice: bigint;
    /** An OP-stack receipt's L1 data fee (wei): gas spent too. */
    l1Fee?: bigint;
    gasUsdMicros?: bigint | null;
    /** The token transfers in and out of the solver's wallet (read for `rebalance` transactions). */
    tokenTransfers?: SwapTransfer[];
  };
  now: number;
}

/**
 * Mark several `prepared` rows a node accepted as `broadcast`, each with its accepted hash (appended unless already
 * recorded) and its own time, in one statement: `updateOutgoingTx(…, { status: 'broadcast', fromStatus: 'prepared',
 * hash, now })` for each. A row no longer `prepared` is left as it is. Returns the ids it moved.
 */
export async function markOutgoingTxsBroadcast(
  db: Kysely<Tables>,
  marks: ReadonlyArray<{ id: number; hash: string; now: number }>,
): Promise<number[]> {
  if (marks.length === 0) return [];
  // Arrays, not a list of rows: one statement text for any count, which PGlite's worker prepares once.
  const values = sql<{ id: string; hash: string; at: string }>`unnest(${marks.map(({ id }) => id)}::bigint[],
    ${marks.map(({ hash }) => normalizeHex(hash))}::text[], ${marks.map(({ now }) => now)}::bigint[])`.as<'v'>(
    sql`v (id, hash, at)`,
  );
  const rows = await db
    .updateTable('outgoing_txs')
    .from(values)
    .set({
      status: 'broadcast',
      updated_at: sql<string>`v.at`,
      hashes: appendUnique('outgoing_txs.hashes', sql.ref('v.hash')),
    })
    .where(sql<boolean>`outgoing_txs.id = v.id`)
    .where('outgoing_txs.status', '=', 'prepared')
    .returning('outgoing_txs.id')
    .execute();
  return rows.map((row) => toNumber(row.id));
}

/** Advance a transaction (broadcast, gas bump, receipt, replacement). Null when `fromStatus` did not match. */
export async function updateOutgoingTx(
  db: Kysely<Tables>,
  id: number,
  params: UpdateOutgoingTxParameters,
): Promise<OutgoingTxRecord | null> {
  if (params.receipt !== undefined && !db.isTransaction)
    return db.transaction().execute((trx) => updateOutgoingTx(trx, id, params));
  let query = db
    .updateTable('outgoing_txs')
    .set({
      status: params.status,
      updated_at: params.now,
      ...(params.nonce === undefined ? {} : { nonce: params.nonce.toString() }),
      ...(params.hash === undefined ? {} : { hashes: appendUnique('hashes', normalizeHex(params.hash)) }),
    })
    .where('id', '=', id);
  if (params.fromStatus !== undefined) query = query.where('status', '=', params.fromStatus);
  const row = await query.returningAll().executeTakeFirst();
  if (row === undefined) return null;
  const record = toOutgoingTxRecord(row);
  const { receipt } = params;
  if (receipt !== undefined && (record.status === 'confirmed' || record.status === 'failed')) {
    const movements: LedgerMovement[] = [];
    const gas = gasSpent(record, receipt, receipt.gasUsdMicros ?? null);
    if (gas !== null) movements.push(gas);
    if (record.kind === 'refund' && record.status === 'confirmed')
      movements.push(...refundPaid(record, await getRequest(db, refundedRequestId(record))));
    if (record.kind === 'settle' && record.status === 'confirmed') {
      const requests = new Map<string, RequestRecord>();
      for (const requestId of settledRequestIds(record)) {
        const request = await getRequest(db, requestId);
        if (request !== undefined) requests.set(requestId, request);
      }
      movements.push(...settlementPaid(record, requests));
    }
    if (record.kind === 'rebalance' && record.status === 'confirmed')
      movements.push(...swappedBack(record, record.signer, receipt.hash, receipt.tokenTransfers ?? []));
    await insertLedgerMovements(db, movements, params.now);
    // A claim's payout ends its claim (and writes the claim's movements) with the receipt.
    if (record.kind === 'claim')
      await finishClaim(db, {
        id: record.requestId,
        status: record.status === 'confirmed' ? 'success' : 'failed',
        txHash: receipt.hash,
        now: params.now,
      });
  }
  return record;
}

function toOutgoingTxRecord(row: Selectable<OutgoingTxsTable>): OutgoingTxRecord {
  return {
    id: toNumber(row.id),
    chainId: toNumber(row.chain_id),
    requestId: row.request_id,
    kind: row.kind as OutgoingTxKind,
    signer: row.signer,
    nonce: row.nonce === null ? null : toBigInt(row.nonce),
    status: row.status as OutgoingTxStatus,
    hashes: row.hashes,
    payload: row.payload as JsonObject,
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

export interface OutgoingTxSignerParameters {
  chainId: number;
  signer: string;
}

/**
 * This signer's transactions on a chain that may still need a broadcast or a receipt (`prepared` or
 * `broadcast`), in nonce order: what the sender rebroadcasts after a restart.
 */
export async function listUnminedOutgoingTxs(
  db: Kysely<Tables>,
  params: OutgoingTxSignerParameters,
): Promise<OutgoingTxRecord[]> {
  const rows = await db
    .selectFrom('outgoing_txs')
    .selectAll()
    .where('chain_id', '=', params.chainId)
    .where('signer', '=', normalizeHex(params.signer))
    .where('status', 'in', ['prepared', 'broadcast'])
    .orderBy('nonce', 'asc')
    .orderBy('id', 'asc')
    .execute();
  return rows.map(toOutgoingTxRecord);
}

/**
 * The nonces from `from` up that live (not replaced) transactions of this signer hold on a chain, ascending: the
 * ones `outgoing_txs_signer_nonce_key` keeps unique. A released nonce (`releaseOutgoingTxNonce`) is held by none.
 */
export async function listHeldOutgoingTxNonces(
  db: Kysely<Tables>,
  params: OutgoingTxSignerParameters,
  from: bigint,
): Promise<bigint[]> {
  const rows = await db
    .selectFrom('outgoing_txs')
    .select('nonce')
    .where('chain_id', '=', params.chainId)
    .where('signer', '=', normalizeHex(params.signer))
    .where('nonce', 'is not', null)
    .where('status', '<>', 'replaced')
    .where('nonce', '>=', from.toString())
    .orderBy('nonce', 'asc')
    .execute();
  return rows.flatMap((row) => (row.nonce == null ? [] : [toBigInt(row.nonce)]));
}

/**
 * This signer's transactions on a chain recorded as mined (`confirmed` or `failed`, on a nonce) since `since` (Unix
 * ms), in nonce order: the ones a reorg may still take off the chain.
 */
export async function listRecentlyMinedOutgoingTxs(
  db: Kysely<Tables>,
  params: OutgoingTxSignerParameters,
  since: number,
): Promise<OutgoingTxRecord[]> {
  const rows = await db
    .selectFrom('outgoing_txs')
    .selectAll()
    .where('chain_id', '=', params.chainId)
    .where('signer', '=', normalizeHex(params.signer))
    .where('status', 'in', ['confirmed', 'failed'])
    .where('nonce', 'is not', null)
    .where('updated_at', '>=', since)
    .orderBy('nonce', 'asc')
    .execute();
  return rows.map(toOutgoingTxRecord);
}

/** The live (not replaced) transaction of this signer on a chain that holds `nonce`, if any. */
export async function getOutgoingTxAtNonce(
  db: Kysely<Tables>,
  params: OutgoingTxSignerParameters,
  nonce: bigint,
): Promise<OutgoingTxRecord | undefined> {
  const row = await db
    .selectFrom('outgoing_txs')
    .selectAll()
    .where('chain_id', '=', params.chainId)
    .where('signer', '=', normalizeHex(params.signer))
    .where('nonce', '=', nonce.toString())
    .where('status', '<>', 'replaced')
    .executeTakeFirst();
  return row === undefined ? undefined : toOutgoingTxRecord(row);
}

export interface ReviseOutgoingTxParameters {
  /** The transaction as now signed; replaces the stored payload. */
  payload: JsonObject;
  /** A new nonce (a re-sign after the old one was taken); unchanged when absent. */
  nonce?: bigint;
  /** A hash to append before it is broadcast (a fee bump), so a crash right after the broadcast loses nothing. */
  hash?: string;
  /** Apply only while the row is in one of these statuses; null is returned otherwise. */
  fromStatuses: OutgoingTxStatus[];
  /** A new status (a mined transaction a reorg dropped, signed again, is `broadcast` again); unchanged when absent. */
  status?: OutgoingTxStatus;
  now: number;
}

/**
 * Replace the signed transaction of a row that is not mined yet: a fee bump (same nonce, `hash` appended), or
 * a re-sign on a new nonce when no node accepted the old one. Null when the row left `fromStatuses`.
 */
export async function reviseOutgoingTx(
  db: Kysely<Tables>,
  id: number,
  params: ReviseOutgoingTxParameters,
): Promise<OutgoingTxRecord | null> {
  const row = await db
    .updateTable('outgoing_txs')
    .set({
      payload: toJson(params.payload),
      updated_at: params.now,
      ...(params.nonce === undefined ? {} : { nonce: params.nonce.toString() }),
      ...(params.hash === undefined ? {} : { hashes: appendUnique('hashes', normalizeHex(params.hash)) }),
      ...(params.status === undefined ? {} : { status: params.status }),
    })
    .where('id', '=', id)
    .where('status', 'in', params.fromStatuses)
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? null : toOutgoingTxRecord(row);
}

/**
 * Give up a `prepared` transaction that a node rejected outright: it becomes `failed` and its nonce is released
 * (null), so the sender reuses that nonce instead of leaving a gap. It keeps the (request, kind) slot like any
 * failed transaction. `payload` replaces the stored one (it carries the rejection). Null when not `prepared`.
 */
export async function releaseOutgoingTxNonce(
  db: Kysely<Tables>,
  id: number,
  params: { payload: JsonObject; now: number },
): Promise<OutgoingTxRecord | null> {
  const row = await db
    .updateTable('outgoing_txs')
    .set({ status: 'failed', nonce: null, payload: toJson(params.payload), updated_at: params.now })
    .where('id', '=', id)
    .where('status', '=', 'prepared')
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? null : toOutgoingTxRecord(row);
}

/**
 * The live (not replaced) transactions of these kinds for several requests (a listing's page): at most one per
 * request and kind.
 */
export async function listLiveOutgoingTxs(
  db: Kysely<Tables>,
  requestIds: readonly string[],
  kinds: readonly OutgoingTxKind[],
): Promise<OutgoingTxRecord[]> {
  if (requestIds.length === 0 || kinds.length === 0) return [];
  const rows = await db
    .selectFrom('outgoing_txs')
    .selectAll()
    .where('request_id', 'in', requestIds.map(normalizeHex))
    .where('kind', 'in', kinds)
    .where('status', '<>', 'replaced')
    .execute();
  return rows.map(toOutgoingTxRecord);
}

/** For each of these hashes that an outgoing transaction broadcast, the first such transaction (by id). */
export async function findOutgoingTxsByHashes(
  db: Kysely<Tables>,
  hashes: readonly string[],
): Promise<Map<string, OutgoingTxRecord>> {
  const byHash = new Map<string, OutgoingTxRecord>();
  if (hashes.length === 0) return byHash;
  const wanted = [...new Set(hashes.map(normalizeHex))];
  const rows = await db
    .selectFrom('outgoing_txs')
    .selectAll()
    .where(sql<boolean>`hashes ?| ${sql.val(wanted)}::text[]`)
    .orderBy('id')
    .execute();
  for (const row of rows) {
    const tx = toOutgoingTxRecord(row);
    for (const hash of tx.hashes) if (wanted.includes(hash) && !byHash.has(hash)) byHash.set(hash, tx);
  }
  return byHash;
}
