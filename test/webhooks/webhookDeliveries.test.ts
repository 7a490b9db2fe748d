/**
 * The webhook outbox on both databases: a delivery is written by the status change's own transaction (or not at
 * all), only for keys with an enabled webhook and a signing secret; claims are one instance per attempt; a stale
 * attempt cannot overwrite a newer one; a replay is a fresh copy.
 */
import { expectedEventOf, type RowMove } from '../../src/core/status/statusChange.js';
import type { RequestRecord } from '../../src/records/request.js';
import type { KyselyPlugin } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { revokeApiKey } from '../../src/store/apiKeys.repository.js';
import type { Database } from '../../src/store/database.js';
import {
  claimDepositsForRequests,
  insertRequest,
  moveRequestsWithTxHash,
  updateRequestStatus,
} from '../../src/store/requests.repository.js';
import { listEventsForRequest } from '../../src/store/requestEvents.repository.js';
import {
  claimDueWebhookDeliveries,
  deleteFinishedWebhookDeliveries,
  getWebhookDelivery,
  insertWebhookReplay,
  listenWebhookDeliveries,
  listWebhookDeliveries,
  recordWebhookAttempt,
  webhookNotifyChannel,
} from '../../src/store/webhookDeliveries.repository.js';
import { testDatabaseKinds, testDatabaseUrl, useTestDatabase } from '../helpers/db.js';
import { hex32, insertConfirmedDeposits, newRequest } from '../store/requestFixture.js';
import { changeStatus, createKeyWithWebhook, sleep } from './helpers.js';

const hook = { url: 'https://hooks.example/relay', headers: {}, enabled: true };

