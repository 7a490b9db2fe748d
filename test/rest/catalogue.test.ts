/**
 * Catalogue rules that the devnet does not exercise: hidden chains and `includeChains`, and readiness when a
 * chain's RPC is down.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generatePrivateKey } from 'viem/accounts';
import { configFromEnvironment } from '../../src/server/config.js';
import { createServer, type GatewayServer } from '../../src/server/createServer.js';
import { makeChainConfig } from '../helpers/chainConfig.js';
import { call } from '../helpers/conformance.js';

let server: GatewayServer;
let url: string;

beforeAll(async () => {
  const chains = [
    makeChainConfig(10),
    makeChainConfig(20, { hidden: true, name: 'private-chain', partialDisableLimit: 5_000_000_000_000_000_000n }),
    makeChainConfig(30, { disabled: true }),
  ];
  // The RPC URLs of these chains point at a closed local port, so readiness must fail.
  server = await createServer(
    configFromEnvironment({ PORT: '0', GATEWAY_LOG_LEVEL: 'silent' }, chains, generatePrivateKey()),
  );
  url = await server.start();
});
afterAll(async () => {
  await server?.stop();
});

describe('includeChains', () => {
  it('leaves hidden chains out by default', async () => {
    const { body } = await call(url, 'getChains');
    expect(body.chains.map((c: { id: number }) => c.id)).toEqual([10, 30]);
    expect(body.chains[1].disabled).toBe(true);
  });

  it('includes a hidden chain named by id or by name', async () => {
    for (const includeChains of ['20', 'private-chain', ' 20 , 99 ']) {
      const { body } = await call(url, 'getChains', { query: { includeChains } });
      expect(body.chains.map((c: { id: number }) => c.id)).toEqual([10, 20, 30]);
      expect(body.chains[1].partialDisableLimit).toBe(5e18);
    }
  });
});

describe('readiness', () => {
  it('is 503 not_ready with the failing checks when chain RPCs are down', async () => {
    const { status, body } = await call(url, 'getReadiness');
    expect(status).toBe(503);
    expect(body.status).toBe('not_ready');
    expect(body.checks.database).toEqual({ ok: true });
    expect(body.checks['chain:10'].ok).toBe(false);
  });
});

describe('on PostgreSQL', () => {
  it('serves from PostgreSQL when DATABASE_URL is set, in its own schema', async () => {
    const databaseUrl = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    const schema = `gateway_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6)}`;
    const config = configFromEnvironment(
      { PORT: '0', GATEWAY_LOG_LEVEL: 'silent', DATABASE_URL: databaseUrl, GATEWAY_DATABASE_SCHEMA: schema },
      [makeChainConfig(10)],
      generatePrivateKey(),
    );
    const pgServer = await createServer(config);
    try {
      expect(pgServer.database.dialect).toBe('postgres');
      const pgUrl = await pgServer.start();
      const { body } = await call(pgUrl, 'getReadiness');
      expect(body.checks.database).toEqual({ ok: true });
      const { rows } = await sql<{
        n: string;
      }>`select count(*)::text as n from information_schema.tables where table_schema = ${schema}`.execute(
        pgServer.database.db,
      );
      expect(Number(rows[0]!.n)).toBeGreaterThan(3);
    } finally {
      await pgServer.database.dropSchema().catch(() => undefined);
      await pgServer.stop();
    }
  });
});
