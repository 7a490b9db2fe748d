import type { Logger } from '../core/logger.js';
import { createRequestEventBus } from '../core/events/requestEventBus.js';
import type { RequestEventBus } from '../core/ports/requestEventBus.js';
import type { Database } from '../store/database.js';
import { listenWithReconnect } from '../store/listen.js';
import { currentSchema, readEventNotification, REQUEST_EVENTS_CHANNEL } from '../store/requestEvents.repository.js';

export interface EventFollowerOptions {
  database: Database;
  /** The PostgreSQL URL of `database` (LISTEN needs a connection of its own, outside the pool). */
  databaseUrl: string | undefined;
  log: Logger;
  /**
   * Poll interval, covering notifications lost while reconnecting (PostgreSQL) or anything missed, in ms.
   * Default 1 000 on PostgreSQL, `PGLITE_POLL_INTERVAL_MS` on PGlite: notifications do the waking.
   */
  pollIntervalMs?: number;
}

/**
 * The outbox poll on PGlite. Every status change is committed by this process (PGlite has one), in the statement
 * that notifies (`insertRequestEvent`), and the worker posts the notification before the statement's answer, on
 * the same channel: none is lost, so the poll only backs them up. At 1 s it was a query a second on an idle gateway.
 */
export const PGLITE_POLL_INTERVAL_MS = 30_000;

export interface EventFollower {
  readonly bus: RequestEventBus;
  start(): Promise<void>;
  /** Stops polling and closes the LISTEN connection. Idempotent. */
  stop(): Promise<void>;
}

/**
 * The process's outbox follower, woken at each commit of a status change (`insertRequestEvent` notifies):
 * on PostgreSQL a dedicated connection LISTENs on `request_events`, so a change committed by any gateway on the
 * database reaches this one's subscribers within a round trip; on PGlite its worker forwards the notification
 * of this process's own commit. A slow poll covers anything missed.
 */
export function createEventFollower(options: EventFollowerOptions): EventFollower {
  const { database, log } = options;
  const usesListen = database.dialect === 'postgres' && options.databaseUrl !== undefined;
  const pglite = !usesListen && database.listen !== undefined;
  const bus = createRequestEventBus({
    // Its own query lane: a read woken by a commit does not queue behind the gateway's other queries.
    db: database.followerDb,
    log,
    pollIntervalMs: options.pollIntervalMs ?? (pglite ? PGLITE_POLL_INTERVAL_MS : 1_000),
  });
  let stopListening: (() => void | Promise<void>) | undefined;
  let stopped = false;
  /** The schema of our outbox, as `current_schema()` names it in notifications (read at start when not configured). */
  let ownSchema = database.schema;

  /**
   * A commit's notification. On PGlite its event goes to the bus as it is: nothing but this process can notify
   * there. On PostgreSQL any role that can connect can notify any channel, so a notification is only a reason to
   * read the outbox (its event, were one there, could be forged: `EVENT_NOTIFICATIONS_SETTING`).
   */
  function onNotification(payload: string): void {
    const { schema, event } = readEventNotification(payload);
    // Several gateways may share a database in different schemas: another outbox's events are not ours (its
    // notification is not even a reason to read ours).
    if (schema !== undefined && schema !== ownSchema) return;
    if (event !== null && pglite) bus.offer(event);
    else bus.wake();
  }

  async function listen(databaseUrl: string): Promise<void> {
    stopListening = await listenWithReconnect({
      databaseUrl,
      channel: REQUEST_EVENTS_CHANNEL,
      onNotification,
      // Anything committed while we were not listening.
      onListening: () => bus.wake(),
      onError: (error) => log.warn({ err: error }, 'request event listener lost its connection; reconnecting in 1 s'),
    });
  }

  return {
    bus,
    async start() {
      ownSchema ??= await currentSchema(database.db);
      await bus.start();
      if (usesListen) await listen(options.databaseUrl!);
      else if (database.listen !== undefined) {
        stopListening = await database.listen(REQUEST_EVENTS_CHANNEL, onNotification);
        // Anything committed before the LISTEN.
        bus.wake();
      }
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      await stopListening?.();
      await bus.stop();
    },
  };
}