describe.each(testDatabaseKinds)('webhook deliveries (%s)', (kind) => {
  const database = useTestDatabase(kind);

  it('a status change of a request quoted with a key that has a webhook enqueues one delivery of its event', async () => {
    const { id } = await createKeyWithWebhook(database(), hook);
    const request = await changeStatus(database(), id, 'pending');
    const [event] = await listEventsForRequest(database().db, request.id);
    const deliveries = await listWebhookDeliveries(database().db, { apiKeyId: id });
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({
      apiKeyId: id,
      requestId: request.id,
      eventId: event!.id,
      status: 'pending',
      attempts: 0,
      log: [],
      replayOf: null,
    });
  });

  it('nothing is enqueued without a key, with a disabled webhook, without a secret, or for a revoked key', async () => {
    const disabled = await createKeyWithWebhook(database(), { ...hook, enabled: false });
    const none = await createKeyWithWebhook(database(), null);
    const noSecret = await createKeyWithWebhook(database(), hook, { sealSecret: false });
    const revoked = await createKeyWithWebhook(database(), hook);
    await revokeApiKey(database().db, revoked.id, Date.now());
    await changeStatus(database(), null);
    for (const key of [disabled, none, noSecret, revoked]) {
      await changeStatus(database(), key.id);
      expect(await listWebhookDeliveries(database().db, { apiKeyId: key.id })).toEqual([]);
    }
  });

  it('the delivery commits with the status change or not at all', async () => {
    const { id } = await createKeyWithWebhook(database(), hook);
    const request = await insertRequest(database().db, newRequest({ apiKeyId: id }));
    await expect(
      database()
        .db.transaction()
        .execute(async (trx) => {
          await updateRequestStatus(trx, request.id, { status: 'pending', now: Date.now() });
          throw new Error('rolled back');
        }),
    ).rejects.toThrow('rolled back');
    expect(await listWebhookDeliveries(database().db, { apiKeyId: id })).toEqual([]);
    expect(await listEventsForRequest(database().db, request.id)).toEqual([]);
  });

  it('concurrent claims take disjoint deliveries, and a claimed attempt is leased away from other claimers', async () => {
    const { id } = await createKeyWithWebhook(database(), hook);
    for (let i = 0; i < 6; i++) await changeStatus(database(), id);
    const now = Date.now() + 1;
    const [a, b, c] = await Promise.all([
      claimDueWebhookDeliveries(database().db, { now, limit: 4, leaseMs: 60_000 }),
      claimDueWebhookDeliveries(database().db, { now, limit: 4, leaseMs: 60_000 }),
      claimDueWebhookDeliveries(database().db, { now, limit: 4, leaseMs: 60_000 }),
    ]);
    const ids = [...a, ...b, ...c].map((x) => x.delivery.id);
    expect(ids.length).toBeGreaterThanOrEqual(6);
    expect(new Set(ids).size).toBe(ids.length);
    expect(await claimDueWebhookDeliveries(database().db, { now: now + 59_000, limit: 10, leaseMs: 60_000 })).toEqual(
      [],
    );
    const claim = a.find((x) => x.delivery.apiKeyId === id) ?? b.find((x) => x.delivery.apiKeyId === id)!;
    expect(claim.delivery.attempts).toBe(1);
    expect(claim.webhook).toEqual(hook);
    expect(claim.sealedSecret).toMatch(/^v1:/);
    expect(claim.event.payload.status).toBe('pending');
  });

  it('records an attempt only for the attempt it claimed (fencing), and a replay is a fresh copy', async () => {
    const { id } = await createKeyWithWebhook(database(), hook);
    await changeStatus(database(), id);
    const [delivery] = await listWebhookDeliveries(database().db, { apiKeyId: id });
    // Expire any lease: claim only this key's delivery by claiming everything due far in the future.
    const claims = await claimDueWebhookDeliveries(database().db, {
      now: Date.now() + 10 ** 9,
      limit: 100,
      leaseMs: 0,
    });
    const mine = claims.find((x) => x.delivery.id === delivery!.id)!;
    const attempt = { attempt: mine.delivery.attempts, at: Date.now(), durationMs: 3, statusCode: 500, error: null };
    expect(
      await recordWebhookAttempt(database().db, {
        id: delivery!.id,
        attempt: { ...attempt, attempt: attempt.attempt - 1 },
        status: 'pending',
        nextAttemptAt: 0,
        now: Date.now(),
      }),
    ).toBe(false);
    expect(
      await recordWebhookAttempt(database().db, {
        id: delivery!.id,
        attempt: { ...attempt, statusCode: 200 },
        status: 'delivered',
        nextAttemptAt: 0,
        now: Date.now(),
      }),
    ).toBe(true);
    const done = await getWebhookDelivery(database().db, delivery!.id);
    expect(done).toMatchObject({ status: 'delivered', nextAttemptAt: null, log: [{ ...attempt, statusCode: 200 }] });
    expect(done!.finishedAt).not.toBeNull();

    const replay = await insertWebhookReplay(database().db, delivery!.id, Date.now());
    expect(replay).toMatchObject({
      replayOf: delivery!.id,
      eventId: delivery!.eventId,
      status: 'pending',
      attempts: 0,
      log: [],
    });
    expect(await getWebhookDelivery(database().db, delivery!.id)).toEqual(done);
    expect(await insertWebhookReplay(database().db, 987_654_321, Date.now())).toBeUndefined();
    expect((await listWebhookDeliveries(database().db, { apiKeyId: id })).map((d) => d.id)).toEqual([
      replay!.id,
      delivery!.id,
    ]);
  });

  it('deletes finished deliveries past the retention, oldest first, never a pending one nor one a kept replay names', async () => {
    const { id } = await createKeyWithWebhook(database(), hook);
    for (let i = 0; i < 4; i++) await changeStatus(database(), id);
    const [newest, third, second, oldest] = await listWebhookDeliveries(database().db, { apiKeyId: id });
    const claims = await claimDueWebhookDeliveries(database().db, {
      now: Date.now() + 10 ** 9,
      limit: 100,
      leaseMs: 0,
    });
    const finish = async (delivery: typeof oldest, status: 'delivered' | 'failed', at: number) => {
      const claim = claims.find((x) => x.delivery.id === delivery!.id)!;
      const attempt = {
        attempt: claim.delivery.attempts,
        at,
        durationMs: 1,
        statusCode: status === 'delivered' ? 200 : 500,
        error: null,
      };
      expect(
        await recordWebhookAttempt(database().db, { id: delivery!.id, attempt, status, nextAttemptAt: 0, now: at }),
      ).toBe(true);
    };
    const day = 86_400_000;
    const now = Date.now();
    await finish(oldest, 'failed', now - 40 * day);
    await finish(second, 'delivered', now - 35 * day);
    await finish(third, 'delivered', now - 5 * day);
    // `newest` stays pending (its attempt is claimed, never recorded); `second` gets a replay that is kept.
    const replay = await insertWebhookReplay(database().db, second!.id, now);
    const before = now - 30 * day;

    expect(await deleteFinishedWebhookDeliveries(database().db, { before, limit: 1000 })).toBeGreaterThanOrEqual(1);
    const left = (await listWebhookDeliveries(database().db, { apiKeyId: id })).map((d) => d.id);
    expect(left).toEqual([replay!.id, newest!.id, third!.id, second!.id]);
    expect(await getWebhookDelivery(database().db, oldest!.id)).toBeUndefined();
  });

  it("every way a status change is written enqueues its event's delivery and wakes the dispatcher at commit", async () => {
    const { db } = database();
    const { id: keyId } = await createKeyWithWebhook(database(), hook);
    const revoked = await createKeyWithWebhook(database(), hook);
    await revokeApiKey(db, revoked.id, Date.now());
    const wakes = await countWakes(database());
    // Last in this file: its deliveries are due, and the tests above count every due delivery they claim.
    // Each step's requests get one delivery per change, of that change's event; the revoked key's get none.
    const expectDelivered = async (requestIds: string[], status: string) => {
      const events = (await Promise.all(requestIds.map((id) => listEventsForRequest(db, id))))
        .flat()
        .filter((event) => event.status === status);
      expect(events).toHaveLength(requestIds.length);
      const deliveries = await listWebhookDeliveries(db, { apiKeyId: keyId });
      expect(
        deliveries.filter((d) => requestIds.includes(d.requestId) && events.some((e) => e.id === d.eventId)),
      ).toHaveLength(requestIds.length);
      expect(await listWebhookDeliveries(db, { apiKeyId: revoked.id })).toEqual([]);
      await wakes.next();
    };
    const request = (overrides: Parameters<typeof newRequest>[0] = {}) =>
      insertRequest(db, newRequest({ apiKeyId: keyId, createdAt: 1, ...overrides }));

    // The change's own statement writes the event and its delivery.
    const plain = await request();
    let statements = 0;
    // Counted as they are answered: a statement that embeds a query builder transforms it as a query of its own.
    const counting: KyselyPlugin = {
      transformQuery: ({ node }) => node,
      transformResult({ result }) {
        statements++;
        return Promise.resolve(result);
      },
    };
    // The core builds the event and its delivery from the row as read (`expectedEventOf`).
    const pending: RowMove = { status: 'pending' };
    await updateRequestStatus(db.withPlugin(counting), plain.id, {
      ...pending,
      now: 10,
      ...expectedOf(plain, pending, 10),
    });
    expect(statements).toBe(1);
    await expectDelivered([plain.id], 'pending');
    // A change with no event built (or built from a row written since) and a deposit address's request (its fields
    // are read): the event and its delivery are built from the moved row, beside the statement.
    await updateRequestStatus(db, plain.id, { status: 'success', feesActual: {}, now: 20 });
    await expectDelivered([plain.id], 'success');
    const addressed = await request({ depositAddress: '0xDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDd' });
    await updateRequestStatus(db, addressed.id, { status: 'pending', now: 30 });
    await expectDelivered([addressed.id], 'pending');

    // A block's claims in one statement, then their fills' moves to `submitted`, a revoked key's request among them.
    const grouped = [await request(), await request(), await request({ apiKeyId: revoked.id })];
    const claims = await insertConfirmedDeposits(
      db,
      grouped.map(({ id }) => id),
      0xd000,
    );
    statements = 0;
    const claimed = await db.transaction().execute((trx) =>
      claimDepositsForRequests(trx.withPlugin(counting), claims, {
        status: 'pending',
        fromStatus: ['waiting'],
        now: 40,
        expected: grouped.flatMap((seen, index) => {
          const expected = expectedEventOf(seen, { status: 'pending', inTxHash: hex32(0xd000 + index) }, 40);
          return expected === undefined ? [] : [expected];
        }),
      }),
    );
    expect(claimed.every((answer) => typeof answer === 'object')).toBe(true);
    // Their events and deliveries built by the core, in the claims' one statement.
    expect(statements).toBe(1);
    const keyed = grouped.slice(0, 2).map(({ id }) => id);
    await expectDelivered(keyed, 'pending');
    const submitted = await db.transaction().execute((trx) =>
      moveRequestsWithTxHash(
        trx,
        grouped.map(({ id }, index) => ({ requestId: id, txHash: hex32(0xe000 + index) })),
        {
          status: 'submitted',
          fromStatus: ['pending'],
          now: 50,
          expected: claimed.flatMap((seen, index) => {
            const expected =
              typeof seen === 'object'
                ? expectedEventOf(seen, { status: 'submitted', txHash: hex32(0xe000 + index) }, 50)
                : undefined;
            return expected === undefined ? [] : [expected];
          }),
        },
      ),
    );
    expect(submitted.every((moved) => moved?.status === 'submitted')).toBe(true);
    await expectDelivered(keyed, 'submitted');
  });
});

/** The `expected` of a change built by the core from `seen` (none for a row with a deposit address). */
function expectedOf(seen: RequestRecord, move: RowMove, now: number) {
  const expected = expectedEventOf(seen, move, now);
  return expected === undefined ? {} : { expected };
}

/**
 * Counts the dispatcher's wake-ups on `database` as the server listens for them (PGlite: its worker forwards this
 * process's commits; PostgreSQL: a LISTEN connection). `next()` waits for one more than the last seen.
 */
async function countWakes(database: Database): Promise<{ next(): Promise<void> }> {
  let count = 0;
  const onWake = () => (count += 1);
  const stop =
    database.listen !== undefined
      ? await database.listen(webhookNotifyChannel, onWake)
      : await listenWebhookDeliveries({
          databaseUrl: testDatabaseUrl,
          schema: database.schema,
          onDelivery: onWake,
          onError: () => undefined,
        });
  onTestFinished(() => stop());
  // PostgreSQL's listener wakes once when it starts listening.
  await sleep(100);
  let seen = count;
  return {
    async next() {
      const deadline = Date.now() + 5_000;
      while (count === seen) {
        if (Date.now() > deadline) throw new Error('the dispatcher was not woken');
        await sleep(5);
      }
      seen = count;
    },
  };
}
