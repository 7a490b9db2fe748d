import { sql, type Kysely, type KyselyPlugin } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { isUniqueViolation } from '../../src/store/errors.js';
import { listEventsAfter, listEventsForRequest } from '../../src/store/requestEvents.repository.js';
import { getDeposit, insertDeposit, updateDepositStatus } from '../../src/store/deposits.repository.js';
import {
  claimDepositForRequest,
  claimDepositsForRequests,
  COALESCED_READ_GROUP,
  coalescedRequestReads,
  getRequest,
  insertRequest,
  insertRequests,
  type InsertRequestParameters,
  moveRequestsWithTxHash,
  updateRequestStatus,
} from '../../src/store/requests.repository.js';
import { statusRecordOf } from '../../src/records/statusEvent.js';
import { expectedEventOf, type RowMove } from '../../src/core/status/statusChange.js';
import type { RequestRecord } from '../../src/records/request.js';
import type { Tables } from '../../src/store/tables.js';
import { testDatabaseKinds, truncateAll, useTestDatabase } from '../helpers/db.js';
import { hex32, newRequest } from './requestFixture.js';

/** The `expected` of a change built by the core from `seen` (none for a row with a deposit address). */
function expectedOf(seen: RequestRecord, move: RowMove, now: number) {
  const expected = expectedEventOf(seen, move, now);
  return expected === undefined ? {} : { expected };
}

const inHash = (n: number) => hex32(0xa000 + n);
const outHash = (n: number) => hex32(0xb000 + n);

/** The deposit row a request records as the one that paid it (`requests.deposit_id`), or null. */
async function paidBy(db: Kysely<Tables>, requestId: string): Promise<number | null> {
  const row = await db
    .selectFrom('requests')
    .select('deposit_id')
    .where('id', '=', requestId)
    .executeTakeFirstOrThrow();
  return row.deposit_id === null ? null : Number(row.deposit_id);
}

