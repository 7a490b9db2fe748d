/**
 * `createUnsettledBlocks` (src/chain/unsettledBlocks.ts): when a watcher's pass may skip its settling read. A fake
 * clock; the watchers' own tests (depositWatcher, depositAddresses) run it against a chain.
 */
import { describe, expect, it } from 'vitest';
import { createUnsettledBlocks } from '../../src/chain/unsettledBlocks.js';

function clocked() {
  const clock = { now: 1_000_000 };
  return { clock, unsettled: createUnsettledBlocks(() => clock.now, 10_000) };
}

describe('createUnsettledBlocks', () => {
  it('reads at the first pass, then only once a noted block is deep enough', () => {
    const { unsettled } = clocked();
    expect(unsettled.due(100n)).toBe(true);
    unsettled.reading()(100n);
    expect(unsettled.due(101n)).toBe(false);
    unsettled.add(103n);
    expect(unsettled.due(102n)).toBe(false);
    expect(unsettled.due(103n)).toBe(true);
    unsettled.reading()(103n);
    expect(unsettled.due(104n)).toBe(false);
  });

  it('keeps a block deeper than the tip a read settled, and one noted while the read ran', () => {
    const { unsettled } = clocked();
    unsettled.add(50n);
    unsettled.add(60n);
    const settled = unsettled.reading();
    unsettled.add(40n); // committed during the read: the read may not have seen it
    settled(55n);
    expect(unsettled.due(45n)).toBe(true);
    unsettled.reading()(45n);
    expect(unsettled.due(59n)).toBe(false);
    expect(unsettled.due(60n)).toBe(true);
  });

  it('a read that failed clears nothing', () => {
    const { unsettled } = clocked();
    unsettled.reading()(10n);
    unsettled.add(20n);
    unsettled.reading(); // never settled: the read threw
    expect(unsettled.due(20n)).toBe(true);
  });

  it('reads anyway once the interval has passed since the last read', () => {
    const { clock, unsettled } = clocked();
    unsettled.reading()(10n);
    clock.now += 9_999;
    expect(unsettled.due(11n)).toBe(false);
    clock.now += 1;
    expect(unsettled.due(11n)).toBe(true);
  });
});
