/**
 * The TTL cache the market reads go through: single flight, expiry, failed loads forgotten, and the
 * background renewal (`refreshAfterMs`) that keeps a busy gateway's quotes from waiting for a read. The clock
 * is a number the test moves, so expiry is checked at exact instants instead of by sleeping.
 */
import { describe, expect, it } from 'vitest';
import { createTtlCache } from '../../src/core/cache.js';

/** A load whose calls the test counts and settles by hand. */
function controlledLoads<V>() {
  const calls: Array<{ resolve: (value: V) => void; reject: (error: Error) => void }> = [];
  const load = () => new Promise<V>((resolve, reject) => calls.push({ resolve, reject }));
  return { calls, load };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A cache of a 1,000 ms ttl that renews from 500 ms, holding `initial` for 'k', loaded at time 0. `at(ms)`
 * moves the clock.
 */
async function primedRenewingCache(initial: number) {
  let clock = 0;
  const cache = createTtlCache<string, number>(1_000, { refreshAfterMs: 500, now: () => clock });
  const { calls, load } = controlledLoads<number>();
  const first = cache.get('k', load);
  calls[0]!.resolve(initial);
  await first;
  return { cache, calls, load, at: (ms: number) => void (clock = ms) };
}

describe('createTtlCache', () => {
  it('shares one load among concurrent gets and keeps its value for the ttl after it resolved', async () => {
    let clock = 0;
    const cache = createTtlCache<string, number>(1_000, { now: () => clock });
    const { calls, load } = controlledLoads<number>();
    const first = cache.get('k', load);
    const second = cache.get('k', load);
    expect(calls).toHaveLength(1);
    clock = 5_000; // the load takes long: the ttl counts from when it resolves
    calls[0]!.resolve(1);
    expect(await first).toBe(1);
    expect(await second).toBe(1);
    clock = 5_999;
    expect(await cache.get('k', load)).toBe(1);
    expect(calls).toHaveLength(1);
    clock = 6_000;
    const third = cache.get('k', load);
    expect(calls).toHaveLength(2);
    calls[1]!.resolve(2);
    expect(await third).toBe(2);
  });

  it('forgets a failed load at once, and a load that throws synchronously fails the get', async () => {
    const cache = createTtlCache<string, number>(1_000, { now: () => 0 });
    const { calls, load } = controlledLoads<number>();
    const failing = cache.get('k', load);
    calls[0]!.reject(new Error('rpc down'));
    await expect(failing).rejects.toThrow('rpc down');
    const retry = cache.get('k', load);
    expect(calls).toHaveLength(2);
    calls[1]!.resolve(7);
    expect(await retry).toBe(7);
    await expect(
      cache.get('other', () => {
        throw new Error('bad key');
      }),
    ).rejects.toThrow('bad key');
  });

  it('renews an entry in the background once refreshAfterMs old, answering from the cache meanwhile', async () => {
    const { cache, calls, load, at } = await primedRenewingCache(1);
    at(499);
    expect(await cache.get('k', load)).toBe(1);
    expect(calls).toHaveLength(1);
    at(500);
    expect(await cache.get('k', load)).toBe(1); // answered at once, a renewal started
    expect(await cache.get('k', load)).toBe(1); // one renewal in flight, not two
    expect(calls).toHaveLength(2);
    at(900);
    calls[1]!.resolve(2);
    await settle();
    expect(await cache.get('k', load)).toBe(2);
    at(1_899); // the renewed value counts its age from 900
    expect(await cache.get('k', load)).toBe(2);
    expect(calls).toHaveLength(3); // 999 ms old: renewing again
  });

  it('keeps the entry when a renewal fails, and still expires it at its ttl', async () => {
    const { cache, calls, load, at } = await primedRenewingCache(1);
    at(600);
    expect(await cache.get('k', load)).toBe(1);
    calls[1]!.reject(new Error('rpc down'));
    await settle();
    expect(await cache.get('k', load)).toBe(1); // still valid; the failed renewal is retried
    expect(calls).toHaveLength(3);
    at(1_000); // expired: the caller waits for a load now
    const expired = cache.get('k', load);
    expect(calls).toHaveLength(4);
    calls[3]!.resolve(3);
    expect(await expired).toBe(3);
  });

  it('never stores a renewal started before clear or delete (a balance read before a fill)', async () => {
    const { cache, calls, load, at } = await primedRenewingCache(100);
    at(600);
    await cache.get('k', load); // renewal 1 in flight, reading the old balance
    cache.clear(); // the fill changed the balance
    const fresh = cache.get('k', load);
    expect(calls).toHaveLength(3);
    calls[2]!.resolve(40);
    expect(await fresh).toBe(40);
    calls[1]!.resolve(100); // the stale renewal lands late
    await settle();
    expect(await cache.get('k', load)).toBe(40);
    cache.delete('k');
    const reloaded = cache.get('k', load);
    calls[3]!.resolve(41);
    expect(await reloaded).toBe(41);
  });
});
