import type { Kysely } from 'kysely';
import { lastEventId, listEventsAfter, type RequestEvent } from '../../store/requestEvents.repository.js';
import type { RequestRecord } from '../../store/requestRecord.js';
import { getRequest } from '../../store/requests.repository.js';
import type { Tables } from '../../store/tables.js';
import type { Logger } from '../logger.js';

/** What a subscriber is told about one committed status change. */
export interface BusEventHandler {
  /**
   * Called once per matching event, in outbox (commit) order. `record` is the request as it is now (its
   * identity fields — user, recipient, referrer, key — never change), present when the subscriber asked for it
   * and the request exists.
   */
  (event: RequestEvent, record: RequestRecord | undefined): void;
}

export interface BusSubscribeOptions {
  /** Only events of this request (lower-case hex); all events when absent. */
  requestId?: string;
  /** Load the request row of each event before calling `onEvent` (filters on user, referrer, key). */
  withRecord?: boolean;
  onEvent: BusEventHandler;
}

/**
 * One subscriber. Events are buffered from `subscribe` until `start(afterId)`, which delivers the buffered
 * ones with an id above `afterId` and then every later one live: take a snapshot between the two calls and
 * nothing committed around it is lost or repeated.
 */
export interface BusSubscription {
  start(afterId: number): void;
  /** Stops delivery. Idempotent. */
  close(): void;
}

export interface RequestEventBus {
  subscribe(options: BusSubscribeOptions): BusSubscription;
  /** Read the outbox now (a notification arrived, or a test wants it). Coalesces with a read in flight. */
  wake(): void;
  /** Starts tailing after the newest committed event. */
  start(): Promise<void>;
  /** Stops the timer and waits for the read in flight. Subscribers stay open; their owners close them. */
  stop(): Promise<void>;
  readonly subscriberCount: number;
}

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
 * so "everything after the last id read" never skips a late commit. Reads are driven by `wake()` (PostgreSQL
 * notifications) and by a timer.
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

  async function readOnce(): Promise<boolean> {
    const events = await listEventsAfter(db, cursor, batchSize);
    if (events.length === 0) return false;
    const needRecords =
      [...everything].some((s) => s.options.withRecord === true) ||
      events.some((e) => [...(byRequest.get(e.requestId) ?? [])].some((s) => s.options.withRecord === true));
    const records = new Map<string, RequestRecord | undefined>();
    if (needRecords) {
      for (const requestId of new Set(events.map((e) => e.requestId)))
        records.set(requestId, await getRequest(db, requestId));
    }
    for (const event of events) {
      cursor = event.id;
      const record = records.get(event.requestId);
      for (const subscriber of [...(byRequest.get(event.requestId) ?? []), ...everything])
        deliver(subscriber, event, record);
    }
    return events.length === batchSize;
  }

  async function drain(): Promise<void> {
    do {
      again = false;
      try {
        while (await readOnce());
      } catch (error) {
        // The next wake-up or tick retries from the same cursor.
        log.warn({ err: error }, 'reading request events failed');
        return;
      }
    } while (again && !stopped);
  }

  function wake(): void {
    if (!started || stopped) return;
    if (reading !== null) {
      again = true;
      return;
    }
    reading = drain().finally(() => {
      reading = null;
    });
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
