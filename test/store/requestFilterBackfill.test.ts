/**
 * The backfill of the per-request filter values for requests stored before they existed: the requests go through
 * the live statements (claims, moves to `success`), the three columns are then emptied as an older gateway left
 * them, and the migration must write back what the live statements wrote, so the filters find the old requests.
 * On PGlite and PostgreSQL.
 */
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { up as backfill } from '../../src/store/migrations/2026_12_01_1000_backfill_request_filter_columns.js';
import { listRequests, type ListRequestsFilters } from '../../src/store/listRequests.repository.js';
import { claimDepositsForRequests, insertRequest, updateRequestStatus } from '../../src/store/requests.repository.js';
import { testDatabaseKinds, truncateAll, useTestDatabase } from '../helpers/db.js';
import { insertConfirmedDeposits, newRequest } from './requestFixture.js';

const appFeeBreakdown = (app: string, recipients: number) => ({
  execution: { usd: '0.02' },
  appFees: Array.from({ length: recipients }, () => ({ recipient: '0x3333333333333333333333333333333333333333' })),
  usdMicros: { in: '1000000', app },
});

describe.each(testDatabaseKinds)('backfill of the request filter columns (%s)', (kind) => {
  const database = useTestDatabase(kind);
  const ids = { filled: '', claimed: '', appFee: '', noAppFee: '', oldBreakdown: '', unpaid: '' };
  let live: Array<{ id: string; origin_block: unknown; fill_time_ms: unknown; app_fees_usd_micros: unknown }>;

  const columns = async () =>
    (
      await database()
        .db.selectFrom('requests')
        .select(['id', 'origin_block', 'fill_time_ms', 'app_fees_usd_micros'])
        .orderBy('id')
        .execute()
    ).map((row) => ({
      id: row.id,
      origin_block: row.origin_block === null ? null : String(row.origin_block),
      fill_time_ms: row.fill_time_ms === null ? null : String(row.fill_time_ms),
      app_fees_usd_micros: row.app_fees_usd_micros === null ? null : String(row.app_fees_usd_micros),
    }));

  beforeAll(async () => {
    const { db } = database();
    await truncateAll(database());
    for (const name of Object.keys(ids) as Array<keyof typeof ids>) {
      const request = await insertRequest(db, {
        ...newRequest(),
        ...(name === 'appFee' ? { feesQuoted: appFeeBreakdown('125000', 1), appFeesUsdMicros: 125_000n } : {}),
        ...(name === 'noAppFee' ? { feesQuoted: appFeeBreakdown('0', 0) } : {}),
      });
      ids[name] = request.id;
    }
    // Seen at t = 5 ms (`insertConfirmedDeposits`), claimed, the first one filled 7 s later.
    const claims = await insertConfirmedDeposits(db, [ids.filled, ids.claimed], 0x8000);
    await db
      .transaction()
      .execute((trx) => claimDepositsForRequests(trx, claims, { status: 'pending', fromStatus: ['waiting'], now: 10 }));
    await updateRequestStatus(db, ids.filled, { status: 'success', fromStatus: 'pending', now: 5 + 7_000 });
    live = await columns();
    // An older gateway stored none of the three values.
    await sql`update requests set origin_block = null, fill_time_ms = null, app_fees_usd_micros = null`.execute(db);
  });

  async function listed(filters: ListRequestsFilters): Promise<Set<string>> {
    const { requests } = await listRequests(database().db, filters, { limit: 50 });
    return new Set(requests.map((request) => request.id));
  }

  it('writes back what the live statements wrote, and filters find the old requests', async () => {
    const { db } = database();
    expect(await listed({ startBlock: 0 })).toEqual(new Set());
    await backfill(db);
    expect(await columns()).toEqual(live);
    const row = (name: keyof typeof ids) => live.find((entry) => entry.id === ids[name])!;
    expect(row('filled')).toMatchObject({ origin_block: '9', fill_time_ms: '7000' });
    expect(row('claimed')).toMatchObject({ origin_block: '9', fill_time_ms: null });
    expect(row('appFee').app_fees_usd_micros).toBe('125000');
    expect(row('noAppFee').app_fees_usd_micros).toBeNull();
    expect(row('oldBreakdown').app_fees_usd_micros).toBeNull();
    expect(row('unpaid')).toMatchObject({ origin_block: null, fill_time_ms: null, app_fees_usd_micros: null });
    expect(await listed({ startBlock: 9, endBlock: 9 })).toEqual(new Set([ids.filled, ids.claimed]));
    expect(await listed({ fillTimeMinMs: 7_000, fillTimeMaxMs: 7_000 })).toEqual(new Set([ids.filled]));
    expect(await listed({ appFeesUsdMinMicros: 100_000n })).toEqual(new Set([ids.appFee]));
    expect(await listed({ features: ['app_fees'] })).toEqual(new Set([ids.appFee]));
  });

  it('changes nothing when run again', async () => {
    await backfill(database().db);
    expect(await columns()).toEqual(live);
  });
});
