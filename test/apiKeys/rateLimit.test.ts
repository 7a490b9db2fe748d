import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type GatewayServer } from '../../src/server/createServer.js';
import { call } from '../helpers/conformance.js';
import { testDatabaseUrl } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const token = 'admin-token-for-tests-0123456789';
const bearer = { authorization: `Bearer ${token}` };
// 2 s windows: 150/min is 5 requests per window without a key, 600/min is 20 per window with one.
const rateLimit = { enabled: true, windowSeconds: 2, anonymousPerMinute: 150, keyPerMinute: 600 };

/** Waits until just after a window starts, so a burst is not split by a boundary. */
async function freshWindow(windowSeconds = rateLimit.windowSeconds): Promise<void> {
  const windowMs = windowSeconds * 1000;
  await sleep(windowMs - (Date.now() % windowMs) + 20);
}

async function burst(url: string, count: number, headers: Record<string, string> = {}): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < count; i++) statuses.push((await call(url, 'getSwapSources', { headers })).status);
  return statuses;
}

describe('rate limits', () => {
  let gateway: TestGateway;
  let key: string;
  let ownLimitKey: string;
  beforeAll(async () => {
    gateway = await startTestGateway({ adminToken: token, rateLimit, solverEnabled: false });
    await freshWindow();
    key = (await call(gateway.url, 'createApiKey', { headers: bearer, body: { name: 'Default limit' } })).body.key;
    ownLimitKey = (
      await call(gateway.url, 'createApiKey', {
        headers: bearer,
        body: { name: 'Own limit', limits: { requestsPerMinute: 60 } },
      })
    ).body.key;
  }, 120_000);
  afterAll(async () => {
    await gateway?.stop();
  });

  it('answers 429 with Retry-After and the error shape over the anonymous limit, and the window resets', async () => {
    await freshWindow();
    expect(await burst(gateway.url, 5)).toEqual([200, 200, 200, 200, 200]);
    const limited = await call(gateway.url, 'getSwapSources');
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({
      errorCode: 'RATE_LIMITED',
      statusCode: 429,
      message: expect.stringContaining('Rate limit'),
    });
    const retryAfter = Number(limited.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);
    // Health and readiness are never limited.
    expect((await call(gateway.url, 'getHealth')).status).toBe(200);
    await sleep(retryAfter * 1000);
    expect((await call(gateway.url, 'getSwapSources')).status).toBe(200);
  });

  it('names the successor in the 429 of the deprecated /requests/v2, with its deprecation headers', async () => {
    await freshWindow();
    await burst(gateway.url, 5);
    const limited = await call(gateway.url, 'getRequestsV2');
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({
      errorCode: 'RATE_LIMITED',
      message: expect.stringContaining('Rate limit'),
      successor: '/requests/v3',
      migrationGuide: '/documentation#getRequests',
    });
    expect(limited.headers.get('deprecation')).toBe('@1784678400');
    // Other operations keep the standard body.
    expect((await call(gateway.url, 'getSwapSources')).body).not.toHaveProperty('successor');
  });

  it('gives a key the higher keyed limit, counted apart from its address', async () => {
    await freshWindow();
    expect(await burst(gateway.url, 6)).toContain(429);
    const keyed = await burst(gateway.url, 21, { 'x-api-key': key });
    expect(keyed.slice(0, 20)).toEqual(Array(20).fill(200));
    expect(keyed[20]).toBe(429);
  });

  it("uses the key's own limits.requestsPerMinute", async () => {
    await freshWindow();
    // 60/min over 2 s windows: 2 requests.
    expect(await burst(gateway.url, 3, { 'x-api-key': ownLimitKey })).toEqual([200, 200, 429]);
  });
});

describe('rate limits shared by two gateways on one PostgreSQL', () => {
  const schema = `test_${randomBytes(6).toString('hex')}`;
  let first: TestGateway;
  let second: GatewayServer;
  let secondUrl: string;
  beforeAll(async () => {
    first = await startTestGateway({
      databaseUrl: testDatabaseUrl,
      databaseSchema: schema,
      rateLimit,
      solverEnabled: false,
    });
    second = await createServer(first.config);
    secondUrl = await second.start();
  }, 120_000);
  afterAll(async () => {
    await second?.stop();
    await first?.server.database.dropSchema().catch(() => undefined);
    await first?.stop();
  });

  it('counts requests to either instance against one limit', async () => {
    await freshWindow();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push(...(await burst(i % 2 === 0 ? first.url : secondUrl, 1)));
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    expect((await call(secondUrl, 'getSwapSources')).status).toBe(429);
  });

  it('counts concurrent requests exactly', async () => {
    await freshWindow();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => call(i % 2 === 0 ? first.url : secondUrl, 'getSwapSources')),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(5);
    expect(answers.filter((a) => a.status === 429)).toHaveLength(7);
  });
});
