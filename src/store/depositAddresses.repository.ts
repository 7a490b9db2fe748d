import { sql, type Kysely, type Selectable } from 'kysely';
import { normalizeHex, normalizeHexOrNull, toBigInt, toJson, toNumber, toNumberOrNull, toUint256 } from './mappers.js';
import type { DepositAddressesTable, DepositAddressTransfersTable, Tables } from './tables.js';
import type { JsonValue } from '../records/json.js';
import type {
  DepositAddressRecord,
  DepositAddressType,
  RequestDepositAddress,
  SweepLeg,
  TransferRecord,
  TransferStatus,
} from '../records/depositAddress.js';

/**
 * The notification channel `insertDepositAddress` notifies (payload: the schema), delivered at its commit: on PGlite,
 * where this process writes every address, the deposit-address watchers read new addresses only after one.
 */
export const DEPOSIT_ADDRESSES_CHANNEL = 'gateway_deposit_addresses';

/**
 * Inserts the address (an existing one is left as it is) and notifies `DEPOSIT_ADDRESSES_CHANNEL` in the same
 * statement, so an address the caller can hand out has always been announced.
 */
export async function insertDepositAddress(
  db: Kysely<Tables>,
  row: Omit<DepositAddressRecord, 'reindexedAt'>,
): Promise<DepositAddressRecord> {
  await db
    .with('inserted', (qb) =>
      qb
        .insertInto('deposit_addresses')
        .values({
          chain_id: row.chainId,
          address: normalizeHex(row.address),
          type: row.type,
          salt_key: normalizeHex(row.saltKey),
          recovery_address: normalizeHexOrNull(row.recoveryAddress),
          request_id: normalizeHex(row.requestId),
          currency: normalizeHex(row.currency),
          refund_to: normalizeHexOrNull(row.refundTo),
          params: toJson(row.params),
          created_at: row.createdAt,
        })
        .onConflict((oc) => oc.columns(['chain_id', 'address']).doNothing()),
    )
    .selectNoFrom(sql<string>`pg_notify(${DEPOSIT_ADDRESSES_CHANNEL}, current_schema())`.as('notified'))
    .execute();
  return (await getDepositAddress(db, row.chainId, row.address))!;
}

export async function getDepositAddress(
  db: Kysely<Tables>,
  chainId: number,
  address: string,
): Promise<DepositAddressRecord | undefined> {
  const row = await db
    .selectFrom('deposit_addresses')
    .selectAll()
    .where('chain_id', '=', chainId)
    .where('address', '=', normalizeHex(address))
    .executeTakeFirst();
  return row === undefined ? undefined : toAddressRecord(row);
}

/** An address on any chain (the lookup endpoint takes only the address). */
export async function findDepositAddress(
  db: Kysely<Tables>,
  query: { address: string } | { requestId: string },
): Promise<DepositAddressRecord | undefined> {
  let q = db.selectFrom('deposit_addresses').selectAll();
  if ('address' in query) q = q.where('address', '=', normalizeHex(query.address));
  else {
    const requestId = normalizeHex(query.requestId);
    q = q.where((eb) =>
      eb.or([
        eb('request_id', '=', requestId),
        eb(
          'address',
          'in',
          eb.selectFrom('deposit_address_transfers').select('address').where('request_id', '=', requestId),
        ),
      ]),
    );
  }
  const row = await q.orderBy('created_at').executeTakeFirst();
  return row === undefined ? undefined : toAddressRecord(row);
}

/**
 * The addresses of `chainId` created at or after `since` (Unix ms), with the latest creation time among them: what
 * the watcher adds to the set it keeps (`deposit_addresses_chain_created_idx`).
 */
export async function listDepositAddressesSince(
  db: Kysely<Tables>,
  chainId: number,
  since: number,
): Promise<{ addresses: string[]; latest: number | undefined }> {
  const rows = await db
    .selectFrom('deposit_addresses')
    .select(['address', 'created_at'])
    .where('chain_id', '=', chainId)
    .where('created_at', '>=', since)
    .execute();
  let latest: number | undefined;
  for (const row of rows) {
    const at = toNumber(row.created_at);
    if (latest === undefined || at > latest) latest = at;
  }
  return { addresses: rows.map((row) => row.address), latest };
}

