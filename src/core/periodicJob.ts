/**
 * A pass of work run on an interval by the solver's background jobs (settlement, claim payouts, ledger
 * reconciliation): one pass at a time, the interval counted from the end of a pass, passes on demand queued behind
 * the running one, and a stop that waits for the pass in progress. A pass reports its own failures (it logs them
 * and returns); one that throws anyway does not stop the schedule.
 */
export interface PeriodicJob<T> {
  /** Runs a pass now, then one every interval; resolves once that first pass has ended (it never rejects). */
  start(): Promise<void>;
  /** Runs a pass after the one in progress, outside the schedule; resolves with its result. */
  runNow(): Promise<T>;
  /** Runs a pass as soon as the one in progress ends, and counts the interval again from there. */
  wake(): void;
  /** No pass is scheduled after this; resolves once the passes already queued have ended (they see `stopped`). */
  stop(): Promise<void>;
  /** Whether `stop` was called: a pass checks it between pieces of work. */
  readonly stopped: boolean;
}

export function createPeriodicJob<T>(intervalMs: number, pass: () => Promise<T>): PeriodicJob<T> {
  let timer: NodeJS.Timeout | undefined;
  /** The pass in progress, or the last one; never rejects. */
  let running: Promise<void> = Promise.resolve();
  let stopped = false;

  function enqueue(): Promise<T> {
    const next = running.then(pass);
    running = next.then(
      () => undefined,
      () => undefined,
    );
    return next;
  }

  function scheduled(): Promise<void> {
    clearTimeout(timer);
    const next = enqueue().then(
      () => undefined,
      () => undefined,
    );
    running = next.finally(schedule);
    return next;
  }

  function schedule(): void {
    clearTimeout(timer);
    if (stopped) return;
    timer = setTimeout(() => void scheduled(), intervalMs);
  }

  return {
    start: () => scheduled(),
    runNow: () => enqueue(),
    wake() {
      if (!stopped) void scheduled();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
    get stopped() {
      return stopped;
    },
  };
}
