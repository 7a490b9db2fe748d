/**
 * Attacks on the rate limiter's buckets: a flood of random `x-api-key` values (each used to cost a key lookup
 * and was never counted), an IPv6 client rotating addresses inside its /64, and a client writing its own
 * `X-Forwarded-For` entries to pick a fresh bucket. The gateway sits behind one trusted proxy (127.0.0.1, the
 * test itself) that appends the real client address, as a reverse proxy does.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, configFromEnvironment } from '../../src/server/config.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const limit = 20;
let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway({
    rateLimit: { enabled: true, windowSeconds: 60, anonymousPerMinute: limit, keyPerMinute: 600 },
    trustProxy: ['127.0.0.1'],
  });
});
afterAll(async () => {
  await gateway?.stop();
});

/** `n` GET /chains sequentially; returns the status codes. */
async function flood(n: number, headers: (i: number) => Record<string, string>): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < n; i++) statuses.push((await fetch(`${gateway.url}/chains`, { headers: headers(i) })).status);
  return statuses;
}
const count = (statuses: number[], status: number) => statuses.filter((s) => s === status).length;

describe('rate limit buckets', () => {
  it('counts random API keys against the address before looking them up: the flood gets 429, not 401s', async () => {
    const statuses = await flood(100, () => ({
      'x-api-key': randomBytes(24).toString('hex'),
      'x-forwarded-for': '198.51.100.10',
    }));
    // At most one window's worth of keys is looked up (each answered 401); the rest are refused by the limiter.
    expect(count(statuses, 401)).toBeLessThanOrEqual(limit);
    expect(count(statuses, 429)).toBeGreaterThanOrEqual(100 - limit);
    expect(count(statuses, 401) + count(statuses, 429)).toBe(100);
  });

  it('puts every address of an IPv6 /64 in one bucket', async () => {
    const statuses = await flood(40, (i) => ({ 'x-forwarded-for': `2001:db8:1:2:${(i + 1).toString(16)}::${i + 7}` }));
    expect(count(statuses, 200)).toBe(limit);
    expect(count(statuses, 429)).toBe(40 - limit);
    // Another /64 has its own bucket.
    expect(await flood(1, () => ({ 'x-forwarded-for': '2001:db8:1:3::1' }))).toEqual([200]);
  });

  it('believes only the trusted hop: spoofed X-Forwarded-For entries do not open new buckets', async () => {
    const statuses = await flood(30, (i) => ({ 'x-forwarded-for': `10.9.${i}.1, 203.0.113.7` }));
    expect(count(statuses, 200)).toBe(limit);
    expect(count(statuses, 429)).toBe(30 - limit);
  });

  it('GATEWAY_TRUST_PROXY takes a hop count or addresses, and refuses "true"', () => {
    const parse = (value: string) =>
      configFromEnvironment({ GATEWAY_TRUST_PROXY: value }, [], `0x${'11'.repeat(32)}`).trustProxy;
    expect(parse('2')).toBe(2);
    expect(parse('10.0.0.0/8, 127.0.0.1')).toEqual(['10.0.0.0/8', '127.0.0.1']);
    expect(parse('false')).toBe(false);
    expect(() => parse('true')).toThrow(ConfigError);
  });
});