describe.each(testDatabaseKinds)('requests repository (%s)', (kind) => {
  const database = useTestDatabase(kind);
  beforeEach(() => truncateAll(database()));

  it('a status change of a request with a deposit address carries the address object; an older string payload reads as one', async () => {
    const { db } = database();
    const request = await insertRequest(
      db,
      newRequest({ depositAddress: '0xDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDd' }),
    );
    await updateRequestStatus(db, request.id, { status: 'pending', now: request.createdAt + 1 });
    // No deposit_addresses row (a request from before them): the address, type unknown (open), no transfer.
    const legacyObject = {
      address: '0xdddddddddddddddddddddddddddddddddddddddd',
      type: 'open',
      depositor: null,
      depositTxHash: null,
      recoveryAddress: null,
    };
    expect((await listEventsForRequest(db, request.id))[0]!.payload.depositAddress).toEqual(legacyObject);
    // An event written before the object existed held the address string.
    await sql`update request_events set payload = jsonb_set(payload, '{depositAddress}', to_jsonb(${'0xdddddddddddddddddddddddddddddddddddddddd'}::text))`.execute(
      db,
    );
    expect((await listEventsForRequest(db, request.id))[0]!.payload.depositAddress).toEqual(legacyObject);
  });

  it('round-trips a request, with amounts beyond 2^64 as exact bigints', async () => {
    const { db } = database();
    const params = newRequest({
      amountIn: 2n ** 200n + 12_345n,
      amountOut: 2n ** 256n - 1n,
      minAmountOut: 2n ** 64n + 1n,
      referrer: 'my-app',
      apiKeyId: 'key-1',
      depositAddress: '0xDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDd',
      details: { note: 'x' },
      volumeUsdMicros: 2n ** 70n,
    });
    const inserted = await insertRequest(db, params);
    const read = await getRequest(db, params.id);
    expect(read).toEqual(inserted);
    // The committed outflow is a column of its own (`sumCommittedFills`), not part of the record.
    const { committedOutflow, ...recorded } = params;
    expect(read).toEqual({
      ...recorded,
      status: 'waiting',
      depositAddress: '0xdddddddddddddddddddddddddddddddddddddddd',
      feesActual: null,
      failReason: null,
      refundFailReason: null,
      inTxHashes: [],
      txHashes: [],
      updatedAt: params.createdAt,
      fastFill: null,
      version: 0,
    });
    expect(typeof read?.amountIn).toBe('bigint');
    expect(read?.amountOut).toBe(2n ** 256n - 1n);
    expect(typeof read?.createdAt).toBe('number');
    expect(typeof read?.originChainId).toBe('number');
    const row = await db
      .selectFrom('requests')
      .select('committed_outflow')
      .where('id', '=', params.id)
      .executeTakeFirstOrThrow();
    expect(row.committed_outflow).toEqual(
      committedOutflow.map((line) => ({ currency: line.currency, amount: line.amount.toString() })),
    );
    expect(row.committed_outflow).toEqual([
      { currency: '0x0000000000000000000000000000000000000000', amount: (2n ** 256n - 1n).toString() },
    ]);
  });

  it('stores hex ids and addresses lower case and finds them in any casing', async () => {
    const { db } = database();
    const params = newRequest({
      id: `0x${'AB'.repeat(32)}`,
      user: '0xAbCdEf0000000000000000000000000000000001',
    });
    await insertRequest(db, params);
    const read = await getRequest(db, `0x${'aB'.repeat(32)}`);
    expect(read?.id).toBe(`0x${'ab'.repeat(32)}`);
    expect(read?.user).toBe('0xabcdef0000000000000000000000000000000001');
  });

  it('returns undefined for an unknown id and rejects a duplicate id', async () => {
    const { db } = database();
    expect(await getRequest(db, hex32(999_999_999))).toBeUndefined();
    const params = newRequest();
    await insertRequest(db, params);
    const error = await insertRequest(db, params).catch((e: unknown) => e);
    expect(isUniqueViolation(error, 'requests_pkey')).toBe(true);
  });

  it('stores a batch (the group commit) exactly as one by one, and all or none of it', async () => {
    const { db } = database();
    // Every optional field, and text that JSON must escape: quotes, a backslash, a newline, non-ASCII, an emoji
    // (a surrogate pair) and a lone surrogate (stored as U+FFFD, as a parameter's UTF-8 encoding writes it).
    const variants: Array<Partial<InsertRequestParameters>> = [
      { amountIn: 2n ** 255n, referrer: 'batch-app', details: { n: 1 } },
      { apiKeyId: 'key-2', depositAddress: '0xDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDd' },
      {},
      {
        status: 'failure',
        referrer: 'a "quoted" \\ back\nslash, café, 🚀, lone \ud800 end',
        feesActual: { gas: { amount: '12' } },
        failReason: 'N/A "reason"',
        refundFailReason: 'none',
        inTxHashes: [inHash(1), inHash(1).toUpperCase().replace('0X', '0x'), inHash(2)],
        txHashes: [outHash(1)],
        volumeUsdMicros: 123_456_789n,
        amountOut: 0n,
        minAmountOut: 2n ** 256n - 1n,
        quote: { nested: { list: [1, 'two', null, { three: true }] } },
      },
    ];
    // A small batch goes as a `values` list, a large one as a JSON document: both store what one by one stores.
    for (const size of [variants.length, 12]) {
      const batch = Array.from({ length: size }, (_, index) => newRequest(variants[index % variants.length]));
      await insertRequests(db, batch);
      for (const [index, params] of batch.entries()) {
        const expected = await insertRequest(db, newRequest(variants[index % variants.length]));
        const stored = await getRequest(db, params.id);
        expect(stored?.id).toBe(params.id.toLowerCase());
        expect({ ...stored, id: expected.id, orderId: expected.orderId }).toEqual(expected);
      }
      expect((await getRequest(db, batch[3]!.id))?.referrer).toBe(
        'a "quoted" \\ back\nslash, café, 🚀, lone \ufffd end',
      );
    }
    const batch = variants.map((variant) => newRequest(variant));
    await insertRequests(db, batch);

    for (const size of [1, 11]) {
      const duplicate = [...Array.from({ length: size }, () => newRequest()), batch[1]!];
      const error = await insertRequests(db, duplicate).catch((e: unknown) => e);
      expect(isUniqueViolation(error, 'requests_pkey')).toBe(true);
      for (const params of duplicate.slice(0, size)) expect(await getRequest(db, params.id)).toBeUndefined();
    }
  });

  it('rejects values the columns cannot hold', async () => {
    const { db } = database();
    await expect(insertRequest(db, newRequest({ amountIn: -1n }))).rejects.toThrow(RangeError);
    await expect(insertRequest(db, newRequest({ amountIn: 2n ** 256n }))).rejects.toThrow(RangeError);
    // The check constraint backs the type: a status outside the set never lands.
    await expect(insertRequest(db, newRequest({ status: 'delayed' as never }))).rejects.toThrow(
      /requests_status_check/,
    );
    await expect(insertRequest(db, newRequest({ tradeType: 'EXACT' as never }))).rejects.toThrow(
      /requests_trade_type_check/,
    );
    // The database holds the rules itself (the columns' domains), whatever writes to it: a write that bypasses
    // the repository is refused too, and changes nothing.
    const stored = await insertRequest(db, newRequest());
    const refused = [
      [sql`update requests set amount_in = -1 where id = ${stored.id}`, /requests_amount_check/],
      [sql`update requests set amount_out = -1 where id = ${stored.id}`, /requests_amount_check/],
      [sql`update requests set min_amount_out = -1 where id = ${stored.id}`, /requests_amount_check/],
      [sql`update requests set status = 'delayed' where id = ${stored.id}`, /requests_status_check/],
      [sql`update requests set trade_type = 'exact_input' where id = ${stored.id}`, /requests_trade_type_check/],
      [sql`update requests set tx_hashes = '"0x01"' where id = ${stored.id}`, /requests_hashes_are_arrays/],
      [sql`update requests set in_tx_hashes = '{}' where id = ${stored.id}`, /requests_hashes_are_arrays/],
    ] as const;
    for (const [statement, constraint] of refused) await expect(statement.execute(db)).rejects.toThrow(constraint);
    expect(await getRequest(db, stored.id)).toEqual(stored);
    const { rows } = await sql<{ count: string }>`select count(*)::text as count from requests`.execute(db);
    expect(rows[0]!.count).toBe('1');
  });

  it('updates the status, appends hashes without duplicates and writes one event per change', async () => {
    const { db } = database();
    const { id, createdAt } = await insertRequest(db, newRequest());

    const pending = await updateRequestStatus(db, id, { status: 'pending', inTxHash: inHash(1), now: createdAt + 10 });
    expect(pending).toMatchObject({
      status: 'pending',
      inTxHashes: [inHash(1)],
      txHashes: [],
      updatedAt: createdAt + 10,
    });

    // The same hash again (a re-read deposit) is not duplicated; a new one is appended in order.
    const again = await updateRequestStatus(db, id, {
      status: 'pending',
      inTxHash: inHash(1).toUpperCase().replace('0X', '0x'),
      now: createdAt + 20,
    });
    expect(again?.inTxHashes).toEqual([inHash(1)]);
    const submitted = await updateRequestStatus(db, id, {
      status: 'submitted',
      txHash: outHash(1),
      now: createdAt + 30,
    });
    const success = await updateRequestStatus(db, id, {
      status: 'success',
      txHash: outHash(2),
      feesActual: { execution: { usd: '0.03' } },
      now: createdAt + 40,
    });
    expect(success).toMatchObject({
      status: 'success',
      inTxHashes: [inHash(1)],
      txHashes: [outHash(1), outHash(2)],
      feesActual: { execution: { usd: '0.03' } },
      failReason: null,
    });
    expect(await getRequest(db, id)).toEqual(success);

    const events = await listEventsForRequest(db, id);
    expect(events.map((e) => e.status)).toEqual(['pending', 'pending', 'submitted', 'success']);
    expect(events.map((e) => e.createdAt)).toEqual([createdAt + 10, createdAt + 20, createdAt + 30, createdAt + 40]);
    expect(events[2]?.payload).toEqual(statusRecordOf(submitted!, null));
    expect(events[3]?.payload).toEqual(statusRecordOf(success!, null));
    expect(events[3]?.payload).toMatchObject({
      requestId: id,
      status: 'success',
      txHashes: [outHash(1), outHash(2)],
      updatedAt: createdAt + 40,
      failReason: null,
      refundFailReason: null,
    });
  });

  it("writes each change's event with the status record of the moved row, whichever statement writes it", async () => {
    const { db } = database();
    // No deposit address, no API key: the change's own statement writes the event.
    const plain = await insertRequest(db, newRequest({ referrer: 'my-app', createdAt: 1 }));
    // An API key's request (webhook delivery) and a deposit address's (its fields read): written beside it.
    const keyed = await insertRequest(db, newRequest({ apiKeyId: 'key-1', createdAt: 1 }));
    const addressed = await insertRequest(
      db,
      newRequest({ depositAddress: '0xDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDd', createdAt: 1 }),
    );
    for (const inserted of [plain, keyed, addressed]) {
      const { id } = inserted;
      // The core's change built from the row as read (its event written in the statement, when it has no deposit
      // address), one built from a row another writer changed since (its event built from the moved row), one
      // without an expected event.
      const pending: RowMove = { status: 'pending', inTxHash: inHash(1) };
      const first = await updateRequestStatus(db, id, {
        ...pending,
        now: 10,
        ...expectedOf(inserted, pending, 10),
      });
      const failure: RowMove = {
        status: 'failure',
        fromStatus: 'pending',
        failReason: 'TRANSACTION_REVERTED',
        details: { revert: '0x08c379a0', nested: { list: [1, 'two', null] } },
        txHash: outHash(1),
      };
      const moves = [
        first,
        await updateRequestStatus(db, id, { ...failure, now: 20, ...expectedOf(inserted, failure, 20) }),
        await updateRequestStatus(db, id, { status: 'refund', refundFailReason: null, txHash: outHash(2), now: 30 }),
      ];
      const events = await listEventsForRequest(db, id);
      expect(events.map((e) => e.payload)).toEqual(
        moves.map((moved) =>
          statusRecordOf(
            moved!,
            moved!.depositAddress === null
              ? null
              : {
                  address: moved!.depositAddress,
                  type: 'open',
                  depositor: null,
                  depositTxHash: null,
                  recoveryAddress: null,
                },
          ),
        ),
      );
      expect(events.map((e) => e.createdAt)).toEqual([10, 20, 30]);
      expect(moves.map((moved) => moved!.version)).toEqual([1, 2, 3]);
    }

    // Ids in commit order across both ways of writing.
    const all = await listEventsAfter(db, 0, 100);
    expect(all.map((e) => e.requestId)).toEqual([
      plain.id,
      plain.id,
      plain.id,
      keyed.id,
      keyed.id,
      keyed.id,
      addressed.id,
      addressed.id,
      addressed.id,
    ]);
  });

  it('claims a deposit for its request: consumed and moved in one go, once; nothing written when it was taken', async () => {
    const { db } = database();
    const request = await insertRequest(db, newRequest({ createdAt: 1 }));
    const { deposit } = await insertDeposit(db, {
      chainId: 31337,
      txHash: inHash(7),
      logIndex: 0,
      blockNumber: 5n,
      blockHash: hex32(0xc005),
      requestId: request.id,
      depositor: '0x1111111111111111111111111111111111111111',
      token: '0x0000000000000000000000000000000000000000',
      amount: 1_000_000n,
      status: 'confirmed',
      now: 2,
    });
    const claim = (now: number) =>
      db.transaction().execute((trx) =>
        claimDepositForRequest(trx, deposit.id, request.id, {
          status: 'pending',
          fromStatus: ['waiting', 'depositing'],
          inTxHash: deposit.txHash,
          now,
        }),
      );
    // Two at once (two instances on PostgreSQL): the deposit's conditional update lets exactly one through.
    const results = await Promise.all([claim(10), claim(11)]);
    const winners = results.filter((r) => r.consumed);
    expect(winners).toHaveLength(1);
    expect(results.filter((r) => !r.consumed)).toEqual([{ consumed: false, moved: null }]);
    const moved = winners[0]!.moved!;
    expect(moved).toMatchObject({ status: 'pending', inTxHashes: [inHash(7)] });
    // The request names the very deposit that paid it (settlement selects by it, not by the shared hash).
    expect(await paidBy(db, request.id)).toBe(deposit.id);
    expect(await getRequest(db, request.id)).toEqual(moved);
    expect((await getDeposit(db, deposit.id))?.status).toBe('consumed');
    const events = await listEventsForRequest(db, request.id);
    expect(events.map((e) => e.payload)).toEqual([statusRecordOf(moved, null)]);

    // A second deposit for the request, now `pending`: consumed in the transaction, the request not moved; the
    // caller's rollback leaves the deposit `confirmed` and writes no event.
    const { deposit: extra } = await insertDeposit(db, {
      chainId: 31337,
      txHash: inHash(8),
      logIndex: 0,
      blockNumber: 6n,
      blockHash: hex32(0xc006),
      requestId: request.id,
      depositor: '0x1111111111111111111111111111111111111111',
      token: '0x0000000000000000000000000000000000000000',
      amount: 1_000_000n,
      status: 'confirmed',
      now: 3,
    });
    const rolledBack = new Error('not its own deposit');
    let answer: Awaited<ReturnType<typeof claimDepositForRequest>> | undefined;
    await expect(
      db.transaction().execute(async (trx) => {
        answer = await claimDepositForRequest(trx, extra.id, request.id, {
          status: 'pending',
          fromStatus: ['waiting', 'depositing'],
          inTxHash: extra.txHash,
          now: 20,
        });
        expect((await getDeposit(trx, extra.id))?.status).toBe('consumed');
        throw rolledBack;
      }),
    ).rejects.toBe(rolledBack);
    expect(answer).toEqual({ consumed: true, moved: null });
    expect((await getDeposit(db, extra.id))?.status).toBe('confirmed');
    expect(await getRequest(db, request.id)).toEqual(moved);
    expect(await listEventsForRequest(db, request.id)).toHaveLength(1);

    // A deposit no longer `confirmed` (consumed by a refund): nothing happens to the request.
    await updateDepositStatus(db, extra.id, { status: 'consumed', fromStatus: 'confirmed', now: 30 });
    const other = await insertRequest(db, newRequest({ createdAt: 1 }));
    expect(
      await db
        .transaction()
        .execute((trx) =>
          claimDepositForRequest(trx, extra.id, other.id, { status: 'pending', fromStatus: 'waiting', now: 40 }),
        ),
    ).toEqual({ consumed: false, moved: null });
    expect((await getRequest(db, other.id))?.status).toBe('waiting');
    expect(await listEventsForRequest(db, other.id)).toEqual([]);
  });

  it('claims several deposits for their requests in one statement: moved, taken, or undone when the request was not waiting', async () => {
    const { db } = database();
    const depositFor = async (requestId: string, n: number, status: 'confirmed' | 'consumed' = 'confirmed') =>
      (
        await insertDeposit(db, {
          chainId: 31337,
          txHash: inHash(0x100 + n),
          logIndex: 0,
          blockNumber: 9n,
          blockHash: hex32(0xc009),
          requestId,
          depositor: '0x1111111111111111111111111111111111111111',
          token: '0x0000000000000000000000000000000000000000',
          amount: 1_000_000n,
          status,
          now: 5,
        })
      ).deposit;
    const waiting = await insertRequest(db, newRequest({ createdAt: 1 }));
    const keyed = await insertRequest(db, newRequest({ apiKeyId: 'key-1', createdAt: 1 }));
    const paid = await insertRequest(db, newRequest({ createdAt: 1 }));
    await updateRequestStatus(db, paid.id, { status: 'pending', inTxHash: inHash(0x99), now: 3 });
    const taken = await insertRequest(db, newRequest({ createdAt: 1 }));
    const deposits = [
      await depositFor(waiting.id, 1),
      await depositFor(keyed.id, 2),
      await depositFor(paid.id, 3),
      await depositFor(taken.id, 4, 'consumed'),
    ];
    const claims = deposits.map((deposit) => ({
      depositId: deposit.id,
      requestId: deposit.requestId,
      confirmedAt: deposit.updatedAt,
    }));
    const params = { status: 'pending' as const, fromStatus: ['waiting', 'depositing'] as const, now: 20 };
    const answers = await db.transaction().execute((trx) => claimDepositsForRequests(trx, claims, params));
    expect(answers.slice(2)).toEqual(['unmoved', 'taken']);
    for (const [index, request] of [waiting, keyed].entries()) {
      const moved = answers[index] as RequestRecord;
      expect(moved).toMatchObject({
        id: request.id,
        status: 'pending',
        inTxHashes: [inHash(0x100 + index + 1)],
        updatedAt: 20,
      });
      expect(await getRequest(db, request.id)).toEqual(moved);
      expect((await getDeposit(db, deposits[index]!.id))?.status).toBe('consumed');
      // One event each, whichever statement wrote it.
      expect((await listEventsForRequest(db, request.id)).map((e) => e.payload)).toEqual([statusRecordOf(moved, null)]);
    }
    expect([await paidBy(db, waiting.id), await paidBy(db, keyed.id)]).toEqual([deposits[0]!.id, deposits[1]!.id]);
    // The paid request's deposit is `confirmed` again, as it was, and the request untouched.
    expect(await paidBy(db, paid.id)).toBeNull();
    expect(await getDeposit(db, deposits[2]!.id)).toEqual(deposits[2]);
    expect((await getRequest(db, paid.id))?.inTxHashes).toEqual([inHash(0x99)]);
    expect(await listEventsForRequest(db, paid.id)).toHaveLength(1);
    expect((await getRequest(db, taken.id))?.status).toBe('waiting');

    // Claimed again (a retry), nothing moves twice.
    const again = await db.transaction().execute((trx) => claimDepositsForRequests(trx, claims.slice(0, 2), params));
    expect(again).toEqual(['taken', 'taken']);
    expect(await listEventsForRequest(db, waiting.id)).toHaveLength(1);
    // Two deposits of one request are never claimed together.
    await expect(
      db
        .transaction()
        .execute((trx) =>
          claimDepositsForRequests(trx, [claims[0]!, { ...claims[1]!, requestId: waiting.id }], params),
        ),
    ).rejects.toThrow(/a request twice/);
  });

  it('moves several requests to submitted in one statement, each with its own hash, each only from its own status', async () => {
    const { db } = database();
    const plain = await insertRequest(db, newRequest({ createdAt: 1 }));
    const keyed = await insertRequest(db, newRequest({ apiKeyId: 'key-1', createdAt: 1 }));
    const waiting = await insertRequest(db, newRequest({ createdAt: 1 }));
    for (const request of [plain, keyed]) await updateRequestStatus(db, request.id, { status: 'pending', now: 3 });
    const params = { status: 'submitted' as const, fromStatus: ['pending'] as const, now: 30 };
    const moves = [plain, keyed, waiting].map((request, index) => ({
      requestId: request.id.toUpperCase().replace('0X', '0x'),
      txHash: outHash(index + 1),
    }));
    const answers = await db.transaction().execute((trx) => moveRequestsWithTxHash(trx, moves, params));
    // Not pending: not moved, nothing written for it.
    expect(answers[2]).toBeNull();
    expect(await getRequest(db, waiting.id)).toEqual(waiting);
    expect(await listEventsForRequest(db, waiting.id)).toEqual([]);
    for (const [index, request] of [plain, keyed].entries()) {
      const moved = answers[index]!;
      expect(moved).toMatchObject({
        id: request.id,
        status: 'submitted',
        txHashes: [outHash(index + 1)],
        updatedAt: 30,
      });
      expect(await getRequest(db, request.id)).toEqual(moved);
      // Its events: `pending`, then this move's, whichever statement wrote it (the keyed one's goes beside).
      const events = await listEventsForRequest(db, request.id);
      expect(events.map((e) => e.payload.status)).toEqual(['pending', 'submitted']);
      expect(events[1]!.payload).toEqual(statusRecordOf(moved, null));
    }
    // Again (a retry): nothing moves twice, nothing is written.
    expect(await db.transaction().execute((trx) => moveRequestsWithTxHash(trx, moves, params))).toEqual([
      null,
      null,
      null,
    ]);
    expect(await listEventsForRequest(db, plain.id)).toHaveLength(2);
    await expect(
      db
        .transaction()
        .execute((trx) => moveRequestsWithTxHash(trx, [moves[0]!, { ...moves[1]!, requestId: plain.id }], params)),
    ).rejects.toThrow(/a request twice/);
  });

  it('reads the requests asked for while a read is under way together, each read after it was asked for', async () => {
    const { db } = database();
    const [a, b, c] = [
      await insertRequest(db, newRequest()),
      await insertRequest(db, newRequest()),
      await insertRequest(db, newRequest()),
    ];
    let selects = 0;
    const counting: KyselyPlugin = {
      transformQuery({ node }) {
        if (node.kind === 'SelectQueryNode') selects++;
        return node;
      },
      transformResult: ({ result }) => Promise.resolve(result),
    };
    const read = coalescedRequestReads(db.withPlugin(counting));
    const answers = await Promise.all([
      read(a.id),
      read(b.id.toUpperCase().replace('0X', '0x')),
      read(c.id),
      read(a.id),
      read(hex32(0xdead_beef)),
    ]);
    expect(answers).toEqual([a, b, c, a, undefined]);
    // The first alone, the four asked for meanwhile in one statement.
    expect(selects).toBe(2);
    const moved = await updateRequestStatus(db, a.id, { status: 'pending', now: a.createdAt + 1 });
    expect(await read(a.id)).toEqual(moved);
    expect(selects).toBe(3);
  });

  it('reads at most COALESCED_READ_GROUP ids in one statement, however many polls come at once', async () => {
    const { db } = database();
    const request = await insertRequest(db, newRequest());
    let selects = 0;
    const counting: KyselyPlugin = {
      transformQuery({ node }) {
        if (node.kind === 'SelectQueryNode') selects++;
        return node;
      },
      transformResult: ({ result }) => Promise.resolve(result),
    };
    const read = coalescedRequestReads(db.withPlugin(counting));
    const asked = 1 + 3 * COALESCED_READ_GROUP;
    const answers = await Promise.all(
      Array.from({ length: asked }, (_, index) => read(index % 2 === 0 ? request.id : hex32(0xc0_0000 + index))),
    );
    expect(answers.filter((answer) => answer !== undefined)).toHaveLength(Math.ceil(asked / 2));
    // The first alone, then the rest in groups of at most COALESCED_READ_GROUP.
    expect(selects).toBe(1 + 3);
  });

  it('sets, keeps and clears the fail reasons and details', async () => {
    const { db } = database();
    const { id } = await insertRequest(db, newRequest());
    const failed = await updateRequestStatus(db, id, {
      status: 'failure',
      failReason: 'EXECUTION_REVERTED',
      details: { revertData: '0x08c379a0' },
      now: 1,
    });
    expect(failed).toMatchObject({ failReason: 'EXECUTION_REVERTED', details: { revertData: '0x08c379a0' } });
    const refunded = await updateRequestStatus(db, id, {
      status: 'refund',
      refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND',
      now: 2,
    });
    expect(refunded).toMatchObject({ failReason: 'EXECUTION_REVERTED', refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND' });
    const cleared = await updateRequestStatus(db, id, { status: 'pending', failReason: null, details: null, now: 3 });
    expect(cleared).toMatchObject({ failReason: null, details: null, refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND' });
  });

  it('never moves updatedAt backwards', async () => {
    const { db } = database();
    const { id, createdAt } = await insertRequest(db, newRequest());
    await updateRequestStatus(db, id, { status: 'pending', now: createdAt + 1000 });
    const late = await updateRequestStatus(db, id, { status: 'submitted', now: createdAt + 500 });
    expect(late?.updatedAt).toBe(createdAt + 1000);
  });

  it('rolls the status change back when its event cannot be written', async () => {
    const { db } = database();
    const request = await insertRequest(db, newRequest({ createdAt: 1 }));
    await updateRequestStatus(db, request.id, { status: 'pending', inTxHash: inHash(1), now: 10 });
    // A constraint that rejects the event (and only the event) of the next change.
    await sql`alter table request_events add constraint reject_refund_events check (status <> 'refund')`.execute(db);
    try {
      await expect(
        updateRequestStatus(db, request.id, {
          status: 'refund',
          failReason: 'DOUBLE_SPEND',
          txHash: outHash(1),
          now: 20,
        }),
      ).rejects.toThrow(/reject_refund_events/);
    } finally {
      await sql`alter table request_events drop constraint reject_refund_events`.execute(db);
    }
    expect(await getRequest(db, request.id)).toMatchObject({
      status: 'pending',
      failReason: null,
      txHashes: [],
      updatedAt: 10,
    });
    expect((await listEventsForRequest(db, request.id)).map((e) => e.status)).toEqual(['pending']);
  });

  it("joins the caller's transaction: rolling it back undoes the change and the event", async () => {
    const { db } = database();
    const { id } = await insertRequest(db, newRequest());
    const failure = new Error('later step failed');
    await expect(
      db.transaction().execute(async (trx) => {
        await updateRequestStatus(trx, id, { status: 'pending', now: 10 });
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect((await getRequest(db, id))?.status).toBe('waiting');
    expect(await listEventsForRequest(db, id)).toEqual([]);
  });

  it('applies a guarded transition only from the expected status', async () => {
    const { db } = database();
    const { id } = await insertRequest(db, newRequest({ createdAt: 1 }));
    expect(await updateRequestStatus(db, id, { status: 'pending', fromStatus: 'waiting', now: 10 })).toMatchObject({
      status: 'pending',
    });
    // A stale view (someone already moved it on) changes nothing and writes no event.
    const stale = await updateRequestStatus(db, id, {
      status: 'pending',
      fromStatus: 'waiting',
      txHash: outHash(9),
      now: 20,
    });
    expect(stale).toBeNull();
    expect(await getRequest(db, id)).toMatchObject({ status: 'pending', txHashes: [], updatedAt: 10 });
    expect(await listEventsForRequest(db, id)).toHaveLength(1);
    // A list of accepted statuses.
    expect(
      await updateRequestStatus(db, id, { status: 'submitted', fromStatus: ['pending', 'depositing'], now: 30 }),
    ).toMatchObject({ status: 'submitted' });
    // Unknown request: null, nothing written.
    expect(await updateRequestStatus(db, hex32(123_456_789), { status: 'pending', now: 40 })).toBeNull();
    expect(await listEventsAfter(db, 0, 100)).toHaveLength(2);
  });

  it('lets exactly one of two racing guarded transitions win', async () => {
    const { db } = database();
    const { id } = await insertRequest(db, newRequest());
    await updateRequestStatus(db, id, { status: 'pending', now: 10 });
    const results = await Promise.all([
      updateRequestStatus(db, id, { status: 'submitted', fromStatus: 'pending', txHash: outHash(1), now: 20 }),
      updateRequestStatus(db, id, { status: 'refund', fromStatus: 'pending', failReason: 'ORDER_EXPIRED', now: 20 }),
    ]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    const winner = results.find((r) => r !== null)!;
    expect(await getRequest(db, id)).toEqual(winner);
    expect((await listEventsForRequest(db, id)).map((e) => e.status)).toEqual(['pending', winner.status]);
  });

  it('reads the outbox in id order, resuming after the last id seen', async () => {
    const { db } = database();
    const a = await insertRequest(db, newRequest());
    const b = await insertRequest(db, newRequest());
    await updateRequestStatus(db, a.id, { status: 'pending', now: 1 });
    await updateRequestStatus(db, b.id, { status: 'pending', now: 2 });
    await updateRequestStatus(db, a.id, { status: 'submitted', now: 3 });
    await updateRequestStatus(db, b.id, { status: 'refund', now: 4 });

    const first = await listEventsAfter(db, 0, 3);
    expect(first.map((e) => [e.requestId, e.status])).toEqual([
      [a.id, 'pending'],
      [b.id, 'pending'],
      [a.id, 'submitted'],
    ]);
    expect(first.map((e) => e.id)).toEqual([...first.map((e) => e.id)].sort((x, y) => x - y));
    const rest = await listEventsAfter(db, first.at(-1)!.id, 3);
    expect(rest.map((e) => [e.requestId, e.status])).toEqual([[b.id, 'refund']]);
    expect(await listEventsAfter(db, rest.at(-1)!.id, 3)).toEqual([]);
  });

  it('never lets a reader pass an event id that has not committed yet', async () => {
    const { db } = database();
    const a = await insertRequest(db, newRequest());
    const b = await insertRequest(db, newRequest());
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let firstWritten!: () => void;
    const written = new Promise<void>((resolve) => (firstWritten = resolve));

    // T1 draws the lower event id and holds its transaction open; T2 changes another request meanwhile.
    const t1 = db.transaction().execute(async (trx) => {
      await updateRequestStatus(trx, a.id, { status: 'pending', now: 1 });
      firstWritten();
      await released;
    });
    await written;
    const t2 = updateRequestStatus(db, b.id, { status: 'pending', now: 2 });
    const timeout = <T>(promise: Promise<T>, ms: number) =>
      Promise.race([promise, new Promise<'blocked'>((resolve) => setTimeout(() => resolve('blocked'), ms))]);
    // T2 must wait for T1: had it committed a higher id now, a reader would move past T1's id for good.
    expect(await timeout(t2, 1000)).toBe('blocked');
    // (On PGlite the reader itself waits for the single connection, which is just as safe.)
    const early = await timeout(listEventsAfter(db, 0, 10), 200);
    expect(early === 'blocked' || early.length === 0).toBe(true);

    release();
    await Promise.all([t1, t2]);
    expect((await listEventsAfter(db, 0, 10)).map((e) => e.requestId)).toEqual([a.id, b.id]);
  });
});
