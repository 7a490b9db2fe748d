/** A value as JSON carries it: every bigint (an amount in smallest units) becomes a decimal string. */
export type Jsonified<T> = T extends bigint
  ? string
  : T extends Array<infer U>
    ? Array<Jsonified<U>>
    : T extends object
      ? { [K in keyof T]: Jsonified<T[K]> }
      : T;

/**
 * Converts a core value to plain JSON data: bigints as decimal strings, undefined members dropped, everything
 * else unchanged. A direct walk: quotes are converted on every request, and a JSON round trip costs twice as much.
 */
export function jsonify<T>(value: T): Jsonified<T> {
  return convert(value) as Jsonified<T>;
}

function convert(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = convert(value[i]);
    return out;
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const member = (value as Record<string, unknown>)[key];
    if (member !== undefined) out[key] = convert(member);
  }
  return out;
}

/**
 * An amount read back from stored JSON (a decimal string; a number or bigint is taken as is); absent or null is
 * `fallback`. Anything else (an object, a boolean) is not an amount and throws, as `BigInt` throws on bad text.
 */
export function storedAmount(value: unknown, fallback = 0n): bigint {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint') return BigInt(value);
  throw new SyntaxError(`Cannot convert ${JSON.stringify(value)} to a BigInt`);
}
