import type { Kysely } from 'kysely';
import { normalizeHex, toNumber } from './mappers.js';
import type { Tables } from './tables.js';

/** A solver transaction that reverted on chain after a clean simulation, and whose requester it was. */
export interface ExecutionRevert {
  chainId: number;
  txHash: string;
  kind: 'fill' | 'gasless';
  requestId: string;
  user: string;
  apiKeyId: string | null;
  createdAt: number;
}

/** Records a revert; the same transaction recorded again (a retry, a restart) is kept once. */
export async function recordExecutionRevert(db: Kysely<Tables>, revert: ExecutionRevert): Promise<void> {
  await db
    .insertInto('execution_reverts')
    .values({
      chain_id: revert.chainId,
      tx_hash: normalizeHex(revert.txHash),
      kind: revert.kind,
      request_id: normalizeHex(revert.requestId),
      user_address: normalizeHex(revert.user),
      api_key_id: revert.apiKeyId,
      created_at: revert.createdAt,
    })
    .onConflict((oc) => oc.columns(['chain_id', 'tx_hash']).doNothing())
    .execute();
}

/**
 * When the latest revert of `user`'s, or of API key `apiKeyId`'s, at or after `since` was recorded (ms); undefined
 * when there was none.
 */
export async function latestExecutionRevert(
  db: Kysely<Tables>,
  requester: { user: string; apiKeyId: string | null },
  since: number,
): Promise<number | undefined> {
  const { apiKeyId } = requester;
  const row = await db
    .selectFrom('execution_reverts')
    .select((eb) => eb.fn.max('created_at').as('latest'))
    .where((eb) =>
      apiKeyId === null
        ? eb('user_address', '=', normalizeHex(requester.user))
        : eb.or([eb('user_address', '=', normalizeHex(requester.user)), eb('api_key_id', '=', apiKeyId)]),
    )
    .where('created_at', '>=', since)
    .executeTakeFirst();
  return row?.latest === undefined || row.latest === null ? undefined : toNumber(row.latest);
}
