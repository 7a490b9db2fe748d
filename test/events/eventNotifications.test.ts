/**
 * A status change's commit notification names its event, and on PGlite carries it (`notifyEvents`), so the
 * process's follower hands it to its subscribers without reading the outbox back (`RequestEventBus.offer`):
 * - every statement that writes events notifies each of them, in id order, at commit (none on a rollback): on PGlite
 *   with the event as a read of the outbox returns it, on PostgreSQL with its id only (any role that can connect
 *   can read and send notifications there); an event too long for a notification goes by id, and still commits;
 * - the follower delivers the next event from its notification with no read of `request_events` on PGlite, reads the
 *   outbox when an id is missing (a rolled-back transaction took it) or a notification names only the schema (an
 *   earlier gateway's), and ignores another schema's events; on PostgreSQL an event forged into a notification is
 *   never delivered, and the real change with that id is.
 */
import { sql, type KyselyPlugin, type RootOperationNode } from 'kysely';
import pino from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createEventFollower } from '../../src/server/events.js';
import type { Database } from '../../src/store/database.js';
import { listenWithReconnect } from '../../src/store/listen.js';
import {
  currentSchema,
  listEventsAfter,
  readEventNotification,
  REQUEST_EVENTS_CHANNEL,
  type EventNotification,
} from '../../src/store/requestEvents.repository.js';
import type { RequestEvent } from '../../src/records/requestEvent.js';
import {
  claimDepositsForRequests,
  insertRequest,
  moveRequestsWithTxHash,
  updateRequestStatus,
} from '../../src/store/requests.repository.js';
import { testDatabaseKinds, testDatabaseUrl, useTestDatabase } from '../helpers/db.js';
import { hex32, insertConfirmedDeposits, newRequest } from '../store/requestFixture.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** The notifications on the events channel of `database`'s schema, as its gateway would receive them. */
async function listenToEvents(database: Database): Promise<EventNotification[]> {
  const schema = await currentSchema(database.db);
  const received: EventNotification[] = [];
  const onNotification = (payload: string) => {
    const notification = readEventNotification(payload);
    // Other test files' schemas notify on the same PostgreSQL channel.
    if (notification.schema === schema) received.push(notification);
  };
  const stop =
    database.listen !== undefined
      ? await database.listen(REQUEST_EVENTS_CHANNEL, onNotification)
      : await listenWithReconnect({
          databaseUrl: testDatabaseUrl,
          channel: REQUEST_EVENTS_CHANNEL,
          onNotification,
          onError: () => undefined,
        });
  onTestFinished(() => stop());
  return received;
}

/** Counts the statements that read `request_events` (the follower's outbox reads) through a real database. */
function countingOutboxReads(): { plugin: KyselyPlugin; count: () => number } {
  let reads = 0;
  const readsOutbox = (node: RootOperationNode) =>
    node.kind === 'SelectQueryNode' && JSON.stringify(node.from ?? null).includes('"request_events"');
  return {
    plugin: {
      transformQuery: ({ node }) => {
        if (readsOutbox(node)) reads += 1;
        return node;
      },
      transformResult: ({ result }) => Promise.resolve(result),
    },
    count: () => reads,
  };
}

