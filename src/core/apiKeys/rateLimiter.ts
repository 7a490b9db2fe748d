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
  /**
   * Hashes of API keys this process found live: they skip the address count `admitRequest` takes before looking
   * up a key it has not seen (they are still looked up, so a revocation holds at once). Bounded by the real keys.
   */
  readonly knownKeys: Set<string>;
  /** Waits for background pruning; call before closing the database. */
  close(): Promise<void>;
}

interface Waiter {
  resolve: (allowed: boolean) => void;
  reject: (error: unknown) => void;
}

/** One bucket's window on this instance. */
interface Lease {
  bucket: string;
  windowStart: number;
  /** Requests this instance has counted in the database and not yet admitted. */
  available: number;
  /** Requests waiting for the statement in flight. */
  waiting: Waiter[];
  fetching: boolean;
  /** The window's total in the database after this instance's last statement. */
  knownTotal: number;
  /** Size and arrival time (ms) of the last lease, to estimate this bucket's rate. */
  lastSize: number;
  lastAt: number;
}

/** A lease covers about this much of a bucket's traffic, so a busy bucket costs one statement per interval. */
const LEASE_INTERVAL_MS = 50;

/**
 * Fixed-window counters in the database (`rate_limit_counters`), so every instance sharing the database
 * enforces the same totals, and none admits more than the limit in total. To keep that off the path of every
 * request, an instance takes requests from its bucket's window in leases: one statement adds the lease's size to
 * the count, and the next requests are admitted locally until it is used up. A lease is sized to the bucket's
 * recent rate (about 50 ms of its traffic; 1 for a quiet bucket) and to at most a quarter of what the window has
 * left, so leases shrink to single requests near the limit and the count stays exact where it matters. Requests
 * that arrive while a statement is in flight wait for it, and the next statement counts them all. What a lease
 * leaves unused when the window ends is counted but never admitted: an instance can refuse a little early (at
 * most one lease, about 50 ms of traffic), never late. Once a bucket is over its limit, this instance refuses it
 * without the database until the window ends.
 */
export function createRateLimiter(
  ctx: Pick<CoreContext, 'db' | 'now' | 'log'>,
  settings: RateLimitSettings,
): RateLimiter {
  const windowMs = settings.windowSeconds * 1000;
  const leases = new Map<string, Lease>();
  /** Buckets known to be over their limit, until the end of the window (Unix ms). */
  const exhausted = new Map<string, number>();
  let prunedBefore = 0;
  let pruning: Promise<void> = Promise.resolve();

  const leaseSize = (lease: Lease, limit: number, now: number): number => {
    const elapsed = Math.max(1, now - lease.lastAt);
    const recent = lease.lastSize === 0 ? 1 : Math.round((lease.lastSize * LEASE_INTERVAL_MS) / elapsed);
    const headroom = Math.floor((limit - lease.knownTotal) / 4);
    return Math.max(1, Math.min(recent, headroom));
  };

  const fetch = (key: string, lease: Lease, limit: number): void => {
    const size = Math.max(lease.waiting.length, leaseSize(lease, limit, ctx.now()));
    lease.fetching = true;
    incrementRateLimitCounter(ctx.db, { bucket: lease.bucket, windowStart: lease.windowStart, by: size }).then(
      (total) => {
        lease.fetching = false;
        lease.knownTotal = total;
        const granted = Math.max(0, Math.min(size, limit - (total - size)));
        lease.available += granted;
        lease.lastSize = granted;
        lease.lastAt = ctx.now();
        const full = granted < size;
        if (full) exhausted.set(lease.bucket, lease.windowStart + windowMs);
        const waiters = lease.waiting;
        lease.waiting = [];
        let served = 0;
        for (; served < waiters.length && lease.available > 0; served++) {
          lease.available -= 1;
          waiters[served]!.resolve(true);
        }
        const rest = waiters.slice(served);
        if (rest.length === 0) return;
        if (full) for (const waiter of rest) waiter.resolve(false);
        else {
          // Arrived while the statement was in flight and not covered by it: the next statement counts them.
          lease.waiting = rest;
          fetch(key, lease, limit);
        }
      },
      (error: unknown) => {
        lease.fetching = false;
        const waiters = lease.waiting;
        lease.waiting = [];
        for (const waiter of waiters) waiter.reject(error);
        leases.delete(key);
      },
    );
  };

  /** Once per window: forget expired buckets and leases here, and delete windows older than the previous one in the database. */
  const prune = (windowStart: number): void => {
    if (windowStart <= prunedBefore) return;
    prunedBefore = windowStart;
    for (const [bucket, until] of exhausted) if (until <= windowStart) exhausted.delete(bucket);
    for (const [key, lease] of leases) if (lease.windowStart < windowStart && !lease.fetching) leases.delete(key);
    const before = windowStart - windowMs;
    pruning = pruning
      .then(() => deleteRateLimitCountersBefore(ctx.db, before))
      .then(
        () => undefined,
        (error: unknown) => ctx.log.warn({ err: error }, 'pruning rate limit counters failed'),
      );
  };

  return {
    settings,
    knownKeys: new Set<string>(),
    async consume(bucket, perMinute) {
      const now = ctx.now();
      const windowStart = Math.floor(now / windowMs) * windowMs;
      const limit = Math.max(1, Math.round((perMinute * settings.windowSeconds) / 60));
      const retryAfterSeconds = Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000));
      prune(windowStart);
      const key = `${windowStart}:${bucket}`;
      let lease = leases.get(key);
      if (lease === undefined) {
        lease = {
          bucket,
          windowStart,
          available: 0,
          waiting: [],
          fetching: false,
          knownTotal: 0,
          lastSize: 0,
          lastAt: now,
        };
        leases.set(key, lease);
      }
      if (lease.available > 0 && lease.waiting.length === 0) {
        lease.available -= 1;
        return { allowed: true, limit, retryAfterSeconds };
      }
      if ((exhausted.get(bucket) ?? 0) > now) return { allowed: false, limit, retryAfterSeconds };
      const current = lease;
      const allowed = new Promise<boolean>((resolve, reject) => current.waiting.push({ resolve, reject }));
      if (!current.fetching) fetch(key, current, limit);
      return { allowed: await allowed, limit, retryAfterSeconds };
    },
    close: () => pruning,
  };
}
