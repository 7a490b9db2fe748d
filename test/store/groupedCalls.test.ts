/**
 * `groupedCalls`, which the solver's request reads and claims and the sender's broadcast marks share: the first call
 * runs alone at once (with `gatherTurn`, with the calls of its turn), the calls made meanwhile go in one group, an
 * item that does not fit waits for a later group, and a failed group rejects its own calls only.
 */
import { describe, expect, it } from 'vitest';
import { groupedCalls } from '../../src/store/groupedCalls.js';

describe('groupedCalls', () => {
  it('runs the first call alone, groups the calls made meanwhile, and answers each in order', async () => {
    const groups: number[][] = [];
    const call = groupedCalls(async (items: readonly number[]) => {
      groups.push([...items]);
      await new Promise((resolve) => setTimeout(resolve, 10));
      return items.map((item) => item * 10);
    });
    const answers = await Promise.all([1, 2, 3, 4].map((item) => call(item)));
    expect(answers).toEqual([10, 20, 30, 40]);
    expect(groups).toEqual([[1], [2, 3, 4]]);
    expect(await call(5)).toBe(50);
    expect(groups.at(-1)).toEqual([5]);
  });

  it('with gatherTurn, the calls made in one turn of the event loop go together in the first group', async () => {
    const groups: number[][] = [];
    const call = groupedCalls(
      async (items: readonly number[]) => {
        groups.push([...items]);
        await new Promise((resolve) => setTimeout(resolve, 10));
        return items.map((item) => item * 10);
      },
      undefined,
      { gatherTurn: true },
    );
    // Made one after the other in one turn (a block's deposits handed on together ask for their claims so), one of
    // them from a microtask of that turn; then one while their group is under way, which waits for the next.
    const together = [call(1), call(2), Promise.resolve().then(() => call(3))];
    await new Promise((resolve) => setTimeout(resolve, 2));
    const later = call(4);
    expect(await Promise.all([...together, later])).toEqual([10, 20, 30, 40]);
    expect(groups).toEqual([[1, 2, 3], [4]]);
  });

  it('keeps an item that does not fit for a later group, in its turn', async () => {
    const groups: string[][] = [];
    const call = groupedCalls(
      async (items: readonly string[]) => {
        groups.push([...items]);
        await new Promise((resolve) => setTimeout(resolve, 5));
        return items.map((item) => item.toUpperCase());
      },
      (group, item) => group.length < 2 && !group.includes(item),
    );
    const answers = await Promise.all(['a', 'b', 'b', 'c', 'd'].map((item) => call(item)));
    expect(answers).toEqual(['A', 'B', 'B', 'C', 'D']);
    expect(groups).toEqual([['a'], ['b', 'c'], ['b', 'd']]);
  });

  it('rejects the calls of a failed group only, and goes on with the next', async () => {
    let runs = 0;
    const call = groupedCalls(async (items: readonly number[]) => {
      runs += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
      if (runs === 2) throw new Error('the statement failed');
      return items.map((item) => item + 1);
    });
    const first = call(1);
    const failed = [call(2), call(3)];
    const settled = await Promise.allSettled([first, ...failed]);
    expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect(await call(4)).toBe(5);
  });
});
