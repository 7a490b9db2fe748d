/**
 * `GATEWAY_PGLITE_SHARED_BUFFERS` sizes PGlite's buffer pool (default 16 MB). A table whose indexes outgrow the
 * pool reads and writes index pages through the filesystem on every insert (the quote's p99 tripled over
 * a 25-minute soak as the table reached a million rows), so an operator who keeps a large database on PGlite can
 * give it more.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { configFromEnvironment, ConfigError } from '../../src/server/config.js';
import { createDatabase } from '../../src/store/database.js';

const key = `0x${'11'.repeat(32)}` as const;

const poolOf = async (pgliteSharedBuffers?: string) => {
  const database = await createDatabase(pgliteSharedBuffers === undefined ? {} : { pgliteSharedBuffers });
  try {
    const { rows } = await sql<{ size: string }>`select current_setting('shared_buffers') as size`.execute(database.db);
    return rows[0]?.size;
  } finally {
    await database.close();
  }
};

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    configFromEnvironment(env, [], key);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).problems;
  }
  throw new Error('expected the environment to be rejected');
};

describe('PGlite buffer pool size', () => {
  it('is 16 MB by default (the devnet) and what the gateway was given otherwise', async () => {
    expect(await poolOf()).toBe('16MB');
    expect(configFromEnvironment({}, [], key).pgliteSharedBuffers).toBeUndefined();
    const config = configFromEnvironment({ GATEWAY_PGLITE_SHARED_BUFFERS: '64MB' }, [], key);
    expect(config.pgliteSharedBuffers).toBe('64MB');
    expect(await poolOf(config.pgliteSharedBuffers)).toBe('64MB');
  });

  it('refuses a size PGlite cannot start with, or one given beside DATABASE_URL, with the variable named', () => {
    for (const value of ['64', '64mb', '0MB', '64 MB', '2GB', '100kB', '-1MB'])
      expect(problemsOf({ GATEWAY_PGLITE_SHARED_BUFFERS: value }), value).toEqual([
        'GATEWAY_PGLITE_SHARED_BUFFERS must be a size from 128kB to 1GB, written as PostgreSQL writes it (e.g. 256MB)',
      ]);
    expect(
      problemsOf({ GATEWAY_PGLITE_SHARED_BUFFERS: '256MB', DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/test' }),
    ).toEqual([
      "GATEWAY_PGLITE_SHARED_BUFFERS applies to PGlite only: with DATABASE_URL, size PostgreSQL's shared_buffers on its server",
    ]);
  });
});
