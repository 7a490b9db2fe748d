/**
 * `GATEWAY_PGLITE_SHARED_BUFFERS` sizes PGlite's buffer pool; unset, the pool is sized from the data directory at
 * start (16 MB when new or small). A table whose indexes outgrow the pool reads and writes index pages through the
 * filesystem on every insert (issue #14: the quote's p99 tripled over a 25-minute soak as the table reached a
 * million rows), so a large database gets a larger pool, and an operator can set one.
 */
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it, onTestFinished } from 'vitest';
import { configFromEnvironment, ConfigError } from '../../src/server/config.js';
import { createDatabase, type CreateDatabaseOptions } from '../../src/store/database.js';
import { pgliteSharedBuffersFor } from '../../src/store/pgliteBuffers.js';

const key = `0x${'11'.repeat(32)}` as const;

const poolOf = async (pgliteSharedBuffers?: string, options: CreateDatabaseOptions = {}) => {
  const database = await createDatabase(
    pgliteSharedBuffers === undefined ? options : { ...options, pgliteSharedBuffers },
  );
  try {
    const { rows } = await sql<{ size: string }>`select current_setting('shared_buffers') as size`.execute(database.db);
    expect(database.pgliteSharedBuffers).toBe(rows[0]?.size);
    return rows[0]?.size;
  } finally {
    await database.close();
  }
};

const MiB = 1024 * 1024;

/** A new directory, removed after the test. */
function newDirectory(): string {
  const path = mkdtempSync(join(tmpdir(), 'pglite-buffers-'));
  onTestFinished(() => rmSync(path, { recursive: true, force: true }));
  return path;
}

/**
 * Makes `base/` of `dataDir` hold `bytes` more, in a sparse file (no disk space): it stands in for a database of
 * that size, which would take minutes to fill. PostgreSQL leaves files in `base/` that are not a database alone.
 */
function growBase(dataDir: string, bytes: number): void {
  mkdirSync(join(dataDir, 'base', 'sized'), { recursive: true });
  const file = join(dataDir, 'base', 'sized', `${bytes}`);
  writeFileSync(file, '');
  truncateSync(file, bytes);
}

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
  it('grows with the data directory, a quarter of it from 16 MB (or the smallest asked for) up to 256 MB', () => {
    const sizes: Array<[number, string]> = [
      [0, '16MB'],
      [64 * MiB, '16MB'],
      [65 * MiB, '32MB'],
      [300 * MiB, '128MB'],
      [1024 * MiB, '256MB'],
      [6144 * MiB, '256MB'],
    ];
    for (const [bytes, pool] of sizes) {
      const dataDir = newDirectory();
      if (bytes > 0) growBase(dataDir, bytes);
      expect(pgliteSharedBuffersFor(dataDir), `${bytes / MiB} MiB`).toBe(pool);
    }
    expect(pgliteSharedBuffersFor(undefined)).toBe('16MB');
    expect(pgliteSharedBuffersFor(join(newDirectory(), 'not-there'))).toBe('16MB');
    expect(pgliteSharedBuffersFor(undefined, 128)).toBe('128MB');
  });

  it('starts PGlite with the pool its data directory asks for, unless one is given', async () => {
    const dataDir = newDirectory();
    expect(await poolOf(undefined, { dataDir })).toBe('16MB');
    // Reopened once the directory holds 2 GiB: the largest pool by itself.
    growBase(dataDir, 2048 * MiB);
    expect(await poolOf(undefined, { dataDir })).toBe('256MB');
    expect(await poolOf('32MB', { dataDir })).toBe('32MB');
    expect(await poolOf(undefined, { pgliteSmallestBuffersMb: 128 })).toBe('128MB');
  });

  it('is 16 MB in memory (the tests) and what the gateway was given otherwise', async () => {
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
