import { deleteRateLimitCountersBefore, incrementRateLimitCounter } from '../../store/rateLimitCounters.repository.js';
import type { CoreContext } from '../context.js';

/** How requests are limited (parsed by the server's config; see `RateLimitConfig` there for the variables). */
export interface RateLimitSettings {
  enabled: boolean;
  /** Fixed window length, seconds. */
  windowSeconds: number;
  /** Per client address without a key. */
  anonymousPerMinute: number;
  /** Per key, unless the key's `limits.requestsPerMinute` says otherwise. */
  keyPerMinute: number;
}

export interface RateLimitDecision {
  allowed: boolean;
  /** Requests allowed in one window. */
  limit: number;
  /** Whole seconds until the current window ends (at least 1). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  readonly settings: RateLimitSettings;
  /** Counts one request of `bucket` against `perMinute` (scaled to the window) and says whether it may run. */
  consume(bucket: string, perMinute: number): Promise<RateLimitDecision>;
  /** Waits for background pruning; call before closing the database. */
  close(): Promise<void>;
}

interface Waiter {
  limit: number;
  resolve: (ordinal: number) => void;
  reject: (error: unknown) => void;
}

interface Batch {
  bucket: string;
  windowStart: number;
  waiting: Waiter[];
  inFlight: boolean;
}

/**
 * A fixed-window counter in the database (`rate_limit_counters`), so every instance sharing the database
 * enforces the same totals exactly. To keep that cheap under load, requests of one bucket that arrive while its
 * statement is in flight share the next one (`count = count + n`), each getting its own place in the count:
 * at most one statement per bucket is in flight per instance. Once a bucket is over its limit, this instance
 * refuses it without the database until the window ends (the count only grows within a window).
 */
export function createRateLimiter(ctx: Pick<CoreContext, 'db' | 'now' | 'log'>, settings: RateLimitSettings): RateLimiter {
  const windowMs = settings.windowSeconds * 1000;
  const batches = new Map<string, Batch>();
  /** Buckets known to be over their limit, until the end of the window (Unix ms). */
  const exhausted = new Map<string, number>();
  let prunedBefore = 0;
  let pruning: Promise<void> = Promise.resolve();

  const flush = (key: string, batch: Batch): void => {
    const waiters = batch.waiting;
    batch.waiting = [];
    batch.inFlight = true;
    incrementRateLimitCounter(ctx.db, { bucket: batch.bucket, windowStart: batch.windowStart, by: waiters.length }).then(
      (total) => {
        const first = total - waiters.length + 1;
        waiters.forEach((waiter, i) => waiter.resolve(first + i));
        if (waiters.some((waiter) => total >= waiter.limit)) exhausted.set(batch.bucket, batch.windowStart + windowMs);
        next(key, batch);
      },
      (error: unknown) => {
        for (const waiter of waiters) waiter.reject(error);
        next(key, batch);
      },
    );
  };
  const next = (key: string, batch: Batch): void => {
    batch.inFlight = false;
    if (batch.waiting.length > 0) flush(key, batch);
    else batches.delete(key);
  };

  /** Once per window: forget expired buckets here and delete windows older than the previous one in the database. */
  const prune = (windowStart: number): void => {
    const before = windowStart - windowMs;
    if (before <= prunedBefore) return;
    prunedBefore = before;
    for (const [bucket, until] of exhausted) if (until <= windowStart) exhausted.delete(bucket);
    pruning = pruning
      .then(() => deleteRateLimitCountersBefore(ctx.db, before))
      .then(
        () => undefined,
        (error: unknown) => ctx.log.warn({ err: error }, 'pruning rate limit counters failed'),
      );
  };

  return {
    settings,
    async consume(bucket, perMinute) {
      const now = ctx.now();
      const windowStart = Math.floor(now / windowMs) * windowMs;
      const limit = Math.max(1, Math.round((perMinute * settings.windowSeconds) / 60));
      const retryAfterSeconds = Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000));
      if ((exhausted.get(bucket) ?? 0) > now) return { allowed: false, limit, retryAfterSeconds };
      prune(windowStart);
      const key = `${windowStart}:${bucket}`;
      let batch = batches.get(key);
      if (batch === undefined) {
        batch = { bucket, windowStart, waiting: [], inFlight: false };
        batches.set(key, batch);
      }
      const ordinal = new Promise<number>((resolve, reject) => batch.waiting.push({ limit, resolve, reject }));
      if (!batch.inFlight) flush(key, batch);
      return { allowed: (await ordinal) <= limit, limit, retryAfterSeconds };
    },
    close: () => pruning,
  };
}
