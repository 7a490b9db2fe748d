import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidContinuationError } from '../../src/store/errors.js';
import type { RequestRecord } from '../../src/records/request.js';
import { getRequest, insertRequest, updateRequestStatus } from '../../src/store/requests.repository.js';
import {
  listRequests,
  type ListRequestsFilters,
  type RequestSortBy,
  type SortDirection,
} from '../../src/store/listRequests.repository.js';
import { testDatabaseKinds, truncateAll, useTestDatabase } from '../helpers/db.js';
import { hex32, newRequest } from './requestFixture.js';

const base = 1_700_000_000_000; // a whole second
const alice = '0xa11ce00000000000000000000000000000000001';
const bob = '0xb0b0000000000000000000000000000000000002';
const carol = '0xca401000000000000000000000000000000000003';
const depositAddress = '0xde90517000000000000000000000000000000004';

/** Seeds with deliberate ties in createdAt and updatedAt; returns the stored records. */
async function seed(db: Parameters<typeof insertRequest>[0]): Promise<RequestRecord[]> {
  const createdOffsets = [0, 0, 0, 999, 1000, 1000, 2000, 3000, 3000, 3000, 4000, 5000, 5000];
  const ids: string[] = [];
  for (const [i, offset] of createdOffsets.entries()) {
    const request = await insertRequest(
      db,
      newRequest({
        id: hex32(0x5000 + ((i * 7) % 13)), // ids not in insertion order, so the tie-break is visible
        createdAt: base + offset,
        user: i % 3 === 0 ? alice : bob,
        recipient: i % 4 === 0 ? carol : bob,
        originChainId: [1, 10, 8453][i % 3]!,
        destinationChainId: [10, 8453, 1, 42161][i % 4]!,
        referrer: i % 2 === 0 ? 'app-one' : null,
        apiKeyId: ['key-a', 'key-b', null][i % 3]!,
        depositAddress: i === 5 || i === 9 ? depositAddress : null,
      }),
    );
    ids.push(request.id);
  }
  // Status changes, some at the same instant, so updatedAt has ties too.
  await updateRequestStatus(db, ids[0]!, { status: 'pending', now: base + 10_000 });
  await updateRequestStatus(db, ids[1]!, { status: 'success', now: base + 10_000 });
  await updateRequestStatus(db, ids[2]!, { status: 'refund', failReason: 'DOUBLE_SPEND', now: base + 10_000 });
  await updateRequestStatus(db, ids[3]!, { status: 'failure', failReason: 'EXECUTION_REVERTED', now: base + 11_000 });
  await updateRequestStatus(db, ids[7]!, { status: 'refund', failReason: 'ORDER_EXPIRED', now: base + 11_000 });
  await updateRequestStatus(db, ids[12]!, { status: 'submitted', now: base + 12_000 });
  return Promise.all(ids.map(async (id) => (await getRequest(db, id))!));
}

