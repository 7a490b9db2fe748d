import { sql, type Kysely, type Selectable } from 'kysely';
import { fastFillHoldingStatuses } from '../records/request.js';
import { accounts, type LedgerMovement } from './ledgerMovements.js';
import { accountOwed, insertLedgerMovements } from './ledger.repository.js';
import { normalizeHex, toBigInt, toNumber } from './mappers.js';
import type { AppFeeClaimsTable, Tables } from './tables.js';
import type { ClaimRecord, ClaimStatus } from '../records/appFeeClaim.js';

function toClaimRecord(row: Selectable<AppFeeClaimsTable>): ClaimRecord {
  return {
    id: row.id,
    seq: toNumber(row.seq),
    wallet: row.wallet,
    recipient: row.recipient,
    chainId: toNumber(row.chain_id),
    currency: row.currency,
    usdMicros: toBigInt(row.usd_micros),
    feeUsdMicros: toBigInt(row.fee_usd_micros),
    amount: toBigInt(row.amount),
    message: row.message,
    status: row.status as ClaimStatus,
    txHash: row.tx_hash,
    expiresAt: toNumber(row.expires_at),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

export interface InsertClaimParameters {
  id: string;
  wallet: string;
  recipient: string;
  chainId: number;
  currency: string;
  usdMicros: bigint;
  feeUsdMicros: bigint;
  amount: bigint;
  message: string;
  expiresAt: number;
  now: number;
}

export async function insertClaim(db: Kysely<Tables>, params: InsertClaimParameters): Promise<ClaimRecord> {
  const row = await db
    .insertInto('app_fee_claims')
    .values({
      id: normalizeHex(params.id),
      wallet: normalizeHex(params.wallet),
      recipient: normalizeHex(params.recipient),
      chain_id: params.chainId,
      currency: normalizeHex(params.currency),
      usd_micros: params.usdMicros.toString(),
      fee_usd_micros: params.feeUsdMicros.toString(),
      amount: params.amount.toString(),
      message: params.message,
      status: 'authorizing',
      expires_at: params.expiresAt,
      created_at: params.now,
      updated_at: params.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return toClaimRecord(row);
}

export async function getClaim(db: Kysely<Tables>, id: string): Promise<ClaimRecord | undefined> {
  const row = await db.selectFrom('app_fee_claims').selectAll().where('id', '=', normalizeHex(id)).executeTakeFirst();
  return row === undefined ? undefined : toClaimRecord(row);
}

/** USD (micro) held by a wallet's authorized claims that are not paid yet: not available to another claim. */
export async function pendingClaimsUsd(db: Kysely<Tables>, wallet: string): Promise<bigint> {
  const row = await db
    .selectFrom('app_fee_claims')
    .select(sql<string>`coalesce(sum(usd_micros), 0)::text`.as('usd'))
    .where('wallet', '=', normalizeHex(wallet))
    .where('status', '=', 'pending')
    .executeTakeFirstOrThrow();
  return BigInt(row.usd);
}

/** The wallet's app-fee balance in micro-USD as the ledger holds it (the sum of the accruals' fill-time values). */
export async function appBalanceUsd(db: Kysely<Tables>, wallet: string): Promise<bigint> {
  return (await accountOwed(db, accounts.app(wallet))).reduce((sum, owed) => sum + owed.usdMicros, 0n);
}

/**
 * USD (micro) of a wallet's app balance held by outstanding fast fills: requests fast-filled with an API key whose
 * payout address is the wallet, whose deposit has not arrived (not counting failed or refunded ones), as the
 * key's own limit counts them.
 */
export async function fastFillHoldsUsd(db: Kysely<Tables>, wallet: string): Promise<bigint> {
  const row = await db
    .selectFrom('requests as r')
    .innerJoin('api_keys as k', 'k.id', 'r.fast_fill_api_key_id')
    .select(sql<string>`coalesce(sum(r.fast_fill_usd_micros), 0)::text`.as('usd'))
    .where('k.payout_address', '=', wallet.toLowerCase())
    .where(sql<boolean>`jsonb_array_length(r.in_tx_hashes) = 0`)
    .where('r.status', 'in', fastFillHoldingStatuses)
    .executeTakeFirstOrThrow();
  return BigInt(row.usd.split('.')[0]!);
}

/**
 * What a wallet can claim or hold now, micro-USD: its ledger balance less its authorized, unpaid claims and
 * less what its outstanding fast fills hold.
 */
export async function availableAppBalanceUsd(db: Kysely<Tables>, wallet: string): Promise<bigint> {
  return (
    (await appBalanceUsd(db, wallet)) - (await pendingClaimsUsd(db, wallet)) - (await fastFillHoldsUsd(db, wallet))
  );
}

/** Serializes, until the transaction ends, everything that spends a wallet's app balance (claims, fast fills). */
export async function lockAppWallet(db: Kysely<Tables>, wallet: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtext(${`app-fee-claim:${normalizeHex(wallet)}`}))`.execute(db);
}

/**
 * Moves a claim `authorizing -> pending` (its signature verified, its balance checked by the core under the wallet's
 * lock, `lockAppWallet`); the claim as moved, or undefined when it was no longer `authorizing` (nothing written).
 */
export async function markClaimAuthorized(
  db: Kysely<Tables>,
  params: { id: string; now: number },
): Promise<ClaimRecord | undefined> {
  const row = await db
    .updateTable('app_fee_claims')
    .set({ status: 'pending', updated_at: params.now })
    .where('id', '=', params.id)
    .where('status', '=', 'authorizing')
    .returningAll()
    .executeTakeFirst();
  return row === undefined ? undefined : toClaimRecord(row);
}

/** Claims authorized and not paid yet, oldest first (what the payer works on, also after a restart). */
export async function listPendingClaims(db: Kysely<Tables>): Promise<ClaimRecord[]> {
  const rows = await db
    .selectFrom('app_fee_claims')
    .selectAll()
    .where('status', '=', 'pending')
    .orderBy('seq', 'asc')
    .execute();
  return rows.map(toClaimRecord);
}

/**
 * The ledger movements of a paid claim (the core's `claimPaid`), from the claim and what its wallet is owed, read
 * under the wallet's lock in the claim's transaction.
 */
export type ClaimRule = (
  claim: ClaimRecord,
  owed: ReadonlyArray<{ chainId: number; currency: string; amount: bigint; usdMicros: bigint }>,
) => LedgerMovement[];

/**
 * Ends a pending claim with its payout's outcome. `success` writes the ledger's movements of the claim
 * (`claimPaid`) in the same transaction (the caller's: `updateOutgoingTx` runs it with the payout's receipt). No-op
 * when the claim is no longer pending.
 */
export async function finishClaim(
  db: Kysely<Tables>,
  params: { id: string; status: 'success' | 'failed'; txHash: string | null; now: number; claimPaid?: ClaimRule },
): Promise<ClaimRecord | undefined> {
  if (!db.isTransaction) return db.transaction().execute((trx) => finishClaim(trx, params));
  const pending = await getClaim(db, params.id);
  if (pending === undefined) return undefined;
  // The same lock as `authorizeClaim`: two claims of one wallet take their currencies from the balance in turn.
  await lockAppWallet(db, pending.wallet);
  const row = await db
    .updateTable('app_fee_claims')
    .set({
      status: params.status,
      tx_hash: params.txHash === null ? null : normalizeHex(params.txHash),
      updated_at: params.now,
    })
    .where('id', '=', normalizeHex(params.id))
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst();
  if (row === undefined) return undefined;
  const claim = toClaimRecord(row);
  if (claim.status === 'success' && params.claimPaid !== undefined) {
    const owed = await accountOwed(db, accounts.app(claim.wallet));
    await insertLedgerMovements(db, params.claimPaid(claim, owed), params.now);
  }
  return claim;
}

/**
 * Deletes the claims never signed (`authorizing`) whose signature window ended before `expiredBefore` (Unix ms);
 * returns how many. They hold nothing (only an authorized claim holds value), so nothing else changes.
 */
export async function deleteExpiredClaims(db: Kysely<Tables>, expiredBefore: number): Promise<number> {
  const result = await db
    .deleteFrom('app_fee_claims')
    .where('status', '=', 'authorizing')
    .where('expires_at', '<', expiredBefore)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A wallet's claims, newest first, after the `beforeSeq` continuation when given. */
export async function listClaims(
  db: Kysely<Tables>,
  params: { wallet: string; limit: number; beforeSeq?: number },
): Promise<ClaimRecord[]> {
  let query = db
    .selectFrom('app_fee_claims')
    .selectAll()
    .where('wallet', '=', normalizeHex(params.wallet))
    .orderBy('seq', 'desc')
    .limit(params.limit);
  if (params.beforeSeq !== undefined) query = query.where('seq', '<', params.beforeSeq);
  return (await query.execute()).map(toClaimRecord);
}
