/**
 * Fast fills (`POST /fast-fill`): what the core's claim of one reads and writes under the key's lock (the exposure
 * of the key's fast fills awaiting their deposits, the request marked), and the deposit that arrives afterwards.
 */
import { sql, type Kysely } from 'kysely';
import { appendUnique } from './fragments.js';
import { normalizeHex, toBigInt, toUint256 } from './mappers.js';
import { toRequestRecord } from './requestRecord.js';
import { fastFillHoldingStatuses, type RequestRecord } from '../records/request.js';
import type { Tables } from './tables.js';

/** Locks an API key's row until the transaction ends: its fast fills' exposure is checked and held under it. */
export async function lockApiKeyForFastFill(trx: Kysely<Tables>, apiKeyId: string): Promise<void> {
  await trx.selectFrom('api_keys').select('id').where('id', '=', apiKeyId).forUpdate().execute();
}

/**
 * The USD value (micro-USD) of a key's fast fills held against it (`fastFillHoldingStatuses`): fast-filled requests
 * whose deposit has not arrived (no origin hash recorded).
 */
export async function sumFastFillsAwaitingDeposit(db: Kysely<Tables>, apiKeyId: string): Promise<bigint> {
  const row = await db
    .selectFrom('requests')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('fast_fill_usd_micros'), sql<string>`0`).as('outstanding'))
    .where('fast_fill_api_key_id', '=', apiKeyId)
    .where(sql<boolean>`jsonb_array_length(in_tx_hashes) = 0`)
    .where('status', 'in', fastFillHoldingStatuses)
    .executeTakeFirstOrThrow();
  return toBigInt(String(row.outstanding).split('.')[0]!);
}

/** Records that `apiKeyId` fast-filled the request, holding `usdMicros` against it; the request as written. */
export async function markFastFilled(
  db: Kysely<Tables>,
  requestId: string,
  params: { apiKeyId: string; usdMicros: bigint },
): Promise<RequestRecord> {
  const updated = await db
    .updateTable('requests')
    .set({ fast_fill_api_key_id: params.apiKeyId, fast_fill_usd_micros: toUint256(params.usdMicros) })
    .where('id', '=', normalizeHex(requestId))
    .returningAll()
    .executeTakeFirstOrThrow();
  return toRequestRecord(updated);
}

/** Records the deposit of a fast-filled request (its origin hash and its row) without changing its status. */
export async function attachDepositToFastFill(
  db: Kysely<Tables>,
  requestId: string,
  deposit: { id: number; txHash: string },
  now: number,
): Promise<RequestRecord | null> {
  const row = await db
    .updateTable('requests')
    .set({
      in_tx_hashes: appendUnique('in_tx_hashes', normalizeHex(deposit.txHash)),
      deposit_id: deposit.id,
      updated_at: sql<string>`greatest(updated_at, ${now})`,
    })
    .where('id', '=', normalizeHex(requestId))
    .where('fast_fill_api_key_id', 'is not', null)
    .where(sql<boolean>`jsonb_array_length(in_tx_hashes) = 0`)
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? null : toRequestRecord(row);
}