/** The order the repository must produce, computed independently. */
function sorted(records: RequestRecord[], sortBy: RequestSortBy, direction: SortDirection): string[] {
  const key = (r: RequestRecord) => (sortBy === 'createdAt' ? r.createdAt : r.updatedAt);
  const sign = direction === 'asc' ? 1 : -1;
  return [...records]
    .sort((a, b) => sign * (key(a) - key(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))
    .map((r) => r.id);
}

describe.each(testDatabaseKinds)('listRequests (%s)', (kind) => {
  const database = useTestDatabase(kind);
  let records: RequestRecord[];
  beforeAll(async () => {
    await truncateAll(database());
    records = await seed(database().db);
  });

  /** Every page, following continuations; checks each page's size. */
  async function listAll(
    filters: ListRequestsFilters,
    sortBy: RequestSortBy = 'createdAt',
    sortDirection: SortDirection = 'desc',
    limit = 4,
  ): Promise<string[]> {
    const ids: string[] = [];
    let continuation: string | undefined;
    for (let page = 0; page < 100; page++) {
      const result = await listRequests(database().db, filters, { limit, continuation, sortBy, sortDirection });
      expect(result.requests.length).toBeLessThanOrEqual(limit);
      ids.push(...result.requests.map((r) => r.id));
      continuation = result.continuation;
      if (continuation === undefined) return ids;
      expect(result.requests).toHaveLength(limit);
    }
    throw new Error('pagination did not end');
  }

  it.each([
    ['createdAt', 'desc'],
    ['createdAt', 'asc'],
    ['updatedAt', 'desc'],
    ['updatedAt', 'asc'],
  ] as const)('pages by %s %s across ties, every row exactly once, in order', async (sortBy, direction) => {
    for (const limit of [1, 2, 3, 5, 50]) {
      const ids = await listAll({}, sortBy, direction, limit);
      expect(ids).toEqual(sorted(records, sortBy, direction));
    }
  });

  it('returns full records and defaults to createdAt desc', async () => {
    const { requests, continuation } = await listRequests(database().db, {}, { limit: 50 });
    expect(continuation).toBeUndefined();
    expect(requests.map((r) => r.id)).toEqual(sorted(records, 'createdAt', 'desc'));
    expect(requests).toEqual(expect.arrayContaining(records));
  });

  it('clamps the limit to 1..50', async () => {
    const { db } = database();
    expect((await listRequests(db, {}, { limit: 0 })).requests).toHaveLength(1);
    expect((await listRequests(db, {}, { limit: 1000 })).requests).toHaveLength(records.length);
  });

  it('neither repeats nor skips rows when newer rows arrive between pages', async () => {
    const { db } = database();
    const first = await listRequests(db, {}, { limit: 4 });
    const late = await insertRequest(db, newRequest({ createdAt: base + 60_000 }));
    try {
      const ids = first.requests.map((r) => r.id);
      let continuation = first.continuation;
      while (continuation !== undefined) {
        const page = await listRequests(db, {}, { limit: 4, continuation });
        ids.push(...page.requests.map((r) => r.id));
        continuation = page.continuation;
      }
      expect(ids).toEqual(sorted(records, 'createdAt', 'desc'));
    } finally {
      await database().db.deleteFrom('requests').where('id', '=', late.id).execute();
    }
  });

  it('rejects a malformed continuation, or one made for another sort (the API answers INVALID_INPUT)', async () => {
    const { db } = database();
    const { continuation } = await listRequests(db, {}, { limit: 2, sortBy: 'createdAt', sortDirection: 'desc' });
    expect(continuation).toBeDefined();
    for (const [bad, options] of [
      ['not-a-cursor', {}],
      [Buffer.from('{"s":"createdAt","d":"desc","k":"x","i":1}').toString('base64url'), {}],
      [continuation!, { sortDirection: 'asc' as const }],
      [continuation!, { sortBy: 'updatedAt' as const }],
    ] as const) {
      const error = await listRequests(db, {}, { continuation: bad, ...options }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(InvalidContinuationError);
    }
  });

  const ms = (offset: number) => base + offset;
  const filterCases: [string, ListRequestsFilters, (r: RequestRecord) => boolean][] = [
    ['user', { user: alice.toUpperCase().replace('0X', '0x') }, (r) => r.user === alice],
    ['id', { id: hex32(0x5007) }, (r) => r.id === hex32(0x5007)],
    ['originChainId', { originChainId: 10 }, (r) => r.originChainId === 10],
    ['destinationChainId', { destinationChainId: 8453 }, (r) => r.destinationChainId === 8453],
    ['chainId (either side)', { chainId: 1 }, (r) => r.originChainId === 1 || r.destinationChainId === 1],
    ['chainId is overridden by originChainId', { chainId: 1, originChainId: 8453 }, (r) => r.originChainId === 8453],
    ['one status', { status: 'refund' }, (r) => r.status === 'refund'],
    ['several statuses', { status: ['waiting', 'pending'] }, (r) => r.status === 'waiting' || r.status === 'pending'],
    ['startTimestamp (inclusive, seconds)', { startTimestamp: ms(1000) / 1000 }, (r) => r.createdAt >= ms(1000)],
    ['endTimestamp (inclusive of the whole second)', { endTimestamp: base / 1000 }, (r) => r.createdAt < ms(1000)],
    [
      'both timestamps',
      { startTimestamp: ms(1000) / 1000, endTimestamp: ms(3000) / 1000 },
      (r) => r.createdAt >= ms(1000) && r.createdAt < ms(4000),
    ],
    ['referrer', { referrer: 'app-one' }, (r) => r.referrer === 'app-one'],
    ['one apiKeyId', { apiKeyId: 'key-a' }, (r) => r.apiKeyId === 'key-a'],
    ['several apiKeyIds', { apiKeyId: ['key-a', 'key-b'] }, (r) => r.apiKeyId !== null],
    ['depositAddress', { depositAddress }, (r) => r.depositAddress === depositAddress],
    ['recipient', { recipient: carol }, (r) => r.recipient === carol],
    ['failReason', { failReason: 'DOUBLE_SPEND' }, (r) => r.failReason === 'DOUBLE_SPEND'],
    [
      'several filters together',
      { user: bob, referrer: 'app-one', status: 'waiting' },
      (r) => r.user === bob && r.referrer === 'app-one' && r.status === 'waiting',
    ],
  ];

  it.each(filterCases)('filters by %s', async (_name, filters, predicate) => {
    const expected = sorted(records.filter(predicate), 'createdAt', 'desc');
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(records.length);
    expect(await listAll(filters)).toEqual(expected);
  });

  it('matches nothing for an empty list of statuses or keys', async () => {
    expect(await listAll({ status: [] })).toEqual([]);
    expect(await listAll({ apiKeyId: [] })).toEqual([]);
  });

  it('filters by orderId (in any casing)', async () => {
    const target = records[4]!;
    expect(await listAll({ orderId: target.orderId.toUpperCase().replace('0X', '0x') })).toEqual([target.id]);
  });

  it('applies the time window to updatedAt when sorting by it', async () => {
    const filters = { startTimestamp: ms(11_000) / 1000, endTimestamp: ms(11_000) / 1000 };
    const expected = sorted(
      records.filter((r) => r.updatedAt >= ms(11_000) && r.updatedAt < ms(12_000)),
      'updatedAt',
      'asc',
    );
    expect(expected).toHaveLength(2);
    expect(await listAll(filters, 'updatedAt', 'asc', 1)).toEqual(expected);
  });
});
