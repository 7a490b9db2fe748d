/**
 * `createPeriodicJob` (src/core/periodicJob.ts), the schedule behind settlement, claim payouts and ledger
 * reconciliation: one pass at a time, passes on demand behind the running one, a pass that throws does not stop
 * the schedule, and stop waits for the pass in progress and starts no other. Real timers, short intervals.
 */
import { describe, expect, it } from 'vitest';
import { createPeriodicJob } from '../../src/core/periodicJob.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('createPeriodicJob', () => {
  it('runs one pass at a time, on start, on the interval, on wake and on demand', async () => {
    let passes = 0;
    let inPass = 0;
    let overlapped = false;
    const job = createPeriodicJob(30, async () => {
      inPass += 1;
      if (inPass > 1) overlapped = true;
      await sleep(5);
      inPass -= 1;
      return ++passes;
    });
    await job.start();
    expect(passes).toBe(1);
    // Queued behind nothing: its own result.
    expect(await job.runNow()).toBe(2);
    await sleep(200);
    expect(passes).toBeGreaterThanOrEqual(3);
    const before = passes;
    job.wake();
    job.wake();
    await sleep(100);
    expect(passes).toBeGreaterThanOrEqual(before + 2);
    await job.stop();
    const stoppedAt = passes;
    await sleep(100);
    expect(passes).toBe(stoppedAt);
    expect(job.stopped).toBe(true);
    expect(overlapped).toBe(false);
  });

  it('keeps its schedule after a pass that throws, and stop waits for the pass in progress', async () => {
    let passes = 0;
    let finished = 0;
    const job = createPeriodicJob(20, async () => {
      passes += 1;
      if (passes === 1) throw new Error('first pass fails');
      await sleep(30);
      finished += 1;
    });
    await job.start();
    await expect(job.runNow()).resolves.toBeUndefined();
    await sleep(200);
    expect(passes).toBeGreaterThanOrEqual(3);
    job.wake();
    await sleep(5);
    await job.stop();
    // The passes running or queued when stop was called have ended; none was scheduled after.
    expect(finished).toBe(passes - 1);
    const after = passes;
    await sleep(80);
    expect(passes).toBe(after);
  });
});
