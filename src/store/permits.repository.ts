import type { Kysely, Selectable } from 'kysely';
import { normalizeHex, toJson, toNumber } from './mappers.js';
import type { PermitsTable, Tables } from './tables.js';
import type { PermitCall, PermitRecord, PermitStatus } from '../records/permit.js';

export interface InsertPermitParameters {
  requestId: string;
  chainId: number;
  kind: string;
  /** The signer (the order's user). */
  owner: string;
  signature: string;
  call: PermitCall;
  now: number;
}

/** Records an accepted permit; a second one for the request is a primary-key violation. */
export async function insertPermit(db: Kysely<Tables>, params: InsertPermitParameters): Promise<PermitRecord> {
  const row = await db
    .insertInto('permits')
    .values({
      request_id: normalizeHex(params.requestId),
      chain_id: params.chainId,
      kind: params.kind,
      owner: normalizeHex(params.owner),
      signature: normalizeHex(params.signature),
      call: toJson(params.call),
      status: 'accepted',
      created_at: params.now,
      updated_at: params.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toPermitRecord(row);
}

export async function getPermit(db: Kysely<Tables>, requestId: string): Promise<PermitRecord | undefined> {
  const row = await db
    .selectFrom('permits')
    .selectAll()
    .where('request_id', '=', normalizeHex(requestId))
    .executeTakeFirst();
  return row === undefined ? undefined : toPermitRecord(row);
}

/** Permits accepted but not yet mined: what a restart submits. */
export async function listAcceptedPermits(db: Kysely<Tables>): Promise<PermitRecord[]> {
  const rows = await db.selectFrom('permits').selectAll().where('status', '=', 'accepted').execute();
  return rows.map(toPermitRecord);
}

/** Whether a permit signed by `owner` ended `failed` (its deposit reverted) at `since` or later. */
export async function hasFailedPermitSince(db: Kysely<Tables>, owner: string, since: number): Promise<boolean> {
  const row = await db
    .selectFrom('permits')
    .select('request_id')
    .where('owner', '=', normalizeHex(owner))
    .where('status', '=', 'failed')
    .where('updated_at', '>=', since)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Moves an `accepted` permit on; null when it was not `accepted` any more. */
export async function finishPermit(
  db: Kysely<Tables>,
  requestId: string,
  status: Exclude<PermitStatus, 'accepted'>,
  now: number,
): Promise<PermitRecord | null> {
  const row = await db
    .updateTable('permits')
    .set({ status, updated_at: now })
    .where('request_id', '=', normalizeHex(requestId))
    .where('status', '=', 'accepted')
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? null : toPermitRecord(row);
}

function toPermitRecord(row: Selectable<PermitsTable>): PermitRecord {
  return {
    requestId: row.request_id,
    chainId: toNumber(row.chain_id),
    kind: row.kind,
    signature: row.signature,
    call: row.call as unknown as PermitCall,
    status: row.status as PermitStatus,
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}
