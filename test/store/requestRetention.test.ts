import { beforeEach, describe, expect, it } from 'vitest';
import { insertDeposit } from '../../src/store/deposits.repository.js';
import {
  deleteExpiredUnpaidRequests,
  getRequest,
  insertRequests,
  updateRequestStatus,
} from '../../src/store/requests.repository.js';
import { countRequests, listRequests } from '../../src/store/listRequests.repository.js';
import { testDatabaseKinds, truncateAll, useTestDatabase } from '../helpers/db.js';
import { newRequest } from './requestFixture.js';

const base = 1_700_000_000_000;
const alice = '0xa11ce00000000000000000000000000000000001';

describe.each(testDatabaseKinds)('bounded count and retention of requests (%s)', (kind) => {
  const database = useTestDatabase(kind);
  beforeEach(async () => truncateAll(database()));

  it('counts the requests the listing would page through, with filters and exact bounds, stopping at the cap', async () => {
    const db = database().db;
    await insertRequests(
      db,
      Array.from({ length: 120 }, (_unused, i) =>
        newRequest({ createdAt: base + i * 10, ...(i % 2 === 0 ? { user: alice } : {}) }),
      ),
    );
    let walked = 0;
    let continuation: string | undefined;
    do {
      const page = await listRequests(
        db,
        { user: alice },
        { limit: 50, ...(continuation === undefined ? {} : { continuation }) },
      );
      walked += page.requests.length;
      continuation = page.continuation;
    } while (continuation !== undefined);

    expect(walked).toBe(60);
    expect(await countRequests(db, { user: alice }, { cap: 10_000 })).toBe(60);
    expect(await countRequests(db, {}, { cap: 10_000 })).toBe(120);
    // Exact millisecond bounds, inclusive: createdAt base+100 .. base+199 holds 10 requests.
    expect(await countRequests(db, {}, { from: base + 100, to: base + 199, cap: 10_000 })).toBe(10);
    // The count stops at its cap: the work is bounded whatever the table holds.
    expect(await countRequests(db, {}, { cap: 25 })).toBe(25);
    expect(await countRequests(db, { status: [] }, { cap: 10_000 })).toBe(0);
  });

  it('deletes never-paid expired requests in bounded batches and keeps paid, unexpired and deposited ones', async () => {
    const db = database().db;
    const expired = Array.from({ length: 30 }, () => newRequest({ expiresAt: base }));
    const fresh = newRequest({ expiresAt: base + 60_000 });
    const paid = newRequest({ expiresAt: base });
    const depositedLate = newRequest({ expiresAt: base });
    await insertRequests(db, [...expired, fresh, paid, depositedLate]);
    await updateRequestStatus(db, paid.id, { status: 'depositing', now: base + 1 });
    // A deposit seen for a still-waiting request (not yet confirmed): its request is kept.
    await insertDeposit(db, {
      chainId: 31337,
      txHash: `0x${'ab'.repeat(32)}`,
      logIndex: 0,
      blockNumber: 1n,
      blockHash: `0x${'cd'.repeat(32)}`,
      requestId: depositedLate.id,
      depositor: alice,
      token: '0x0000000000000000000000000000000000000000',
      amount: 1_000_000n,
      now: base + 2,
    });

    expect(await deleteExpiredUnpaidRequests(db, { expiredBefore: base + 1, limit: 20 })).toBe(20);
    expect(await deleteExpiredUnpaidRequests(db, { expiredBefore: base + 1, limit: 20 })).toBe(10);
    expect(await deleteExpiredUnpaidRequests(db, { expiredBefore: base + 1, limit: 20 })).toBe(0);

    expect(await countRequests(db, {}, { cap: 10_000 })).toBe(3);
    expect(await getRequest(db, expired[0]!.id)).toBeUndefined();
    expect((await getRequest(db, fresh.id))?.status).toBe('waiting');
    expect((await getRequest(db, paid.id))?.status).toBe('depositing');
    expect((await getRequest(db, depositedLate.id))?.status).toBe('waiting');
  });
});
