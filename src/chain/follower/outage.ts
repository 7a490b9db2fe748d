import type { Logger } from '../../core/logger.js';

/** What a follower logs of its passes' failures: an outage once at warn, the rest of it at debug, its end at info. */
export interface OutageLog {
  succeeded(): void;
  failed(error: unknown): void;
}

/**
 * A pass that fails is retried by the next one (the next pushed head or poll: the loop's interval is the only
 * backoff, since a head that arrives is worth reading at once); logging each failure at warn would flood the log
 * for the length of an RPC outage, so only its start and end are logged above debug.
 */
export function createOutageLog(log: Logger, context: object, label: string): OutageLog {
  let failing = false;
  return {
    succeeded() {
      if (failing) log.info(context, `${label}: RPC answers again`);
      failing = false;
    },
    failed(error) {
      if (!failing) log.warn({ ...context, err: error }, `${label} poll failed; retrying on the next poll`);
      else log.debug({ ...context, err: error }, `${label} poll failed again`);
      failing = true;
    },
  };
}
