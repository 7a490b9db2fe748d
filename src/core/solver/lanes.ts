import type { Logger } from '../logger.js';
import { errorMessage } from '../errors.js';
import { retryDelayMs, type RetryPolicy } from './retry.js';
import { createSleeper } from '../sleeper.js';

/**
 * The solver's lanes: work for one key (a request id, or `deposit:<id>` for a stray deposit's refund) runs after
 * every earlier piece of work for that key, and work that throws is retried with backoff.
 */
export interface Lanes {
  /** Runs `work` after every earlier piece of work for the same key; retried by `resume` (`work` when absent). */
  enqueue: (key: string, work: () => Promise<void>, resume?: () => Promise<void>) => Promise<void>;
  /** Resolves when no work is queued or running. */
  idle(): Promise<void>;
  /**
   * Waits `ms` inside a piece of work; resolves true, or false at once when the solver stops (the work then leaves
   * what it waited for to the next start).
   */
  pause: (ms: number) => Promise<boolean>;
  /** Cuts retry waits short and resolves when the running work has ended; nothing is retried afterwards. */
  stop(): Promise<void>;
}

export interface CreateLanesParameters {
  log: Logger;
  retry: RetryPolicy;
}

export function createLanes({ log, retry }: CreateLanesParameters): Lanes {
  const lanes = new Map<string, Promise<void>>();
  const sleeper = createSleeper();
  let stopped = false;

  /** Waits `ms`, or less when the solver stops. */
  function sleep(ms: number): Promise<void> {
    return stopped ? Promise.resolve() : sleeper.sleep(ms);
  }

  /**
   * Runs `work`; when it throws (an RPC error while deciding, filling or refunding), waits with backoff and runs
   * `resume`, which picks the work up from what is recorded, up to `retry.attempts` in all.
   */
  async function withRetries(key: string, work: () => Promise<void>, resume: () => Promise<void>): Promise<void> {
    for (let attempt = 1; !stopped; attempt++) {
      try {
        await (attempt === 1 ? work() : resume());
        return;
      } catch (error) {
        if (stopped) {
          // Shutting down: the sender and the chains stop under the work; recovery picks it up at the next start.
          log.info({ lane: key, reason: errorMessage(error) }, 'solver stopping: this work resumes at the next start');
          return;
        }
        if (attempt >= retry.attempts) {
          log.error({ err: error, lane: key, attempts: attempt }, 'solver work failed; it is retried after a restart');
          return;
        }
        const delayMs = retryDelayMs(retry, attempt);
        log.warn({ err: error, lane: key, attempt, retryInMs: delayMs }, 'solver work failed; retrying');
        await sleep(delayMs);
      }
    }
  }

  return {
    enqueue(key, work, resume = work) {
      const previous = lanes.get(key) ?? Promise.resolve();
      const next = previous
        .then(() => withRetries(key, work, resume))
        .catch((error: unknown) =>
          log.error({ err: error, lane: key }, 'solver work failed; it is retried after a restart'),
        );
      lanes.set(key, next);
      void next.finally(() => {
        if (lanes.get(key) === next) lanes.delete(key);
      });
      return next;
    },
    async pause(ms) {
      if (ms > 0) await sleep(ms);
      return !stopped;
    },
    async idle() {
      while (lanes.size > 0) await Promise.all([...lanes.values()]);
    },
    async stop() {
      stopped = true;
      sleeper.wakeAll();
      await Promise.all([...lanes.values()]);
    },
  };
}
