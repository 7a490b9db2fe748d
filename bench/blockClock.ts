/**
 * When each block of a chain reached this process: `npm run bench:fill` subscribes to new heads on the origin and
 * the destination chain and stamps each head on arrival with the monotonic clock its other intervals use. Block
 * timestamps would do the same job, but anvil's are whole seconds; arrival times are sub-millisecond, and the
 * nodes run on this machine, so arrival is within a millisecond of the block being sealed.
 */
import { createHeadFeed, type HeadFeed } from '../src/chain/heads.js';

export interface BlockClock {
  /** `performance.now()` when block `number` was announced, if it was seen. */
  arrivalOf(number: bigint): number | undefined;
  /** The first block announced strictly after `at` (a `performance.now()` time), if any. */
  firstAfter(at: number): { number: bigint; at: number } | undefined;
  stop(): Promise<void>;
}

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

export async function startBlockClock(chainId: number, wsUrl: string): Promise<BlockClock> {
  const feed: HeadFeed = createHeadFeed({ chainId, url: wsUrl, log: quiet });
  const arrivals = new Map<bigint, number>();
  const ordered: Array<{ number: bigint; at: number }> = [];
  feed.onHead((head) => {
    const at = performance.now();
    if (arrivals.has(head.number)) return;
    arrivals.set(head.number, at);
    ordered.push({ number: head.number, at });
  });
  feed.start();
  const deadline = Date.now() + 10_000;
  while (!feed.live()) {
    if (Date.now() > deadline) throw new Error(`no new-heads subscription on chain ${chainId} (${wsUrl})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    arrivalOf: (number) => arrivals.get(number),
    firstAfter(at) {
      // Heads arrive in order: binary search for the first arrival after `at`.
      let low = 0;
      let high = ordered.length;
      while (low < high) {
        const middle = (low + high) >> 1;
        if (ordered[middle]!.at <= at) low = middle + 1;
        else high = middle;
      }
      return ordered[low];
    },
    stop: () => feed.stop(),
  };
}
