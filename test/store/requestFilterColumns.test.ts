/**
 * The values the history's block, fill-time, app-fee, refund-failure and feature filters compare, as the status
 * statements store them (a deposit's claim records its block, alone or grouped; a move to `success`, alone or
 * grouped, its fill time), and the filters and the `amountUsd` sort over them, on PGlite and PostgreSQL.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { insertDeposit } from '../../src/store/deposits.repository.js';
import { listRequests, type ListRequestsFilters, type SortDirection } from '../../src/store/listRequests.repository.js';
import {
  claimDepositForRequest,
  claimDepositsForRequests,
  insertRequest,
  moveRequestsWithTxHash,
  updateRequestStatus,
} from '../../src/store/requests.repository.js';
import type { Tables } from '../../src/store/tables.js';
import { testDatabaseKinds, truncateAll, useTestDatabase } from '../helpers/db.js';
import { hex32, insertConfirmedDeposits, newRequest } from './requestFixture.js';

const seenAt = 1_700_000_100_000;
const depositAddress = '0xde90517000000000000000000000000000000044';

describe.each(testDatabaseKinds)('request filter columns (%s)', (kind) => {
  const database = useTestDatabase(kind);
  /** grouped: claimed together (block 9), filled together 4 s after; single: claimed alone (block 77), filled 9 s after. */
  const ids = { grouped: '', refunded: '', single: '', appFee: '', bigAppFee: '', unpaid: '' };

  beforeAll(async () => {
    const { db } = database();
    await truncateAll(database());
    const volumes = { grouped: 30n, refunded: 10n, single: 20n, appFee: 15n, bigAppFee: 15n, unpaid: 5n };
    for (const name of Object.keys(ids) as Array<keyof typeof ids>) {
      const request = await insertRequest(db, {
        ...newRequest({ volumeUsdMicros: volumes[name] * 1_000_000n }),
        ...(name === 'appFee' ? { appFeesUsdMicros: 100_000n } : {}),
        ...(name === 'bigAppFee' ? { appFeesUsdMicros: 250_000n } : {}),
        ...(name === 'unpaid' ? { depositAddress } : {}),
      });
      ids[name] = request.id;
    }
    const claims = await insertConfirmedDeposits(db, [ids.grouped, ids.refunded], 0x7000);
    const claimed = await db
      .transaction()
      .execute((trx) =>
        claimDepositsForRequests(trx, claims, { status: 'pending', fromStatus: ['waiting'], now: seenAt }),
      );
    expect(claimed.every((answer) => typeof answer === 'object')).toBe(true);
    const { deposit } = await insertDeposit(db, {
      chainId: 31337,
      txHash: hex32(0x7100),
      logIndex: 0,
      blockNumber: 77n,
      blockHash: hex32(0x7101),
      requestId: ids.single,
      depositor: '0x1111111111111111111111111111111111111111',
      token: '0x0000000000000000000000000000000000000000',
      amount: 1_000_000n,
      status: 'confirmed',
      now: seenAt,
    });
    const single = await db.transaction().execute((trx) =>
      claimDepositForRequest(trx, deposit.id, ids.single, {
        status: 'pending',
        fromStatus: 'waiting',
        now: seenAt,
      }),
    );
    expect(single.moved).not.toBeNull();
    // `insertConfirmedDeposits` sees its deposits at t = 5 ms: the grouped fill's time counts from there.
    await db.transaction().execute((trx) =>
      moveRequestsWithTxHash(trx, [{ requestId: ids.grouped, txHash: hex32(0x7200) }], {
        status: 'success',
        fromStatus: ['pending'],
        now: 5 + 4_000,
      }),
    );
    await updateRequestStatus(db, ids.single, { status: 'success', fromStatus: 'pending', now: seenAt + 9_000 });
    await updateRequestStatus(db, ids.refunded, {
      status: 'failure',
      failReason: 'SOLVER_BALANCE_TOO_LOW',
      refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND',
      now: seenAt + 1_000,
    });
  });

  async function listed(filters: ListRequestsFilters): Promise<Set<string>> {
    const { requests } = await listRequests(database().db, filters, { limit: 50 });
    return new Set(requests.map((request) => request.id));
  }

  it('a claim records the deposit’s block, alone or grouped', async () => {
    const row = async (id: string) =>
      database()
        .db.selectFrom('requests')
        .select(['origin_block', 'fill_time_ms', 'app_fees_usd_micros'] satisfies Array<keyof Tables['requests']>)
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    expect(Number((await row(ids.grouped)).origin_block)).toBe(9);
    expect(Number((await row(ids.single)).origin_block)).toBe(77);
    expect((await row(ids.unpaid)).origin_block).toBeNull();
    expect(Number((await row(ids.grouped)).fill_time_ms)).toBe(4_000);
    expect(Number((await row(ids.single)).fill_time_ms)).toBe(9_000);
    expect((await row(ids.refunded)).fill_time_ms).toBeNull();
    expect(String((await row(ids.appFee)).app_fees_usd_micros)).toBe('100000');
    expect((await row(ids.unpaid)).app_fees_usd_micros).toBeNull();
  });

  it.each<[string, ListRequestsFilters, Array<keyof typeof ids>]>([
    ['startBlock', { startBlock: 10 }, ['single']],
    ['endBlock', { endBlock: 9 }, ['grouped', 'refunded']],
    ['both block bounds', { startBlock: 9, endBlock: 77 }, ['grouped', 'refunded', 'single']],
    ['fillTimeMinMs', { fillTimeMinMs: 5_000 }, ['single']],
    ['fillTimeMaxMs', { fillTimeMaxMs: 4_000 }, ['grouped']],
    ['both fill-time bounds', { fillTimeMinMs: 0, fillTimeMaxMs: 9_000 }, ['grouped', 'single']],
    ['appFeesUsdMinMicros', { appFeesUsdMinMicros: 200_000n }, ['bigAppFee']],
    ['appFeesUsdMaxMicros', { appFeesUsdMaxMicros: 100_000n }, ['appFee']],
    ['a refund fail reason', { refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND' }, ['refunded']],
    ['no refund fail reason', { refundFailReason: null }, ['grouped', 'single', 'appFee', 'bigAppFee', 'unpaid']],
    ['feature app_fees', { features: ['app_fees'] }, ['appFee', 'bigAppFee']],
    ['any of two features', { features: ['app_fees', 'deposit_address'] }, ['appFee', 'bigAppFee', 'unpaid']],
    ['no feature', { features: [] }, []],
    [
      'amountUsd bounds',
      { amountUsdMinMicros: 15_000_000n, amountUsdMaxMicros: 20_000_000n },
      ['single', 'appFee', 'bigAppFee'],
    ],
  ])('filters by %s', async (_name, filters, expected) => {
    expect(await listed(filters)).toEqual(new Set(expected.map((name) => ids[name])));
  });

  it.each<SortDirection>(['asc', 'desc'])('sorts by amountUsd %s across ties, page by page', async (direction) => {
    const { db } = database();
    const { requests } = await listRequests(db, {}, { limit: 50, sortBy: 'amountUsd', sortDirection: direction });
    const sign = direction === 'asc' ? 1 : -1;
    const expected = [...requests]
      .sort((a, b) => sign * (Number(a.volumeUsdMicros - b.volumeUsdMicros) || (a.id < b.id ? -1 : 1)))
      .map((request) => request.id);
    expect(requests.map((request) => request.id)).toEqual(expected);
    expect(requests).toHaveLength(6);
    const paged: string[] = [];
    let continuation: string | undefined;
    do {
      const page = await listRequests(
        db,
        {},
        { limit: 1, sortBy: 'amountUsd', sortDirection: direction, continuation },
      );
      paged.push(...page.requests.map((request) => request.id));
      continuation = page.continuation;
    } while (continuation !== undefined);
    expect(paged).toEqual(expected);
  });
});
