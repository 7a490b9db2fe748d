/**
 * Retries of the solver's work (deciding, filling, refunding) after an error, typically an RPC failure: with
 * exponential backoff, a bounded number of times, each failure logged. Whatever is still failing after the last
 * attempt is left to the next restart's recovery.
 */
export interface RetryPolicy {
  /** Attempts in all, the first one included. */
  attempts: number;
  /** Delay before the second attempt; it doubles each time. */
  firstDelayMs: number;
  /** The longest delay between two attempts. */
  maxDelayMs: number;
}

/** 10 attempts over about 2.5 minutes: 0.5, 1, 2, 4, 8, 16, 32, 60, 60 s apart. */
export const defaultRetryPolicy: RetryPolicy = { attempts: 10, firstDelayMs: 500, maxDelayMs: 60_000 };

/** The wait after the `failures`-th failed attempt (1-based). */
export function retryDelayMs(policy: RetryPolicy, failures: number): number {
  return Math.min(policy.maxDelayMs, policy.firstDelayMs * 2 ** (failures - 1));
}
