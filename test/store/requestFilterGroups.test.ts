/**
 * The store's side of the v3 `filters` groups (`FilterExpression`): OR of groups, AND within, negation that
 * matches rows whose column is empty, any-of lists, emptiness, combined with the other filters and paged by
 * continuation, on PGlite and PostgreSQL.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { listRequests, type ListRequestsFilters } from '../../src/store/listRequests.repository.js';
import type { FilterExpression } from '../../src/store/requestFilters.js';
import { insertRequest, updateRequestStatus } from '../../src/store/requests.repository.js';
import { testDatabaseKinds, truncateAll, useTestDatabase } from '../helpers/db.js';
import { newRequest } from './requestFixture.js';

const alice = '0xa11ce00000000000000000000000000000000001';
const bob = '0xb0b0000000000000000000000000000000000002';
const carol = '0xca201000000000000000000000000000000000c3';
const depositAddress = '0xde90517000000000000000000000000000000055';

describe.each(testDatabaseKinds)('request filter groups (%s)', (kind) => {
  const database = useTestDatabase(kind);
  const ids = { alice1: '', alice2: '', bob: '', carolToBob: '', unpaid: '' };

  beforeAll(async () => {
    const { db } = database();
    await truncateAll(database());
    const users = { alice1: alice, alice2: alice, bob, carolToBob: carol, unpaid: bob };
    for (const [index, name] of (Object.keys(ids) as Array<keyof typeof ids>).entries()) {
      const user = users[name];
      const request = await insertRequest(db, {
        ...newRequest({ user, sender: user, refundTo: user, createdAt: 1_700_000_000_000 + index }),
        ...(name === 'carolToBob' ? { recipient: bob, destinationChainId: 8453 } : {}),
        ...(name === 'unpaid' ? { depositAddress } : {}),
      });
      ids[name] = request.id;
    }
    await updateRequestStatus(db, ids.alice1, { status: 'success', now: 1_700_000_001_000 });
    await updateRequestStatus(db, ids.bob, {
      status: 'refund',
      failReason: 'SOLVER_BALANCE_TOO_LOW',
      refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND',
      now: 1_700_000_001_000,
    });
  });

  async function listed(filters: ListRequestsFilters): Promise<Set<string>> {
    const { requests } = await listRequests(database().db, filters, { limit: 50 });
    return new Set(requests.map((request) => request.id));
  }
  const names = (...list: Array<keyof typeof ids>) => new Set(list.map((name) => ids[name]));

  it.each<[string, FilterExpression, Array<keyof typeof ids>]>([
    [
      'OR of two users',
      {
        or: [
          { and: [{ column: 'user_address', anyOf: [alice] }] },
          { and: [{ column: 'user_address', anyOf: [carol] }] },
        ],
      },
      ['alice1', 'alice2', 'carolToBob'],
    ],
    ['any-of statuses', { column: 'status', anyOf: ['success', 'refund'] }, ['alice1', 'bob']],
    ['not a status', { not: { column: 'status', anyOf: ['waiting'] } }, ['alice1', 'bob']],
    [
      'AND within a group',
      {
        and: [
          { column: 'user_address', anyOf: [bob] },
          { column: 'status', anyOf: ['waiting'] },
        ],
      },
      ['unpaid'],
    ],
    [
      'recipient (beside the user or equal to it)',
      { recipientAnyOf: [bob.toUpperCase().replace('0X', '0x')] },
      ['carolToBob'],
    ],
    ['an empty column', { column: 'deposit_address', isNull: true }, ['alice1', 'alice2', 'bob', 'carolToBob']],
    ['a present column', { not: { column: 'deposit_address', isNull: true } }, ['unpaid']],
    // `deposit_address <> x` is unknown where it is null: the negation still matches those rows.
    [
      'not an address, empty included',
      { not: { column: 'deposit_address', anyOf: [depositAddress] } },
      ['alice1', 'alice2', 'bob', 'carolToBob'],
    ],
    [
      'not a refund fail reason',
      { not: { column: 'refund_fail_reason', anyOf: ['AMOUNT_TOO_LOW_TO_REFUND'] } },
      ['alice1', 'alice2', 'carolToBob', 'unpaid'],
    ],
    ['an empty any-of', { column: 'status', anyOf: [] }, []],
    ['an empty OR', { or: [] }, []],
    ['a chain id', { column: 'destination_chain_id', anyOf: [8453] }, ['carolToBob']],
  ])('%s', async (_name, matching, expected) => {
    expect(await listed({ matching })).toEqual(names(...expected));
  });

  it('is AND-ed with the other filters', async () => {
    const matching: FilterExpression = {
      or: [
        { column: 'user_address', anyOf: [alice] },
        { column: 'user_address', anyOf: [bob] },
      ],
    };
    expect(await listed({ matching, status: 'waiting' })).toEqual(names('alice2', 'unpaid'));
  });

  it('pages by continuation without repeats or gaps', async () => {
    const matching: FilterExpression = {
      or: [
        { column: 'user_address', anyOf: [alice] },
        { column: 'status', anyOf: ['refund'] },
        { recipientAnyOf: [bob] },
      ],
    };
    const seen: string[] = [];
    let continuation: string | undefined;
    do {
      const page = await listRequests(database().db, { matching }, { limit: 1, continuation });
      seen.push(...page.requests.map((request) => request.id));
      continuation = page.continuation;
    } while (continuation !== undefined);
    // Newest first: created in the order of `ids`.
    expect(seen).toEqual([ids.carolToBob, ids.bob, ids.alice2, ids.alice1]);
  });
});