/** Claims the reindex cooldown: true when the address was not reindexed within `cooldownMs`. */
export async function claimReindex(
  db: Kysely<Tables>,
  chainId: number,
  address: string,
  now: number,
  cooldownMs: number,
): Promise<boolean> {
  const updated = await db
    .updateTable('deposit_addresses')
    .set({ reindexed_at: now })
    .where('chain_id', '=', chainId)
    .where('address', '=', normalizeHex(address))
    .where((eb) => eb.or([eb('reindexed_at', 'is', null), eb('reindexed_at', '<=', now - cooldownMs)]))
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

export interface InsertTransferParameters {
  chainId: number;
  address: string;
  txHash: string;
  logIndex: number;
  blockNumber: bigint;
  blockHash: string;
  token: string;
  amount: bigint;
  depositor: string;
  status: 'seen' | 'unsupported';
  now: number;
}

/**
 * Records a transfer. Seen again (a range read twice) it is returned unchanged; seen in another block after a
 * reorg while still `seen` or `removed`, it moves there and is `seen` again.
 */
export async function recordTransfer(
  db: Kysely<Tables>,
  params: InsertTransferParameters,
): Promise<{ transfer: TransferRecord; inserted: boolean }> {
  const inserted = await db
    .insertInto('deposit_address_transfers')
    .values({
      chain_id: params.chainId,
      address: normalizeHex(params.address),
      tx_hash: normalizeHex(params.txHash),
      log_index: params.logIndex,
      block_number: params.blockNumber,
      block_hash: normalizeHex(params.blockHash),
      token: normalizeHex(params.token),
      amount: toUint256(params.amount),
      depositor: normalizeHex(params.depositor),
      status: params.status,
      created_at: params.now,
      updated_at: params.now,
    })
    .onConflict((oc) => oc.columns(['chain_id', 'tx_hash', 'log_index']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted !== undefined) return { transfer: toTransferRecord(inserted), inserted: true };
  const moved = await db
    .updateTable('deposit_address_transfers')
    .set({
      block_number: params.blockNumber,
      block_hash: normalizeHex(params.blockHash),
      status: 'seen',
      updated_at: params.now,
    })
    .where('chain_id', '=', params.chainId)
    .where('tx_hash', '=', normalizeHex(params.txHash))
    .where('log_index', '=', params.logIndex)
    .where('status', 'in', ['seen', 'removed'])
    .where('block_hash', '!=', normalizeHex(params.blockHash))
    .returningAll()
    .executeTakeFirst();
  if (moved !== undefined) return { transfer: toTransferRecord(moved), inserted: false };
  const existing = await db
    .selectFrom('deposit_address_transfers')
    .selectAll()
    .where('chain_id', '=', params.chainId)
    .where('tx_hash', '=', normalizeHex(params.txHash))
    .where('log_index', '=', params.logIndex)
    .executeTakeFirstOrThrow();
  return { transfer: toTransferRecord(existing), inserted: false };
}

export async function listTransfers(
  db: Kysely<Tables>,
  filter: { chainId: number; status?: TransferStatus[]; maxBlockNumber?: bigint; address?: string; limit?: number },
): Promise<TransferRecord[]> {
  let q = db.selectFrom('deposit_address_transfers').selectAll().where('chain_id', '=', filter.chainId);
  if (filter.status !== undefined) q = q.where('status', 'in', filter.status);
  if (filter.maxBlockNumber !== undefined) q = q.where('block_number', '<=', filter.maxBlockNumber.toString());
  if (filter.address !== undefined) q = q.where('address', '=', normalizeHex(filter.address));
  q = q.orderBy('block_number').orderBy('id');
  if (filter.limit !== undefined) q = q.limit(filter.limit);
  const rows = await q.execute();
  return rows.map(toTransferRecord);
}

export async function getTransfer(db: Kysely<Tables>, id: number): Promise<TransferRecord | undefined> {
  const row = await db.selectFrom('deposit_address_transfers').selectAll().where('id', '=', id).executeTakeFirst();
  return row === undefined ? undefined : toTransferRecord(row);
}

/** Moves a transfer from one status to another (at the block it was read in, for `seen`); null when it moved on. */
export async function updateTransfer(
  db: Kysely<Tables>,
  id: number,
  change: {
    status: TransferStatus;
    fromStatus: TransferStatus | TransferStatus[];
    blockHash?: string;
    requestId?: string | null;
    supersedesRequestId?: string | null;
    sweepId?: string;
    legs?: SweepLeg[];
    dustSweepId?: string;
    now: number;
  },
): Promise<TransferRecord | null> {
  let q = db
    .updateTable('deposit_address_transfers')
    .set({
      status: change.status,
      updated_at: change.now,
      ...(change.requestId === undefined ? {} : { request_id: normalizeHexOrNull(change.requestId) }),
      ...(change.supersedesRequestId === undefined
        ? {}
        : { supersedes_request_id: normalizeHexOrNull(change.supersedesRequestId) }),
      ...(change.sweepId === undefined ? {} : { sweep_id: normalizeHex(change.sweepId) }),
      ...(change.dustSweepId === undefined ? {} : { dust_sweep_id: normalizeHex(change.dustSweepId) }),
      ...(change.legs === undefined
        ? {}
        : { legs: toJson(change.legs.map((leg) => ({ ...leg, amount: leg.amount.toString() }))) }),
    })
    .where('id', '=', id)
    .where('status', 'in', Array.isArray(change.fromStatus) ? change.fromStatus : [change.fromStatus]);
  if (change.blockHash !== undefined) q = q.where('block_hash', '=', normalizeHex(change.blockHash));
  const row = await q.returningAll().executeTakeFirst();
  return row === undefined ? null : toTransferRecord(row);
}

/** The deposit address of each of `requestIds` that has one (one query per table, for a page of requests). */
export async function depositAddressesOfRequests(
  db: Kysely<Tables>,
  requestIds: readonly string[],
): Promise<Map<string, RequestDepositAddress>> {
  const found = new Map<string, RequestDepositAddress>();
  if (requestIds.length === 0) return found;
  const ids = [...new Set(requestIds.map(normalizeHex))];
  const transfers = await db
    .selectFrom('deposit_address_transfers as t')
    .innerJoin('deposit_addresses as a', (join) =>
      join.onRef('a.chain_id', '=', 't.chain_id').onRef('a.address', '=', 't.address'),
    )
    .select([
      't.request_id',
      't.supersedes_request_id',
      't.address',
      't.depositor',
      't.tx_hash',
      'a.type',
      'a.recovery_address',
      'a.refund_to',
    ])
    .where((eb) => eb.or([eb('t.request_id', 'in', ids), eb('t.supersedes_request_id', 'in', ids)]))
    .orderBy('t.id')
    .execute();
  const addresses = await db.selectFrom('deposit_addresses').selectAll().where('request_id', 'in', ids).execute();
  for (const row of addresses) {
    found.set(row.request_id, {
      address: row.address,
      type: row.type as DepositAddressType,
      depositor: null,
      depositTxHash: null,
      recoveryAddress: row.recovery_address,
      refundTo: row.refund_to,
      supersededByRequestId: null,
    });
  }
  for (const row of transfers) {
    if (row.request_id !== null && ids.includes(row.request_id)) {
      const previous = found.get(row.request_id);
      found.set(row.request_id, {
        address: row.address,
        type: row.type as DepositAddressType,
        depositor: row.depositor,
        depositTxHash: row.tx_hash,
        recoveryAddress: row.recovery_address,
        refundTo: row.refund_to,
        supersededByRequestId: previous?.supersededByRequestId ?? null,
      });
    }
    if (row.supersedes_request_id !== null && row.request_id !== null) {
      const replaced = found.get(row.supersedes_request_id);
      if (replaced !== undefined && replaced.supersededByRequestId === null)
        replaced.supersededByRequestId = row.request_id;
    }
  }
  return found;
}

/** Request ids paid (or first quoted) through `address`, for `/requests?depositAddress=`. */
export function requestIdsOfAddress(db: Kysely<Tables>, address: string) {
  const lower = normalizeHex(address);
  return db
    .selectFrom('deposit_address_transfers')
    .select('request_id')
    .where('address', '=', lower)
    .where('request_id', 'is not', null)
    .union(db.selectFrom('deposit_addresses').select('request_id').where('address', '=', lower));
}

function toAddressRecord(row: Selectable<DepositAddressesTable>): DepositAddressRecord {
  return {
    chainId: toNumber(row.chain_id),
    address: row.address,
    type: row.type as DepositAddressType,
    saltKey: row.salt_key,
    recoveryAddress: row.recovery_address,
    requestId: row.request_id,
    currency: row.currency,
    refundTo: row.refund_to,
    params: row.params,
    createdAt: toNumber(row.created_at),
    reindexedAt: toNumberOrNull(row.reindexed_at),
  };
}

function toTransferRecord(row: Selectable<DepositAddressTransfersTable>): TransferRecord {
  const legs = row.legs as Array<{ id: string; depositor: string; amount: string }> | null;
  return {
    id: toNumber(row.id),
    chainId: toNumber(row.chain_id),
    address: row.address,
    txHash: row.tx_hash,
    logIndex: row.log_index,
    blockNumber: toBigInt(row.block_number),
    blockHash: row.block_hash,
    token: row.token,
    amount: toBigInt(row.amount),
    depositor: row.depositor,
    status: row.status as TransferStatus,
    requestId: row.request_id,
    supersedesRequestId: row.supersedes_request_id,
    sweepId: row.sweep_id,
    legs: legs === null ? null : legs.map((leg) => ({ ...leg, amount: BigInt(leg.amount) })),
    dustSweepId: row.dust_sweep_id ?? null,
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

export type { JsonValue };

/** A request whose `refundTo` is the zero address ("the detected depositor") learns who that is. */
export async function fillInRefundTo(db: Kysely<Tables>, requestId: string, depositor: string): Promise<void> {
  await db
    .updateTable('requests')
    .set({ refund_to: normalizeHex(depositor) })
    .where('id', '=', normalizeHex(requestId))
    .where('refund_to', '=', '0x0000000000000000000000000000000000000000')
    .execute();
}

/** A re-quoted request of an open address is listed under it (`requests.deposit_address`). */
export async function linkRequestToAddress(db: Kysely<Tables>, requestId: string, address: string): Promise<void> {
  await db
    .updateTable('requests')
    .set({ deposit_address: normalizeHex(address) })
    .where('id', '=', normalizeHex(requestId))
    .execute();
}
