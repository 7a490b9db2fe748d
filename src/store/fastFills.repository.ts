/**
 * Fast fills (`POST /fast-fill`): a key's `waiting` request moved to `pending` before its deposit, held against the
 * key's limit (and its wallet's app-fee balance), and the deposit that arrives for it afterwards.
 */
import type { ExpectedEvent } from '../records/statusEvent.js';
import { sql, type Kysely } from 'kysely';
import { availableAppBalanceUsd, lockAppWallet } from './appFeeClaims.repository.js';
import { appendUnique } from './fragments.js';
import { normalizeHex, toBigInt, toUint256 } from './mappers.js';
import { toRequestRecord } from './requestRecord.js';
import type { RequestRecord } from '../records/request.js';
import { getRequest, updateRequestStatus } from './requests.repository.js';
import type { Tables } from './tables.js';

/** A fast fill's claim of its request: from `waiting` to `pending`, before any deposit. */
export const fastFillMove = { status: 'pending', fromStatus: 'waiting' } as const;

export interface ClaimForFastFillParameters {
  requestId: string;
  apiKeyId: string;
  /** USD value the fill puts at risk, micro-USD. */
  usdMicros: bigint;
  /** The key's limit on outstanding fast fills, micro-USD. */
  limitUsdMicros: bigint;
  /**
   * The key's wallet (its payout address), lower case: the fill is held against that wallet's app-fee balance,
   * which must cover it, besides the key's limit. Null: only the limit applies.
   */
  appWallet?: string | null;
  /** The move's event as the core built it from the request as read (`UpdateRequestStatusParameters.expected`). */
  expected?: ExpectedEvent;
  now: number;
}

export type ClaimForFastFillResult =
  | { claimed: true; request: RequestRecord }
  | { claimed: false; reason: 'not-waiting'; request: RequestRecord | undefined }
  | { claimed: false; reason: 'over-limit'; outstandingUsdMicros: bigint }
  | { claimed: false; reason: 'over-balance'; availableUsdMicros: bigint };

/**
 * Moves a `waiting` request to `pending` for a fast fill, if the key's outstanding exposure (its fast-filled
 * requests whose deposit has not arrived, not counting failed or refunded ones) stays within its limit. The
 * key's row is locked for the transaction, so two concurrent fast fills of one key cannot both pass the check.
 * With `appWallet`, the fill is also a hold on that wallet's app-fee balance, which must cover it.
 */
export async function claimForFastFill(
  db: Kysely<Tables>,
  params: ClaimForFastFillParameters,
): Promise<ClaimForFastFillResult> {
  if (!db.isTransaction) return db.transaction().execute((trx) => claimForFastFill(trx, params));
  await db.selectFrom('api_keys').select('id').where('id', '=', params.apiKeyId).forUpdate().execute();
  const row = await db
    .selectFrom('requests')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>('fast_fill_usd_micros'), sql<string>`0`).as('outstanding'))
    .where('fast_fill_api_key_id', '=', params.apiKeyId)
    .where(sql<boolean>`jsonb_array_length(in_tx_hashes) = 0`)
    .where('status', 'in', ['pending', 'submitted', 'success'])
    .executeTakeFirstOrThrow();
  const outstanding = toBigInt(String(row.outstanding).split('.')[0]!);
  if (outstanding + params.usdMicros > params.limitUsdMicros)
    return { claimed: false, reason: 'over-limit', outstandingUsdMicros: outstanding };
  if (params.appWallet != null) {
    // The wallet's lock, as claims take it: a claim and a fast fill cannot both spend one balance.
    await lockAppWallet(db, params.appWallet);
    const available = await availableAppBalanceUsd(db, params.appWallet);
    if (available < params.usdMicros) return { claimed: false, reason: 'over-balance', availableUsdMicros: available };
  }
  const moved = await updateRequestStatus(db, params.requestId, {
    ...fastFillMove,
    now: params.now,
    ...(params.expected === undefined ? {} : { expected: params.expected }),
  });
  if (moved === null) return { claimed: false, reason: 'not-waiting', request: await getRequest(db, params.requestId) };
  const updated = await db
    .updateTable('requests')
    .set({ fast_fill_api_key_id: params.apiKeyId, fast_fill_usd_micros: toUint256(params.usdMicros) })
    .where('id', '=', normalizeHex(params.requestId))
    .returningAll()
    .executeTakeFirstOrThrow();
  return { claimed: true, request: toRequestRecord(updated) };
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
