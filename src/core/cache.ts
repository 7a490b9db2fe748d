/**
 * A keyed cache of asynchronous loads. An entry lives `ttlMs` after its load resolves (`Infinity` = forever);
 * concurrent `get`s of a key that is missing or expired share one in-flight load (single flight), and a load
 * that fails is forgotten at once, so the next `get` tries again.
 *
 * With `refreshAfterMs`, a `get` of an entry at least that old (and not yet expired) still answers from the
 * cache at once, and starts one background load that replaces the entry when it resolves. Under steady traffic
 * an entry is then renewed before it expires and no caller waits for a load, yet no answer is older than
 * `ttlMs`. A background load that fails leaves the entry as it was, to expire as usual; `delete` and `clear`
 * also drop what a background load in flight would have stored.
 */
export interface TtlCache<K, V> {
  get(key: K, load: () => Promise<V>): Promise<V>;
  delete(key: K): void;
  clear(): void;
}

export interface TtlCacheOptions {
  /** Age after which a `get` renews the entry in the background; must be below the ttl to have an effect. */
  refreshAfterMs?: number;
  /** The clock, in milliseconds; `performance.now` by default. */
  now?: () => number;
}

interface Entry<V> {
  value: Promise<V>;
  /** When the load resolved; `Infinity` while it is in flight. */
  loadedAt: number;
  /** True while a background load of this entry is in flight. */
  refreshing: boolean;
}

export function createTtlCache<K, V>(
  ttlMs: number,
  { refreshAfterMs = Infinity, now = () => performance.now() }: TtlCacheOptions = {},
): TtlCache<K, V> {
  const entries = new Map<K, Entry<V>>();

  /** Starts a load for `key`; its entry holds the promise at once and counts its age from when it resolves. */
  function start(key: K, load: () => Promise<V>): Entry<V> {
    // A synchronous throw of `load` becomes a rejection, like any other failed load.
    const entry: Entry<V> = {
      value: new Promise<V>((resolve) => resolve(load())),
      loadedAt: Infinity,
      refreshing: false,
    };
    entry.value.then(
      () => void (entry.loadedAt = now()),
      () => undefined,
    );
    return entry;
  }

  return {
    get(key, load) {
      const cached = entries.get(key);
      const at = now();
      if (cached && (cached.loadedAt === Infinity || at - cached.loadedAt < ttlMs)) {
        if (!cached.refreshing && at - cached.loadedAt >= refreshAfterMs) {
          cached.refreshing = true;
          const next = start(key, load);
          next.value.then(
            () => void (entries.get(key) === cached && entries.set(key, next)),
            () => void (cached.refreshing = false),
          );
        }
        return cached.value;
      }
      const entry = start(key, load);
      entries.set(key, entry);
      entry.value.catch(() => void (entries.get(key) === entry && entries.delete(key)));
      return entry.value;
    },
    delete: (key) => void entries.delete(key),
    clear: () => entries.clear(),
  };
}
