/**
 * A devnet chain reset (`resetChainState`) fails every open request of the chain, whatever their number, each with
 * its one `failure` event, in statements of many requests (`failRequests`); nothing else moves. On both databases.
 */
import { sql } from 'kysely';
import { beforeEach, describe, expect, it } from 'vitest';
import { chainResetFailReason, resetChainState } from '../../src/store/chainGenesis.repository.js';
import { listEventsForRequest } from '../../src/store/requestEvents.repository.js';
import { statusRecordOf } from '../../src/records/statusEvent.js';
import {
  failRequests,
  getRequest,
  insertRequest,
  insertRequests,
  updateRequestStatus,
} from '../../src/store/requests.repository.js';
import type { RequestStatus } from '../../src/records/requestStatus.js';
import { testDatabaseKinds, truncateAll, useTestDatabase } from '../helpers/db.js';
import { newRequest } from './requestFixture.js';

const openStatuses: RequestStatus[] = ['waiting', 'depositing', 'pending', 'submitted'];

describe.each(testDatabaseKinds)('chain reset (%s)', (kind) => {
  const database = useTestDatabase(kind);
  beforeEach(() => truncateAll(database()));

  it('fails several requests in one statement, each with its event, each only from the statuses given', async () => {
    const { db } = database();
    const plain = await insertRequest(db, newRequest({ createdAt: 1 }));
    // Its event is written beside the statement (the outbox reads its deposit address).
    const keyed = await insertRequest(
      db,
      newRequest({ depositAddress: '0xdddddddddddddddddddddddddddddddddddddddd', createdAt: 1 }),
    );
    const done = await insertRequest(db, newRequest({ createdAt: 1 }));
    await updateRequestStatus(db, done.id, { status: 'success', now: 2 });
    const doneNow = await getRequest(db, done.id);
    const params = { fromStatus: openStatuses, failReason: chainResetFailReason, now: 30 };
    const ids = [plain.id.toUpperCase().replace('0X', '0x'), done.id, keyed.id];

    const answers = await db.transaction().execute((trx) => failRequests(trx, ids, params));
    expect(answers[1]).toBeNull();
    expect(await getRequest(db, done.id)).toEqual(doneNow);
    expect(await listEventsForRequest(db, done.id)).toHaveLength(1);
    for (const [answer, request] of [
      [answers[0], plain],
      [answers[2], keyed],
    ] as const) {
      expect(answer).toMatchObject({ id: request.id, status: 'failure', failReason: 'UNKNOWN', updatedAt: 30 });
      expect(await getRequest(db, request.id)).toEqual(answer);
      const events = await listEventsForRequest(db, request.id);
      expect(events).toHaveLength(1);
      const depositAddress =
        request === keyed
          ? { address: keyed.depositAddress, type: 'open', depositor: null, depositTxHash: null, recoveryAddress: null }
          : null;
      expect(events[0]!.payload).toEqual({ ...statusRecordOf(answer!, null), depositAddress });
    }
    // Again: nothing moves twice, nothing is written.
    expect(await db.transaction().execute((trx) => failRequests(trx, ids, params))).toEqual([null, null, null]);
    expect(await listEventsForRequest(db, plain.id)).toHaveLength(1);
    await expect(db.transaction().execute((trx) => failRequests(trx, [plain.id, plain.id], params))).rejects.toThrow(
      /a request twice/,
    );
    await expect(failRequests(db, [plain.id], params)).rejects.toThrow(/runs in a transaction/);
  });

  it("fails every open request of the chain, past one statement's share, with one event each; nothing else moves", async () => {
    const { db } = database();
    // 1,203 open requests of chain 31337 (origin or destination; every open status; one in ten with a deposit
    // address): more than two statements' worth.
    const open = Array.from({ length: 1_203 }, (_, index) =>
      newRequest({
        status: openStatuses[index % openStatuses.length],
        ...(index % 2 === 0 ? {} : { originChainId: 31338, destinationChainId: 31337 }),
        ...(index % 10 === 3 ? { depositAddress: `0x${index.toString(16).padStart(40, 'd')}` } : {}),
        createdAt: 1,
      }),
    );
    for (let start = 0; start < open.length; start += 100) await insertRequests(db, open.slice(start, start + 100));
    const others = [
      newRequest({ status: 'success', createdAt: 1 }),
      newRequest({ status: 'refund', createdAt: 1 }),
      newRequest({ status: 'failure', failReason: 'N/A', createdAt: 1 }),
      // Open, but of two other chains.
      newRequest({ originChainId: 1, destinationChainId: 10, createdAt: 1 }),
      newRequest({ status: 'pending', originChainId: 10, destinationChainId: 1, createdAt: 1 }),
    ];
    await insertRequests(db, others);
    const othersBefore = await Promise.all(others.map((request) => getRequest(db, request.id)));

    const result = await resetChainState(db, 31337, `0x${'ef'.repeat(32)}`, 50);
    expect(result.failedRequests).toBe(open.length);

    const { rows } = await sql<{ status: string; fail_reason: string | null; updated_at: string; events: string }>`
      select r.status, r.fail_reason, r.updated_at::text,
        (select count(*) from request_events e where e.request_id = r.id and e.status = 'failure')::text as events
      from requests r where r.id in (${sql.join(open.map((request) => request.id))})`.execute(db);
    expect(rows).toHaveLength(open.length);
    for (const row of rows)
      expect(row).toEqual({ status: 'failure', fail_reason: 'UNKNOWN', updated_at: '50', events: '1' });
    for (const [index, request] of others.entries()) {
      expect(await getRequest(db, request.id)).toEqual(othersBefore[index]);
      expect(await listEventsForRequest(db, request.id)).toEqual([]);
    }
    // A second reset finds nothing open.
    expect((await resetChainState(db, 31337, `0x${'ef'.repeat(32)}`, 60)).failedRequests).toBe(0);
  });
});
