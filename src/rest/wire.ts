/** The wire form of a core value: every bigint (an amount in smallest units) becomes a decimal string. */
export type Wire<T> = T extends bigint ? string : T extends Array<infer U> ? Array<Wire<U>> : T extends object ? { [K in keyof T]: Wire<T[K]> } : T;

/**
 * Converts a core value to its JSON wire form: bigints as decimal strings, undefined members dropped,
 * everything else unchanged. A direct walk (quotes are converted on every request; a JSON round trip costs
 * twice as much).
 */
export function toWire<T>(value: T): Wire<T> {
  return convert(value) as Wire<T>;
}

function convert(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (Array.isArray(value)) return value.map(convert);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, member] of Object.entries(value)) if (member !== undefined) out[key] = convert(member);
    return out;
  }
  return value;
}
