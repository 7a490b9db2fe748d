import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';

/**
 * V8 settings for a process that serves the gateway; its entry point applies them before it starts serving.
 *
 * No allocation-site pretenuring. Under load V8 decided that some of the quote path's allocation sites make
 * long-lived objects and allocated them straight in the old generation. They die within milliseconds like
 * everything else a quote makes, so the old generation filled with garbage at about 20 MB/s. The result was a
 * full collection every 5–8 s, each with a 7–12 ms pause and concurrent marking that took CPU from the quotes.
 * Without pretenuring the old generation grows by well under 1 MB/s. On the devnet at 16 clients, after
 * warm-up, `/quote/v2`'s p99 fell from 15–21 ms to 13–15 ms and p99.9 from 26–35 ms to 19–21 ms (interleaved
 * runs; docs/performance.md has them). `NODE_OPTIONS` does not accept this flag, hence setting it here.
 */
/*
 * The memory reducer's compacting collections only while the gateway is quiet (`gateMemoryReducer` below). V8 starts
 * one when the program allocates little, or as a watchdog when no full collection has run for about 100 s. Under
 * `bench:soak`'s steady load the old generation grew to ~225–260 MB between two full collections, the watchdog's
 * collection then compacted all of it, one main-thread pause of 65–192 ms (`--trace-gc`: "Mark-Compact (reduce)
 * 225.1 -> 71.9 MB, 191.66 ms"), and more than 256 quotes were left in flight (the soak's backlog failure, on
 * PostgreSQL and PGlite alike, once per run). As a plain collection the same one paused 13–16 ms. Switched off for
 * good, the process kept the pages of its busiest moment: idle after start-up at 364 MiB of RSS where
 * the reducer brings it to ~250 (`bench:idle`), and ~430 MiB after any load.
 */
/*
 * Not settable here: `--liftoff-only`, which `npm start` (package.json) and the benchmarks' server
 * (bench/serverProcess.ts) put on node's command line (`setFlagsFromString` leaves WASM compilation as it was).
 * It keeps PGlite's WASM in V8's baseline compiler. With the optimizing tier, V8 recompiled PGlite's hot functions
 * in the background, and one of them took 2.7 s and 604 MB of compiler memory: the gateway's peak RSS (~930–990
 * MiB during `npm run bench` and at start-up on a new data directory) and ~100 MiB of its idle RSS. Without it the
 * peak was 455–477 MiB and the idle RSS 283 MiB. Since the worker's one-buffer statements, optimized WASM would take
 * about a quarter off the worker's CPU per quote; the peak target keeps Liftoff. docs/performance.md
 * ("Idle") has the measurements.
 */
export function tuneV8ForServing(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
  gateMemoryReducer().start();
}

/** Event-loop utilization over a sample at or above which the gateway counts as busy. */
export const BUSY_UTILIZATION = 0.1;
/** How often the gate samples the event loop. */
export const GATE_INTERVAL_MS = 5_000;

export interface MemoryReducerGate {
  /** Samples every `intervalMs` from now on (an unreferenced timer: it never keeps the process alive). */
  start(): void;
  /** Stops sampling and gives the reducer back its default (compacting collections). */
  stop(): void;
  /**
   * Reads the event loop's utilization since the previous sample and sets V8's flag from it: busy at or above
   * `busyUtilization`, quiet below it. Returns whether the gateway is busy now.
   */
  sample(): boolean;
  /** Whether the last sample found the gateway busy (it starts busy: start-up is). */
  readonly busy: boolean;
}

/**
 * Lets V8's memory reducer compact the heap and give pages back only while the event loop is mostly idle. An
 * embedder such as a browser tells V8 when a page goes to the background; Node.js has no such call, so the gate
 * sets the flag the reducer reads when it starts a collection (`--memory-reducer-favors-memory`, V8's default):
 * off while busy, so a collection the reducer starts then is a plain one; on again once a sample finds the loop
 * quiet, so an idle gateway still shrinks. The flag is a process-wide V8 setting: one gate per process.
 */
export function gateMemoryReducer(
  intervalMs = GATE_INTERVAL_MS,
  busyUtilization = BUSY_UTILIZATION,
): MemoryReducerGate {
  let busy = true;
  let last = performance.eventLoopUtilization();
  let timer: NodeJS.Timeout | undefined;
  const favorMemory = (on: boolean) =>
    setFlagsFromString(on ? '--memory-reducer-favors-memory' : '--no-memory-reducer-favors-memory');
  favorMemory(false);

  function sample(): boolean {
    const now = performance.eventLoopUtilization();
    const { utilization } = performance.eventLoopUtilization(now, last);
    last = now;
    const nowBusy = utilization >= busyUtilization;
    if (nowBusy !== busy) {
      busy = nowBusy;
      favorMemory(!busy);
    }
    return busy;
  }

  return {
    start() {
      clearInterval(timer);
      last = performance.eventLoopUtilization();
      timer = setInterval(sample, intervalMs).unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
      busy = false;
      favorMemory(true);
    },
    sample,
    get busy() {
      return busy;
    },
  };
}
