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
export function tuneV8ForServing(): void {
  setFlagsFromString('--no-allocation-site-pretenuring');
}
