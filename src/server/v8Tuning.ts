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
 * runs; issue #3's closing note has them). `NODE_OPTIONS` does not accept this flag, hence setting it here.
 */
/*
 * No compacting collections from the memory reducer. Under `bench:soak`'s steady load the old generation grew to
 * ~225–250 MB between two full collections, and the memory reducer's collection then compacted all of it: one
 * main-thread pause of 192 ms (`--trace-gc`: "Mark-Compact (reduce) 225.1 -> 71.9 MB, 191.66 ms"), which left
 * more than 256 quotes in flight (the soak's backlog failure, on PostgreSQL and PGlite alike, once per run). With
 * the reducer's collections as plain ones the same collection paused 16 ms (246 -> 72 MB); the process keeps the
 * freed pages for reuse instead of giving them back at once (its RSS stayed at its high, ~430 MiB).
 */
/*
 * Not settable here: `--liftoff-only`, which `npm start` (package.json) and the benchmarks' server
 * (bench/serverProcess.ts) put on node's command line (`setFlagsFromString` leaves WASM compilation as it was).
 * It keeps PGlite's WASM in V8's baseline compiler. With the optimizing tier, V8 recompiled PGlite's hot functions
 * in the background, and one of them took 2.7 s and 604 MB of compiler memory: the gateway's peak RSS (~930–990
 * MiB during `npm run bench` and at start-up on a new data directory) and ~100 MiB of its idle RSS. Without it the
 * peak was 455–477 MiB and the idle RSS 283 MiB. Since the worker's one-buffer statements, optimized WASM would take
 * about a quarter off the worker's CPU per quote (session 18); the peak target keeps Liftoff. docs/performance.md
 * ("Idle") has the measurements.
 */
export function tuneV8ForServing(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
  setFlagsFromString('--no-memory-reducer-favors-memory');
}
