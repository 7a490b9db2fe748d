/**
 * The memory reducer's gate (src/server/v8Tuning.ts) follows the real event loop: a sample after the loop was kept
 * busy finds the gateway busy, a sample after it sat idle finds it quiet, and it moves back and forth. What the flag
 * does to V8's collections is measured by `bench:idle` and `bench:soak` with `--trace-gc` (docs/performance.md,
 * "Soak"); V8 has no call that reads a flag back.
 */
import { describe, expect, it } from 'vitest';
import { BUSY_UTILIZATION, gateMemoryReducer } from '../../src/server/v8Tuning.js';

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // keeps the event loop busy, as a loaded gateway does
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the memory reducer gate', () => {
  it('starts busy, finds the loop quiet after it idles and busy again after it works', async () => {
    const gate = gateMemoryReducer();
    try {
      expect(gate.busy).toBe(true);
      gate.sample();
      await sleep(300);
      expect(gate.sample()).toBe(false);
      expect(gate.busy).toBe(false);

      spin(300);
      expect(gate.sample()).toBe(true);
      expect(gate.busy).toBe(true);

      await sleep(300);
      expect(gate.sample()).toBe(false);
    } finally {
      gate.stop();
    }
  });

  it('counts a loop busy for less than the threshold of the time as quiet', async () => {
    const gate = gateMemoryReducer();
    try {
      gate.sample();
      // ~2% of 500 ms busy, well under the threshold.
      spin(10);
      await sleep(490);
      expect(BUSY_UTILIZATION).toBeGreaterThan(0.05);
      expect(gate.sample()).toBe(false);
    } finally {
      gate.stop();
    }
  });

  it('samples on its own once started', async () => {
    const gate = gateMemoryReducer(50);
    try {
      gate.start();
      await sleep(300);
      expect(gate.busy).toBe(false);
    } finally {
      gate.stop();
    }
  });
});
