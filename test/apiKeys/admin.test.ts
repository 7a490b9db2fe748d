import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const token = 'admin-token-for-tests-0123456789';
const bearer = { authorization: `Bearer ${token}` };

describe('admin API keys over HTTP', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ adminToken: token, webhooksAllowPrivate: false });
  }, 120_000);
  afterAll(async () => {
    await gateway?.stop();
  });

  const create = (body: unknown, headers: Record<string, string> = bearer) =>
    call(gateway.url, 'createApiKey', { body, headers });

  it.each([
    ['no Authorization header', {}, 401, 'UNAUTHORIZED'],
    ['a non-bearer header', { authorization: `Basic ${token}` }, 401, 'UNAUTHORIZED'],
    ['a wrong token', { authorization: 'Bearer not-the-admin-token-at-all' }, 403, 'FORBIDDEN'],
  ])('refuses %s', async (_label, headers, status, errorCode) => {
    const created = await create({ name: 'x' }, headers);
    expect(created.status).toBe(status);
    expect(created.body).toMatchObject({ errorCode, statusCode: status });
    const listed = await call(gateway.url, 'listApiKeys', { headers: headers });
    expect(listed.status).toBe(status);
  });

  it('creates a key shown once, which then authenticates', async () => {
    const created = await create({
      name: 'Shop',
      sponsorshipEnabled: true,
      limits: { requestsPerMinute: 1000 },
      webhook: { url: 'https://hooks.example.com/relay' },
    });
    expect(created.status).toBe(201);
    const { apiKey, key } = created.body;
    expect(key).toMatch(/^igw_[A-Za-z0-9_-]{43}$/);
    expect(apiKey).toMatchObject({
      name: 'Shop',
      sponsorshipEnabled: true,
      limits: { requestsPerMinute: 1000 },
      webhook: { url: 'https://hooks.example.com/relay', headers: {}, enabled: true },
      revokedAt: null,
    });

    // Shown once: no later answer carries the key (or its hash).
    const got = await call(gateway.url, 'getApiKey', { path: `/admin/api-keys/${apiKey.id}`, headers: bearer });
    expect(got.status).toBe(200);
    expect(JSON.stringify(got.body)).not.toContain(key);
    expect(got.body.apiKey).not.toHaveProperty('key');
    expect(got.body.apiKey).not.toHaveProperty('keyHash');
    const listed = await call(gateway.url, 'listApiKeys', { headers: bearer });
    expect(listed.body.apiKeys.map((k: { id: string }) => k.id)).toContain(apiKey.id);
    expect(JSON.stringify(listed.body)).not.toContain(key);

    const chains = await call(gateway.url, 'getChains', { headers: { 'x-api-key': key } });
    expect(chains.status).toBe(200);
  });

  it('updates settings', async () => {
    const { body } = await create({ name: 'Before' });
    const updated = await call(gateway.url, 'updateApiKey', {
      path: `/admin/api-keys/${body.apiKey.id}`,
      headers: bearer,
      body: {
        name: 'After',
        businessVerified: true,
        payoutAddress: '0x00000000000000000000000000000000000000Ab',
        webhook: null,
      },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.apiKey).toMatchObject({
      name: 'After',
      businessVerified: true,
      payoutAddress: '0x00000000000000000000000000000000000000ab',
      webhook: null,
    });
    const missing = await call(gateway.url, 'updateApiKey', {
      path: '/admin/api-keys/key_missing',
      headers: bearer,
      body: { name: 'x' },
    });
    expect(missing.status).toBe(404);
  });

  it('rotates: the new key works, the old one is refused', async () => {
    const { body } = await create({ name: 'Rotating' });
    const rotated = await call(gateway.url, 'rotateApiKey', {
      path: `/admin/api-keys/${body.apiKey.id}/rotate`,
      headers: bearer,
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.apiKey.id).toBe(body.apiKey.id);
    expect(rotated.body.key).not.toBe(body.key);
    expect((await call(gateway.url, 'getChains', { headers: { 'x-api-key': rotated.body.key } })).status).toBe(200);
    const old = await call(gateway.url, 'getChains', { headers: { 'x-api-key': body.key } });
    expect(old.status).toBe(401);
    expect(old.body).toMatchObject({ errorCode: 'UNAUTHORIZED', statusCode: 401 });
  });

  it('revokes: the key is refused with 401 on every operation, and cannot be rotated', async () => {
    const { body } = await create({ name: 'Revoked' });
    const revoked = await call(gateway.url, 'revokeApiKey', {
      path: `/admin/api-keys/${body.apiKey.id}/revoke`,
      headers: bearer,
    });
    expect(revoked.status).toBe(200);
    expect(revoked.body.apiKey.revokedAt).toEqual(expect.any(Number));
    for (const operationId of ['getChains', 'getSwapSources'] as const) {
      const answer = await call(gateway.url, operationId, { headers: { 'x-api-key': body.key } });
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({ errorCode: 'UNAUTHORIZED' });
    }
    const rotate = await call(gateway.url, 'rotateApiKey', {
      path: `/admin/api-keys/${body.apiKey.id}/rotate`,
      headers: bearer,
    });
    expect(rotate.status).toBe(409);
    const listed = await call(gateway.url, 'listApiKeys', { headers: bearer });
    expect(listed.body.apiKeys.map((k: { id: string }) => k.id)).not.toContain(body.apiKey.id);
    const all = await call(gateway.url, 'listApiKeys', { headers: bearer, query: { includeRevoked: 'true' } });
    expect(all.body.apiKeys.map((k: { id: string }) => k.id)).toContain(body.apiKey.id);
  });

  it('refuses an unknown x-api-key on every REST operation, health and readiness excepted', async () => {
    const headers = { 'x-api-key': 'igw_not-a-key' };
    expect((await call(gateway.url, 'getChains', { headers })).status).toBe(401);
    expect(
      (
        await call(gateway.url, 'getTokenPrice', {
          headers,
          query: { chainId: '31337', address: '0x0000000000000000000000000000000000000000' },
        })
      ).status,
    ).toBe(401);
    expect((await call(gateway.url, 'getHealth', { headers })).status).toBe(200);
  });

  it.each([
    ['a loopback address', 'http://127.0.0.1:8080/hook'],
    ['a private address', 'https://10.1.2.3/hook'],
    ['an IPv4-mapped loopback', 'http://[::ffff:127.0.0.1]/hook'],
    ['localhost', 'http://localhost/hook'],
    ['another scheme', 'ftp://hooks.example.com/hook'],
  ])('refuses a webhook on %s', async (_label, url) => {
    const created = await create({ name: 'Hook', webhook: { url } });
    expect(created.status).toBe(400);
    expect(created.body.errorCode).toBe('INVALID_INPUT');
  });
});

describe('admin API keys without a configured token', () => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ adminToken: undefined });
  }, 120_000);
  afterAll(async () => {
    await gateway?.stop();
  });

  it('answers 404: the admin interface is off', async () => {
    const answer = await call(gateway.url, 'listApiKeys', { headers: bearer });
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ errorCode: 'NOT_FOUND' });
    expect(answer.body.message).toContain('GATEWAY_ADMIN_TOKEN');
  });
});
