/**
 * A keyed cache of asynchronous loads. An entry lives `ttlMs` after its load resolves (`Infinity` = forever);
 * concurrent `get`s of a key that is missing or expired share one in-flight load (single flight), and a load
 * that fails is forgotten at once, so the next `get` tries again.
 */
export interface TtlCache<K, V> {
  get(key: K, load: () => Promise<V>): Promise<V>;
  delete(key: K): void;
  clear(): void;
}

interface Entry<V> {
  value: Promise<V>;
  /** `Infinity` while the load is in flight. */
  expiresAt: number;
}

export function createTtlCache<K, V>(ttlMs: number, now: () => number = () => performance.now()): TtlCache<K, V> {
  const entries = new Map<K, Entry<V>>();
  return {
    get(key, load) {
      const cached = entries.get(key);
      if (cached && cached.expiresAt > now()) return cached.value;
      // A synchronous throw of `load` becomes a rejection, like any other failed load.
      const entry: Entry<V> = { value: new Promise<V>((resolve) => resolve(load())), expiresAt: Infinity };
      entries.set(key, entry);
      entry.value.then(
        () => void (entry.expiresAt = now() + ttlMs),
        () => void (entries.get(key) === entry && entries.delete(key)),
      );
      return entry.value;
    },
    delete: (key) => void entries.delete(key),
    clear: () => entries.clear(),
  };
}
