/** Timed waits that can all be cut short at once: by a stop, or by news that makes waiting pointless (a new head). */
export interface Sleeper {
  /** Resolves after `ms`, or as soon as `wakeAll` is called. */
  sleep(this: void, ms: number): Promise<void>;
  /** Ends every wait in progress now. */
  wakeAll(this: void): void;
}

export function createSleeper(): Sleeper {
  const sleepers = new Set<() => void>();
  return {
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          sleepers.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, ms);
        sleepers.add(wake);
      }),
    wakeAll: () => {
      for (const wake of [...sleepers]) wake();
    },
  };
}
