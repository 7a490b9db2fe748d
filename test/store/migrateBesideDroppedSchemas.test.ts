/**
 * A gateway migrating its schema on a PostgreSQL database whose other schemas come and go (other gateways, tests):
 * the migrator looks for its tables in every schema, and a schema dropped during that look failed the start
 * ("schema … does not exist", 3F000) before any migration ran. The look is tried again.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/store/database.js';
import { testDatabaseUrl } from '../helpers/db.js';

describe('migrations beside schemas being dropped (postgres)', () => {
  // Another tenant of the database: creates a schema with a table and drops it, as fast as it can.
  const churn = new pg.Client({ connectionString: testDatabaseUrl });
  let churning: Promise<void> | undefined;
  let stop = false;
  beforeAll(async () => {
    await churn.connect();
    churning = (async () => {
      while (!stop) {
        const schema = `churn_${randomBytes(4).toString('hex')}`;
        await churn.query(`create schema ${schema}; create table ${schema}.t (a int, b int, c int, d int)`);
        await churn.query(`drop schema ${schema} cascade`);
      }
    })();
  });
  afterAll(async () => {
    stop = true;
    await churning;
    await churn.end();
  });

  it('migrates every time (it failed about one start in three)', async () => {
    const failures: string[] = [];
    for (let start = 0; start < 10; start++) {
      const database = await createDatabase({
        databaseUrl: testDatabaseUrl,
        schema: `test_${randomBytes(6).toString('hex')}`,
      });
      try {
        await database.migrate();
      } catch (error) {
        failures.push((error as Error).message);
      } finally {
        await database.dropSchema();
        await database.close();
      }
    }
    expect(failures).toEqual([]);
  });
});
