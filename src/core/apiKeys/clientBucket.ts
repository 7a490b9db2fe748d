import { isIPv6 } from 'node:net';

/**
 * The rate limit bucket of a client address: an IPv4 address as it is, an IPv6 address by its /64 prefix. One
 * IPv6 subscriber usually holds a whole /64 (often far more), so per-address buckets would let a single client
 * rotate through 2^64 of them. An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) counts as its IPv4 address.
 */
export function clientBucket(address: string): string {
  // Every IPv6 address has a colon: the IPv4 addresses of every request skip the IPv6 parse.
  if (!address.includes(':') || !isIPv6(address)) return `ip:${address}`;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return `ip:${mapped[1]}`;
  return `ip6:${expandIPv6(address).slice(0, 4).join(':')}::/64`;
}

/** The eight 16-bit groups of an IPv6 address, lower-case without leading zeros (zone and embedded IPv4 handled). */
function expandIPv6(address: string): string[] {
  let text = address.toLowerCase().split('%')[0]!;
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const zeros = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...zeros, ...right].map((group) => parseInt(group, 16).toString(16));
}