describe.each(testDatabaseKinds)('events carried by their commit notifications (%s)', (kind) => {
  const database = useTestDatabase(kind);

  it('every statement that writes events notifies each of them whole, in id order, at commit', async () => {
    const { db } = database();
    const received = await listenToEvents(database());
    const after = (await listEventsAfter(db, 0, 10_000)).at(-1)?.id ?? 0;

    const single = await insertRequest(db, newRequest());
    await updateRequestStatus(db, single.id, { status: 'pending', now: 10 });
    // `success` writes its event beside the statement (insertRequestEvent), with its ledger movements.
    await updateRequestStatus(db, single.id, { status: 'success', feesActual: {}, now: 20 });
    // A deposit address's request: its event is written beside the statement too.
    const addressed = await insertRequest(
      db,
      newRequest({ depositAddress: '0xDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDdDd' }),
    );
    await updateRequestStatus(db, addressed.id, { status: 'pending', now: 30 });
    // A block's claims in one statement, then their moves to `submitted` in another.
    const grouped = [await insertRequest(db, newRequest()), await insertRequest(db, newRequest())];
    grouped.push(await insertRequest(db, newRequest()));
    const claims = await insertConfirmedDeposits(
      db,
      grouped.map(({ id }) => id),
      0xa000,
    );
    await db
      .transaction()
      .execute((trx) => claimDepositsForRequests(trx, claims, { status: 'pending', fromStatus: ['waiting'], now: 40 }));
    await db.transaction().execute((trx) =>
      moveRequestsWithTxHash(
        trx,
        grouped.map(({ id }, index) => ({ requestId: id, txHash: hex32(0xc000 + index) })),
        { status: 'submitted', fromStatus: ['pending'], now: 50 },
      ),
    );
    // A change rolled back notifies nothing.
    const rolledBack = await insertRequest(db, newRequest());
    await expect(
      db.transaction().execute(async (trx) => {
        await updateRequestStatus(trx, rolledBack.id, { status: 'pending', now: 60 });
        throw new Error('roll it back');
      }),
    ).rejects.toThrow('roll it back');

    const committed = await listEventsAfter(db, after, 10_000);
    expect(committed.map((event) => event.status)).toEqual([
      'pending',
      'success',
      'pending',
      'pending',
      'pending',
      'pending',
      'submitted',
      'submitted',
      'submitted',
    ]);
    await until('every notification', () => received.length >= committed.length);
    await sleep(50);
    // Each event in id (commit) order, and nothing else: on PGlite exactly as a read of the outbox returns it.
    expect(received.map((notification) => notification.id)).toEqual(committed.map((event) => event.id));
    expect(received.map((notification) => notification.event)).toEqual(
      kind === 'pglite' ? committed : committed.map(() => null),
    );
  });

  it('an event too long for a notification is notified by its id alone, and its change commits', async () => {
    const { db } = database();
    const received = await listenToEvents(database());
    const long = await insertRequest(db, newRequest());
    // The status record carries the request's details: 9,000 characters of them.
    const moved = await updateRequestStatus(db, long.id, {
      status: 'pending',
      details: { memo: 'x'.repeat(9_000) },
      now: 10,
    });
    expect(moved?.status).toBe('pending');
    await until('the notification', () => received.length === 1);
    const schema = await currentSchema(db);
    const [event] = await listEventsAfter(db, 0, 10_000).then((events) =>
      events.filter((e) => e.requestId === long.id),
    );
    expect(received).toEqual([{ schema, id: event!.id, event: null }]);
  });

  it('the follower delivers each change once, in order: from its notification on PGlite, reading on a gap', async () => {
    const base = database();
    const { db } = base;
    const reads = countingOutboxReads();
    const follower = createEventFollower({
      database: { ...base, followerDb: base.followerDb.withPlugin(reads.plugin) },
      databaseUrl: kind === 'postgres' ? testDatabaseUrl : undefined,
      log: pino({ level: 'silent' }),
      // Long enough that no timed read falls in the test: every read counted is one the notifications asked for.
      pollIntervalMs: 60_000,
    });
    await follower.start();
    onTestFinished(() => follower.stop());
    const request = await insertRequest(db, newRequest());
    const delivered: RequestEvent[] = [];
    const subscription = follower.bus.subscribe({
      requestId: request.id,
      onEvent: (event) => delivered.push(event),
    });
    subscription.start(0);
    onTestFinished(() => subscription.close());
    // The start's catch-up read (PostgreSQL: a second one when its LISTEN connection is up) is done.
    await sleep(200);
    const readsAtStart = reads.count();
    const expectDelivered = async (statuses: string[]) => {
      await until(`${statuses.join(', ')} delivered`, () => delivered.length === statuses.length);
      expect(delivered.map((event) => event.status)).toEqual(statuses);
      expect(delivered).toEqual(
        await listEventsAfter(db, 0, 10_000).then((events) => events.filter((e) => e.requestId === request.id)),
      );
    };

    await updateRequestStatus(db, request.id, { status: 'pending', now: 10 });
    await updateRequestStatus(db, request.id, { status: 'submitted', now: 20 });
    await expectDelivered(['pending', 'submitted']);
    // PGlite: from the notifications alone. PostgreSQL: each notification is a reason to read.
    if (kind === 'pglite') expect(reads.count()).toBe(readsAtStart);
    else expect(reads.count()).toBeGreaterThan(readsAtStart);

    if (kind === 'postgres') {
      // Anyone connected can notify: an event forged with the next id is not delivered, and does not take the id
      // from the real change that gets it.
      const [newest] = (await listEventsAfter(db, 0, 10_000)).slice(-1);
      const schema = await currentSchema(db);
      const forged = {
        schema,
        event: {
          id: newest!.id + 1,
          request_id: request.id,
          status: 'success',
          payload: { ...newest!.payload, status: 'success' },
          created_at: 30,
        },
      };
      await sql`select pg_notify(${REQUEST_EVENTS_CHANNEL}, ${JSON.stringify(forged)})`.execute(db);
      await sleep(100);
      expect(delivered.map((event) => event.status)).toEqual(['pending', 'submitted']);
    }

    // An id taken by a rolled-back change: the next event is not the one after the cursor, so the outbox is read.
    await db
      .transaction()
      .execute(async (trx) => {
        await updateRequestStatus(trx, request.id, { status: 'failure', now: 30 });
        throw new Error('roll it back');
      })
      .catch(() => undefined);
    const readsBeforeGap = reads.count();
    await updateRequestStatus(db, request.id, { status: 'success', feesActual: {}, now: 40 });
    await expectDelivered(['pending', 'submitted', 'success']);
    expect(reads.count()).toBeGreaterThan(readsBeforeGap);

    // Another schema's event with the next id is not ours: not delivered, and no reason to read.
    const other = await insertRequest(db, newRequest());
    const otherSubscription = follower.bus.subscribe({
      requestId: other.id,
      onEvent: (event) => delivered.push(event),
    });
    otherSubscription.start(0);
    onTestFinished(() => otherSubscription.close());
    const [last] = (await listEventsAfter(db, 0, 10_000)).slice(-1);
    const foreign = {
      schema: 'another_gateway',
      event: { id: last!.id + 1, request_id: other.id, status: 'pending', payload: last!.payload, created_at: 1 },
    };
    await sleep(50);
    const readsBefore = reads.count();
    await sql`select pg_notify(${REQUEST_EVENTS_CHANNEL}, ${JSON.stringify(foreign)})`.execute(db);
    await sleep(100);
    expect(delivered).toHaveLength(3);
    expect(reads.count()).toBe(readsBefore);

    // An earlier gateway's notification names the schema alone: the follower reads the outbox.
    await sql`insert into request_events (request_id, status, payload, created_at)
      select request_id, 'pending', payload, 50 from request_events where request_id = ${request.id} order by id desc limit 1`.execute(
      db,
    );
    await sql`select pg_notify(${REQUEST_EVENTS_CHANNEL}, current_schema())`.execute(db);
    await until('the event read after a schema-only notification', () => delivered.length === 4);
    expect(delivered.at(-1)?.status).toBe('pending');
    expect(reads.count()).toBeGreaterThan(readsBefore);
  });
});
