/**
 * Housekeeping of app-fee claims in the store, on both databases: the sweep deletes the claims never signed
 * whose window ended before the cut-off and nothing else; a devnet chain reset deletes the reset chain's unsigned
 * claims, fails its authorized unpaid ones (their value returns to the wallet) and keeps its paid ones, and
 * forgets the chain's reconciliation.
 */
import { sql } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  markClaimAuthorized,
  deleteExpiredClaims,
  finishClaim,
  getClaim,
  insertClaim,
  pendingClaimsUsd,
} from '../../src/store/appFeeClaims.repository.js';
import { resetChainState } from '../../src/store/chainGenesis.repository.js';
import { insertLedgerMovements } from '../../src/store/ledger.repository.js';
import { listReconciliations, saveReconciliations } from '../../src/store/reconciliations.repository.js';
import { testDatabaseKinds, truncateAll, useTestDatabase } from '../helpers/db.js';

const wallet = '0xaaaa00000000000000000000000000000000000a';
const recipient = '0xbbbb00000000000000000000000000000000000b';
const usdc = '0x00000000000000000000000000000000000005dc';
const id = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;

describe.each(testDatabaseKinds)('app-fee claim housekeeping (%s)', (kind) => {
  const database = useTestDatabase(kind);
  beforeEach(async () => {
    await truncateAll(database());
    await sql`truncate table app_fee_claims`.execute(database().db);
    // The wallet is owed $10 (an app fee accrued), so claims can be authorized.
    await insertLedgerMovements(
      database().db,
      [
        {
          key: 'accrued',
          kind: 'app_fee_accrued',
          chainId: 1,
          currency: usdc,
          amount: 10_000_000n,
          debit: 'counterparty',
          credit: `app:${wallet}`,
          usdMicros: 10_000_000n,
          requestId: null,
        },
      ],
      1,
    );
  });

  const claim = (n: number, params: { chainId?: number; expiresAt: number }) =>
    insertClaim(database().db, {
      id: id(n),
      wallet,
      recipient,
      chainId: params.chainId ?? 31338,
      currency: usdc,
      usdMicros: 1_000_000n,
      feeUsdMicros: 0n,
      amount: 1_000_000n,
      message: id(n),
      expiresAt: params.expiresAt,
      now: 1_000,
    });

  it('the sweep deletes only unsigned claims whose window ended before the cut-off', async () => {
    const { db } = database();
    await claim(1, { expiresAt: 5_000 }); // expired long ago: deleted
    await claim(2, { expiresAt: 50_000 }); // expired after the cut-off: kept (listed as expired)
    await claim(3, { expiresAt: 5_000 }); // authorized before it expired: kept
    expect(await markClaimAuthorized(db, { id: id(3), now: 2_000 })).toMatchObject({ status: 'pending' });
    await claim(4, { expiresAt: 5_000 }); // paid: kept
    await markClaimAuthorized(db, { id: id(4), now: 2_000 });
    await finishClaim(db, { id: id(4), status: 'success', txHash: id(99), now: 3_000 });

    expect(await deleteExpiredClaims(db, 10_000)).toBe(1);
    expect(await getClaim(db, id(1))).toBeUndefined();
    expect((await getClaim(db, id(2)))?.status).toBe('authorizing');
    expect((await getClaim(db, id(3)))?.status).toBe('pending');
    expect((await getClaim(db, id(4)))?.status).toBe('success');
    expect(await deleteExpiredClaims(db, 10_000)).toBe(0);
  });

  it('a chain reset deletes its unsigned claims, fails its unpaid ones and keeps the paid ones', async () => {
    const { db } = database();
    const later = Date.now() + 600_000;
    await claim(1, { expiresAt: later }); // unsigned on the reset chain: deleted
    await claim(2, { expiresAt: later }); // authorized, not paid: failed, its value freed
    await markClaimAuthorized(db, { id: id(2), now: 2_000 });
    await claim(3, { expiresAt: later }); // paid: history
    await markClaimAuthorized(db, { id: id(3), now: 2_000 });
    await finishClaim(db, { id: id(3), status: 'success', txHash: id(98), now: 3_000 });
    await claim(4, { chainId: 1, expiresAt: later }); // another chain: untouched
    await markClaimAuthorized(db, { id: id(4), now: 2_000 });
    await saveReconciliations(db, [
      {
        chainId: 31338,
        currency: usdc,
        blockNumber: 5n,
        onChain: 1n,
        ledger: 1n,
        incoming: 0n,
        drift: 0n,
        checkedAt: 1,
      },
      { chainId: 1, currency: usdc, blockNumber: 5n, onChain: 1n, ledger: 1n, incoming: 0n, drift: 0n, checkedAt: 1 },
    ]);
    expect(await pendingClaimsUsd(db, wallet)).toBe(2_000_000n);

    const result = await resetChainState(db, 31338, `0x${'cd'.repeat(32)}`, 4_000);
    expect(result.failedClaims).toBe(1);
    expect(await getClaim(db, id(1))).toBeUndefined();
    expect(await getClaim(db, id(2))).toMatchObject({ status: 'failed', txHash: null });
    expect((await getClaim(db, id(3)))?.status).toBe('success');
    expect((await getClaim(db, id(4)))?.status).toBe('pending');
    // Only the other chain's claim still holds value.
    expect(await pendingClaimsUsd(db, wallet)).toBe(1_000_000n);
    expect((await listReconciliations(db)).map((r) => r.chainId)).toEqual([1]);
  });
});
