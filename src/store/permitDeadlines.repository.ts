import type { Kysely } from 'kysely';
import { normalizeHex, toNumber } from './mappers.js';
import type { Tables } from './tables.js';

/** One owner's EIP-2612 nonce on one token: the permits whose messages differ only by their deadline. */
export interface PermitNonceKey {
  chainId: number;
  token: string;
  owner: string;
  /** Decimal string. */
  nonce: string;
}

const keyed = (key: PermitNonceKey) => ({
  chain_id: key.chainId,
  token: normalizeHex(key.token),
  owner: normalizeHex(key.owner),
  nonce: key.nonce,
});

/** The deadlines already handed out for `key` from `earliest` to `latest` (Unix seconds, both included). */
export async function listPermitDeadlines(
  db: Kysely<Tables>,
  key: PermitNonceKey,
  earliest: number,
  latest: number,
): Promise<number[]> {
  const { chain_id, token, owner, nonce } = keyed(key);
  const rows = await db
    .selectFrom('permit_deadlines')
    .select('deadline')
    .where('chain_id', '=', chain_id)
    .where('token', '=', token)
    .where('owner', '=', owner)
    .where('nonce', '=', nonce)
    .where('deadline', '>=', earliest)
    .where('deadline', '<=', latest)
    .execute();
  return rows.map((row) => toNumber(row.deadline));
}

/** Claims `deadline` for `key` and the request; false when another quote holds it. */
export async function insertPermitDeadline(
  db: Kysely<Tables>,
  key: PermitNonceKey,
  deadline: number,
  requestId: string,
): Promise<boolean> {
  const row = await db
    .insertInto('permit_deadlines')
    .values({ ...keyed(key), deadline, request_id: normalizeHex(requestId) })
    .onConflict((oc) => oc.doNothing())
    .returning('deadline')
    .executeTakeFirst();
  return row !== undefined;
}

/** Removes the deadlines that passed before `before` (Unix seconds); resolves with how many. */
export async function deletePassedPermitDeadlines(db: Kysely<Tables>, before: number): Promise<number> {
  const result = await db.deleteFrom('permit_deadlines').where('deadline', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
