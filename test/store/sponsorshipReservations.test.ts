/**
 * Sponsorship reserved by sponsored quotes, on both databases: the reservation is taken in the statement that stores
 * the request (racing quotes cannot overdraw a key), released once when the request fails, is refunded, expires
 * unpaid or is deleted, and drawn once when it fills, each with the change that causes it.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { storeSponsoredRequest } from '../../src/core/quote/sponsorshipReservation.js';
import { drawSponsorship, getApiKey, insertApiKey, updateApiKey } from '../../src/store/apiKeys.repository.js';
import {
  deleteExpiredUnpaidRequests,
  deleteUnansweredRequest,
  failRequests,
  getRequest,
  insertSponsoredRequest,
  updateRequestStatus,
  type InsertRequestParameters,
} from '../../src/store/requests.repository.js';
import { releaseExpiredSponsorships } from '../../src/store/sponsorshipReservations.js';
import { testDatabaseKinds, truncateAll, useTestDatabase } from '../helpers/db.js';
import { newRequest } from './requestFixture.js';

const base = 1_700_000_000_000;

describe.each(testDatabaseKinds)('sponsorship reservations (%s)', (kind) => {
  const database = useTestDatabase(kind);
  beforeEach(async () => {
    await truncateAll(database());
    for (const id of ['sponsor', 'other'])
      await insertApiKey(database().db, {
        id,
        name: id,
        keyHash: `sha256:${id}`,
        sponsorshipEnabled: true,
        sponsorshipAllowanceUsdMicros: 1_000n,
        now: base,
      });
  });

  const sponsored = (overrides: Partial<InsertRequestParameters> = {}) =>
    newRequest({ apiKeyId: 'sponsor', expiresAt: base + 60_000, ...overrides }) as InsertRequestParameters & {
      apiKeyId: string;
    };
  const meter = async (id = 'sponsor') => {
    const key = (await getApiKey(database().db, id))!;
    return { spent: key.sponsorshipSpentUsdMicros, reserved: key.sponsorshipReservedUsdMicros };
  };
  const stateOf = async (id: string) =>
    (
      await database()
        .db.selectFrom('requests')
        .select(['sponsorship_state', 'sponsorship_usd_micros'])
        .where('id', '=', id)
        .executeTakeFirst()
    )?.sponsorship_state;

  it('racing quotes for the last of an allowance: exactly those that fit are stored and reserved', async () => {
    const { db } = database();
    // Ten quotes of 300 at once (on PostgreSQL each on its own pooled connection): three fit in 1000.
    const requests = Array.from({ length: 10 }, () => sponsored());
    const stored = await Promise.all(requests.map((request) => insertSponsoredRequest(db, request, 300n)));
    expect(stored.filter(Boolean)).toHaveLength(3);
    expect(await meter()).toEqual({ spent: 0n, reserved: 900n });
    for (const [index, request] of requests.entries()) {
      // A refused quote stored nothing.
      expect(await getRequest(db, request.id)).toEqual(stored[index] ? expect.anything() : undefined);
    }
    // Exactly the rest still fits; one more micro-USD does not. A gasless batch's draw counts what quotes hold.
    expect(await insertSponsoredRequest(db, sponsored(), 101n)).toBe(false);
    expect(await drawSponsorship(db, 'sponsor', 101n)).toBeNull();
    expect(await drawSponsorship(db, 'sponsor', 50n)).toBe(50n);
    expect(await insertSponsoredRequest(db, sponsored(), 50n)).toBe(true);
    expect(await meter()).toEqual({ spent: 50n, reserved: 950n });
    // A key with sponsorship off, or revoked, reserves nothing.
    await updateApiKey(db, 'other', { sponsorshipEnabled: false });
    expect(await insertSponsoredRequest(db, sponsored({ apiKeyId: 'other' }), 1n)).toBe(false);
    expect(await meter('other')).toEqual({ spent: 0n, reserved: 0n });
  });

  it('a fill draws the reservation, a failure or refund releases it once, each with its status change', async () => {
    const { db } = database();
    const [filled, refunded, failedTogether, untouched] = [sponsored(), sponsored(), sponsored(), sponsored()];
    for (const request of [filled, refunded, failedTogether, untouched])
      expect(await insertSponsoredRequest(db, request, 100n)).toBe(true);
    expect(await meter()).toEqual({ spent: 0n, reserved: 400n });

    // Filled: drawn (reserved -> spent), with the move to `success`.
    await updateRequestStatus(db, filled.id, { status: 'pending', fromStatus: 'waiting', now: base + 1 });
    await updateRequestStatus(db, filled.id, { status: 'submitted', fromStatus: 'pending', now: base + 2 });
    expect(await meter()).toEqual({ spent: 0n, reserved: 400n });
    await updateRequestStatus(db, filled.id, { status: 'success', fromStatus: 'submitted', now: base + 3 });
    expect(await meter()).toEqual({ spent: 100n, reserved: 300n });
    expect(await stateOf(filled.id)).toBe('drawn');

    // Failed, then refunded: released at the failure, and not again at the refund.
    await updateRequestStatus(db, refunded.id, { status: 'pending', fromStatus: 'waiting', now: base + 1 });
    await updateRequestStatus(db, refunded.id, { status: 'failure', fromStatus: 'pending', now: base + 2 });
    expect(await meter()).toEqual({ spent: 100n, reserved: 200n });
    await updateRequestStatus(db, refunded.id, { status: 'refund', fromStatus: 'failure', now: base + 3 });
    expect(await meter()).toEqual({ spent: 100n, reserved: 200n });
    expect(await stateOf(refunded.id)).toBe('released');

    // A grouped move (a chain reset's `failRequests`) releases in its transaction; a skipped move changes nothing.
    await db.transaction().execute((trx) =>
      failRequests(trx, [failedTogether.id, filled.id], {
        fromStatus: ['waiting', 'pending'],
        failReason: 'UNKNOWN',
        now: base + 4,
      }),
    );
    expect(await meter()).toEqual({ spent: 100n, reserved: 100n });
    expect(await stateOf(filled.id)).toBe('drawn');

    // A move that rolls back takes its release with it.
    await db
      .transaction()
      .execute(async (trx) => {
        await updateRequestStatus(trx, untouched.id, { status: 'failure', fromStatus: 'waiting', now: base + 5 });
        throw new Error('rolled back');
      })
      .catch(() => undefined);
    expect(await meter()).toEqual({ spent: 100n, reserved: 100n });
    expect(await stateOf(untouched.id)).toBe('reserved');
  });

  it('expired unpaid quotes give their reservations back; a paid one keeps it; a deleted one gives it back', async () => {
    const { db } = database();
    const expired = [sponsored({ expiresAt: base }), sponsored({ expiresAt: base })];
    const otherKey = sponsored({ apiKeyId: 'other', expiresAt: base });
    const paid = sponsored({ expiresAt: base });
    const fresh = sponsored({ expiresAt: base + 60_000 });
    const unanswered = sponsored({ expiresAt: base + 60_000 });
    for (const request of [...expired, otherKey, paid, fresh, unanswered])
      expect(await insertSponsoredRequest(db, request, 100n)).toBe(true);
    await updateRequestStatus(db, paid.id, { status: 'pending', fromStatus: 'waiting', now: base - 1 });
    expect(await meter()).toEqual({ spent: 0n, reserved: 500n });

    // The quote whose wallet read failed is removed with its reservation.
    expect(await deleteUnansweredRequest(db, unanswered.id)).toBe(true);
    expect(await meter()).toEqual({ spent: 0n, reserved: 400n });

    // One key's sweep (a refused quote reclaiming its own), then everyone's.
    expect(await releaseExpiredSponsorships(db, { expiredBefore: base + 1, apiKeyId: 'sponsor', limit: 1 })).toBe(1);
    expect(await releaseExpiredSponsorships(db, { expiredBefore: base + 1, apiKeyId: 'sponsor', limit: 10 })).toBe(1);
    expect(await meter()).toEqual({ spent: 0n, reserved: 200n });
    expect(await meter('other')).toEqual({ spent: 0n, reserved: 100n });
    expect(await releaseExpiredSponsorships(db, { expiredBefore: base + 1, limit: 10 })).toBe(1);
    expect(await meter('other')).toEqual({ spent: 0n, reserved: 0n });
    expect(await releaseExpiredSponsorships(db, { expiredBefore: base + 1, limit: 10 })).toBe(0);
    // The paid request keeps its reservation; the fresh one too. A late deposit's refund of an expired one releases
    // nothing more.
    expect(await stateOf(paid.id)).toBe('reserved');
    await updateRequestStatus(db, expired[0]!.id, { status: 'pending', fromStatus: 'waiting', now: base + 2 });
    await updateRequestStatus(db, expired[0]!.id, { status: 'refund', fromStatus: 'pending', now: base + 3 });
    expect(await meter()).toEqual({ spent: 0n, reserved: 200n });

    // The retention job's delete gives back what is still reserved (a sweep that has not run), and only that.
    await db.updateTable('requests').set({ expires_at: base }).where('id', '=', fresh.id).execute();
    expect(await deleteExpiredUnpaidRequests(db, { expiredBefore: base + 1, limit: 10 })).toBe(3);
    expect(await meter()).toEqual({ spent: 0n, reserved: 100n });
    expect(await getRequest(db, paid.id)).toBeDefined();
  });

  it('a refused quote first reclaims its own key’s expired reservations, then is refused with what is left', async () => {
    const { db } = database();
    expect(await insertSponsoredRequest(db, sponsored({ expiresAt: base }), 700n)).toBe(true);
    const quiet = () => undefined;
    const ctx = { db, now: () => base + 1, log: { debug: quiet, info: quiet, warn: quiet, error: quiet } };
    await storeSponsoredRequest(ctx, sponsored(), 600n);
    expect(await meter()).toEqual({ spent: 0n, reserved: 600n });
    const refused = sponsored();
    await expect(storeSponsoredRequest(ctx, refused, 500n)).rejects.toMatchObject({
      code: 'SPONSOR_BALANCE_TOO_LOW',
      data: 'remainingUsdMicros=400',
    });
    expect(await getRequest(db, refused.id)).toBeUndefined();
    expect(await meter()).toEqual({ spent: 0n, reserved: 600n });
  });
});
