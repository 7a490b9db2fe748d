/**
 * Issue #18: `/metrics` can be guarded with `GATEWAY_METRICS_TOKEN`. A Prometheus scrape job with the token
 * (`Authorization: Bearer …`) gets the metrics; a request without it, or with another token, gets the
 * reference's error shape and no metrics. Without the variable `/metrics` stays open (observability.test.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ConfigError, configFromEnvironment } from '../../src/server/config.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const token = 'scrape-token-0123456789';
let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway({}, { configure: (config) => ({ ...config, metricsToken: token }) });
}, 180_000);
afterAll(async () => {
  await gateway?.stop();
});

it('serves /metrics only to a scrape that carries the token', async () => {
  const scrape = await fetch(`${gateway.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  expect(scrape.status).toBe(200);
  expect(scrape.headers.get('content-type')).toContain('text/plain');
  expect(await scrape.text()).toContain('# TYPE gateway_http_request_duration_seconds histogram');

  const anonymous = await fetch(`${gateway.url}/metrics`);
  expect(anonymous.status).toBe(401);
  const anonymousBody = await anonymous.json();
  expect(anonymousBody).toMatchObject({ errorCode: 'UNAUTHORIZED' });
  expect(anonymousBody.message).toContain('GATEWAY_METRICS_TOKEN');

  const wrong = await fetch(`${gateway.url}/metrics`, {
    headers: { authorization: 'Bearer another-token-0123456789' },
  });
  expect(wrong.status).toBe(403);
  const wrongBody = await wrong.json();
  expect(wrongBody).toMatchObject({ errorCode: 'FORBIDDEN' });
  expect(JSON.stringify(wrongBody)).not.toContain('gateway_');
});

it('reads GATEWAY_METRICS_TOKEN and refuses a short one', () => {
  const config = configFromEnvironment({ GATEWAY_METRICS_TOKEN: token }, [], `0x${'11'.repeat(32)}`);
  expect(config.metricsToken).toBe(token);
  expect(configFromEnvironment({}, [], `0x${'11'.repeat(32)}`).metricsToken).toBeUndefined();
  expect(() => configFromEnvironment({ GATEWAY_METRICS_TOKEN: 'short' }, [], `0x${'11'.repeat(32)}`)).toThrow(
    ConfigError,
  );
});
