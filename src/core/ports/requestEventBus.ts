/** The outbox follower the context carries: subscriptions to request events, for streams and subscriptions. */
import type { RequestEvent } from '../../records/requestEvent.js';
import type { RequestRecord } from '../../records/request.js';

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
  /**
   * An event whose commit was just notified with the event itself (`readEventNotification`): delivered without a
   * read when it is the next one after everything delivered, else the outbox is read (a gap: an event not yet
   * seen, or an id a rolled-back transaction took).
   */
  offer(event: RequestEvent): void;
  /** Starts tailing after the newest committed event. */
  start(): Promise<void>;
  /** Stops the timer and waits for the read in flight. Subscribers stay open; their owners close them. */
  stop(): Promise<void>;
  readonly subscriberCount: number;
}
