import { beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { Hex } from 'viem';
import { reservePermitDeadline } from '../../src/core/permits/deadlines.js';
import { isGatewayError } from '../../src/core/errors.js';
import { deletePassedPermitDeadlines } from '../../src/store/permitDeadlines.repository.js';
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
const permitKey = {
  chainId: 31337,
  token: '0x00000000000000000000000000000000000070cE',
  owner: '0xA11cE00000000000000000000000000000000001',
  nonce: '0',
};
const requestId = (i: number): Hex => `0x${i.toString(16).padStart(64, '0')}`;

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

  // EIP-2612 deadlines handed out by quotes (src/core/permits/deadlines.ts): each second of one owner's nonce on
  // one token goes to one request, also when quotes race; the retention drops the ones that passed.
  it('gives racing permit quotes of one owner, token and nonce distinct deadlines, the latest free first', async () => {
    await sql`truncate table permit_deadlines`.execute(database().db);
    const ctx = { db: database().db };
    const window = { earliest: 1_000, latest: 1_600 };
    const deadlines = await Promise.all(
      Array.from({ length: 8 }, (_unused, i) => reservePermitDeadline(ctx, permitKey, window, requestId(i))),
    );
    expect(new Set(deadlines).size).toBe(8);
    expect([...deadlines].sort((a, b) => b - a)).toEqual([1_600, 1_599, 1_598, 1_597, 1_596, 1_595, 1_594, 1_593]);
    // Another nonce is another message: its deadlines are its own. The owner in lower case is the same owner.
    expect(await reservePermitDeadline(ctx, { ...permitKey, nonce: '1' }, window, requestId(9))).toBe(1_600);
    expect(
      await reservePermitDeadline(ctx, { ...permitKey, owner: permitKey.owner.toLowerCase() }, window, requestId(10)),
    ).toBe(1_592);
  });

  it('refuses RATE_LIMITED when every second of the window is held, and frees the seconds that passed', async () => {
    await sql`truncate table permit_deadlines`.execute(database().db);
    const ctx = { db: database().db };
    const window = { earliest: 2_000, latest: 2_002 };
    for (let i = 0; i < 3; i++) await reservePermitDeadline(ctx, permitKey, window, requestId(i));
    const refusal = await reservePermitDeadline(ctx, permitKey, window, requestId(3)).catch((error: unknown) => error);
    expect(isGatewayError(refusal) && refusal.code).toBe('RATE_LIMITED');

    expect(await deletePassedPermitDeadlines(ctx.db, 2_002)).toBe(2);
    expect(await reservePermitDeadline(ctx, permitKey, { earliest: 1_990, latest: 2_002 }, requestId(4))).toBe(2_001);
  });
});
