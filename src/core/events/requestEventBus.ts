import type { Kysely } from 'kysely';
import { lastEventId, listEventsAfter } from '../../store/requestEvents.repository.js';
import type { RequestEvent } from '../../records/requestEvent.js';
import type { RequestRecord } from '../../records/request.js';
import { getRequest } from '../../store/requests.repository.js';
import type { Tables } from '../../store/tables.js';
import type { Logger } from '../logger.js';
import type { BusSubscribeOptions, RequestEventBus } from '../ports/requestEventBus.js';

export interface CreateRequestEventBusOptions {
  db: Kysely<Tables>;
  log: Logger;
  /**
   * Read the outbox at least this often, in ms. Default 1 000: with a wake-up source (PostgreSQL LISTEN, or
   * PGlite's worker forwarding this process's commits) the timer only covers lost notifications; without one,
   * use a short interval.
   */
  pollIntervalMs?: number;
  /** Poll interval while nobody is subscribed, in ms (keeps the cursor current cheaply). Default: `pollIntervalMs`. */
  idlePollIntervalMs?: number;
  /** Events read per query. Default 500. */
  batchSize?: number;
}

interface Subscriber {
  options: BusSubscribeOptions;
  /** null until started: events are buffered. */
  afterId: number | null;
  buffer: Array<[RequestEvent, RequestRecord | undefined]>;
  closed: boolean;
}

/**
 * The outbox follower of one process (one per gateway): tails `request_events` by id and fans each event out to
 * in-process subscribers (GraphQL subscriptions, the `/ws` stream). Ids are in commit order (see `outboxLock`),
 * so "everything after the last id read" never skips a late commit. Each commit's notification hands its events over
 * (`offer`): the next one after the cursor is delivered without a read. Reads are driven by `wake()` (a gap, a
 * notification without its event) and by a timer.
 */
export function createRequestEventBus(options: CreateRequestEventBusOptions): RequestEventBus {
  const { db, log } = options;
  const pollIntervalMs = options.pollIntervalMs ?? 1_000;
  const idlePollIntervalMs = options.idlePollIntervalMs ?? pollIntervalMs;
  const batchSize = options.batchSize ?? 500;

  const byRequest = new Map<string, Set<Subscriber>>();
  const everything = new Set<Subscriber>();
  let cursor = 0;
  let started = false;
  let stopped = false;
  let reading: Promise<void> | null = null;
  let again = false;
  /** A read of the outbox is asked for (`wake`). */
  let readWanted = false;
  /** Events notified with their commit (`offer`), not yet delivered, by id. */
  const offered = new Map<number, RequestEvent>();
  let timer: NodeJS.Timeout | null = null;

  const count = (): number => everything.size + [...byRequest.values()].reduce((sum, set) => sum + set.size, 0);

  function deliver(subscriber: Subscriber, event: RequestEvent, record: RequestRecord | undefined): void {
    if (subscriber.closed) return;
    if (subscriber.afterId === null) {
      subscriber.buffer.push([event, record]);
      return;
    }
    if (event.id <= subscriber.afterId) return;
    subscriber.afterId = event.id;
    try {
      subscriber.options.onEvent(event, record);
    } catch (error) {
      log.error({ err: error, eventId: event.id }, 'request event subscriber failed');
    }
  }

  /** Delivers events in id order, each once: an event at or below the cursor was delivered already. */
  async function deliverAll(events: readonly RequestEvent[]): Promise<void> {
    const needRecords =
      [...everything].some((s) => s.options.withRecord === true) ||
      events.some((e) => [...(byRequest.get(e.requestId) ?? [])].some((s) => s.options.withRecord === true));
    const records = new Map<string, RequestRecord | undefined>();
    if (needRecords) {
      for (const requestId of new Set(events.map((e) => e.requestId)))
        records.set(requestId, await getRequest(db, requestId));
    }
    for (const event of events) {
      if (event.id <= cursor) continue;
      cursor = event.id;
      const record = records.get(event.requestId);
      for (const subscriber of [...(byRequest.get(event.requestId) ?? []), ...everything])
        deliver(subscriber, event, record);
    }
  }

  async function readOnce(): Promise<boolean> {
    const events = await listEventsAfter(db, cursor, batchSize);
    if (events.length === 0) return false;
    await deliverAll(events);
    return events.length === batchSize;
  }

  /** The offered events that follow the cursor without a gap, taken out of `offered`; drops those delivered. */
  function takeOffered(): RequestEvent[] {
    const run: RequestEvent[] = [];
    for (let next = offered.get(cursor + 1); next !== undefined; next = offered.get(cursor + 1 + run.length)) {
      offered.delete(next.id);
      run.push(next);
    }
    for (const id of offered.keys()) if (id <= cursor) offered.delete(id);
    return run;
  }

  async function drain(): Promise<void> {
    do {
      again = false;
      try {
        for (;;) {
          const run = takeOffered();
          if (run.length > 0) {
            await deliverAll(run);
            continue;
          }
          if (!readWanted && offered.size === 0) break;
          // Asked to read, or an offered event is not the next one: read everything after the cursor. An offered
          // event is committed, so the read returns it (with whatever came before it).
          readWanted = false;
          const before = cursor;
          while (await readOnce());
          takeOffered();
          if (cursor === before) break;
        }
      } catch (error) {
        // The next wake-up or tick retries from the same cursor.
        log.warn({ err: error }, 'reading request events failed');
        return;
      }
    } while (again && !stopped);
  }

  function kick(): void {
    if (!started || stopped) return;
    if (reading !== null) {
      again = true;
      return;
    }
    reading = drain().finally(() => {
      reading = null;
    });
  }

  function wake(): void {
    readWanted = true;
    kick();
  }

  function offer(event: RequestEvent): void {
    if (!started || stopped || event.id <= cursor) return;
    offered.set(event.id, event);
    kick();
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(
      () => {
        wake();
        schedule();
      },
      count() > 0 ? pollIntervalMs : idlePollIntervalMs,
    );
    timer.unref();
  }

  return {
    get subscriberCount() {
      return count();
    },
    subscribe(subscribeOptions) {
      const subscriber: Subscriber = { options: subscribeOptions, afterId: null, buffer: [], closed: false };
      const set =
        subscribeOptions.requestId === undefined
          ? everything
          : (byRequest.get(subscribeOptions.requestId) ?? new Set());
      if (subscribeOptions.requestId !== undefined) byRequest.set(subscribeOptions.requestId, set);
      set.add(subscriber);
      const wasIdle = count() === 1;
      // Leaving the idle interval: poll now rather than at the end of a long idle wait.
      if (wasIdle && idlePollIntervalMs !== pollIntervalMs && timer !== null) {
        clearTimeout(timer);
        schedule();
      }
      return {
        start(afterId) {
          if (subscriber.closed || subscriber.afterId !== null) return;
          subscriber.afterId = afterId;
          for (const [event, record] of subscriber.buffer.splice(0)) deliver(subscriber, event, record);
        },
        close() {
          if (subscriber.closed) return;
          subscriber.closed = true;
          subscriber.buffer = [];
          set.delete(subscriber);
          if (
            subscribeOptions.requestId !== undefined &&
            set.size === 0 &&
            byRequest.get(subscribeOptions.requestId) === set
          )
            byRequest.delete(subscribeOptions.requestId);
        },
      };
    },
    wake,
    offer,
    async start() {
      if (started) return;
      cursor = await lastEventId(db);
      started = true;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      await reading;
    },
  };
}
