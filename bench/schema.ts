import pg from 'pg';

/** The PostgreSQL schema a benchmark run uses, and how to clean it up. */
export interface BenchSchema {
  /** Variables for the bench server (`GATEWAY_DATABASE_SCHEMA` when the run made its own schema). */
  env: Record<string, string>;
  /** The schema the gateway uses; undefined on PGlite or PostgreSQL's default. */
  schema: string | undefined;
  /** For the header: `, schema … (created for this run, dropped at the end)`, or ''. */
  note: string;
  /** Drops the run's own schema once the gateway has stopped (nothing else holds it); a no-op otherwise. */
  drop(): Promise<void>;
}

/**
 * A fresh devnet needs a fresh database: a schema left by an earlier run holds another chain's deposit cursors
 * and solver nonces, and its fills would stall. With `DATABASE_URL` and no `GATEWAY_DATABASE_SCHEMA`, the run gets
 * a schema of its own (`bench_<name>_…`) and drops it at the end.
 */
export function benchSchema(name: string): BenchSchema {
  const databaseUrl = process.env.DATABASE_URL || undefined;
  const given = process.env.GATEWAY_DATABASE_SCHEMA || undefined;
  if (databaseUrl === undefined) return { env: {}, schema: undefined, note: '', drop: async () => undefined };
  if (given !== undefined) return { env: {}, schema: given, note: `, schema ${given}`, drop: async () => undefined };
  const own = `bench_${name}_${Date.now().toString(36)}_${process.pid}`;
  return {
    env: { GATEWAY_DATABASE_SCHEMA: own },
    schema: own,
    note: `, schema ${own} (created for this run, dropped at the end)`,
    async drop() {
      const client = new pg.Client({ connectionString: databaseUrl });
      try {
        await client.connect();
        await client.query(`drop schema if exists "${own}" cascade`);
      } catch (error) {
        console.error(`(could not drop the benchmark's schema ${own}: ${(error as Error).message})`);
      } finally {
        await client.end().catch(() => undefined);
      }
    },
  };
}
