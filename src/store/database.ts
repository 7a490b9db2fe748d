import { inspect } from 'node:util';
import { CompiledQuery, Kysely, PGliteDialect, PostgresDialect, sql } from 'kysely';
import { Migrator, NO_MIGRATIONS, type MigrationResultSet } from 'kysely/migration';
import pg from 'pg';
import { migrations } from './migrations/index.js';
import { lockDataDir } from './dataDirLock.js';
import { createPGliteProxy, type PGliteCheckpoint } from './pgliteProxy.js';
import type { Tables } from './tables.js';

export interface CreateDatabaseOptions {
  /** `postgres://...`: use PostgreSQL through a pg pool. Without it, the embedded PGlite is used. */
  databaseUrl?: string;
  /** PGlite only: keep the data in this directory. Without it, PGlite runs in memory. */
  dataDir?: string;
  /** PGlite only: PostgreSQL's `shared_buffers` (`64MB`, `1GB`); default 16 MB (see `CreatePGliteProxyOptions`). */
  pgliteSharedBuffers?: string;
  /**
   * Put every table in this schema (created when missing) instead of the default one, so that several
   * gateways or parallel test files can share one PostgreSQL database. Lower-case identifier.
   */
  schema?: string;
  /** Called when an idle pooled PostgreSQL connection fails; the pool drops it and reconnects on demand. */
  onPoolError?: (error: Error) => void;
  /** PGlite only: called after each checkpoint of its worker, which holds every statement while it runs. */
  onPGliteCheckpoint?: (checkpoint: PGliteCheckpoint) => void;
}

export interface Database {
  db: Kysely<Tables>;
  /**
   * For the outbox follower's reads (`createEventFollower`), which a commit wakes and subscribers wait on. On
   * PGlite a second kysely over the same session: kysely runs one query at a time per instance, in arrival order,
   * so a read woken by a commit would wait behind every query queued meanwhile (up to ~57 ms under
   * `bench:stream`); this one waits only for an open transaction to end. Reads only: its queries are not
   * ordered with `db`'s. On PostgreSQL, `db` itself (its pool runs queries side by side).
   */
  followerDb: Kysely<Tables>;
  dialect: 'pglite' | 'postgres';
  /** The schema every connection uses, when one was given. */
  schema: string | undefined;
  /** Apply every pending migration. Throws the first migration error. */
  migrate(): Promise<void>;
  /** Undo every migration, leaving the schema empty of the gateway's tables (tests, and checking `down`s). */
  migrateDown(): Promise<void>;
  /** Drop the configured schema and everything in it (test cleanup). Throws when no schema was given. */
  dropSchema(): Promise<void>;
  /** Release the pool or close PGlite. Safe to call twice. */
  close(): Promise<void>;
  /**
   * PGlite only: LISTEN on a channel of this process's own commits (see `PGliteProxy.listen`). PostgreSQL
   * listeners need a connection of their own, outside the pool, and open one themselves.
   */
  listen?: (channel: string, onNotification: (payload: string) => void) => Promise<() => void>;
  /**
   * PGlite only: how long its one session has had no statement to run, in ms (see `PGliteProxy.quietForMs`). On
   * PostgreSQL maintenance runs beside the queries and nothing waits for a quiet moment.
   */
  quietForMs?: () => number;
}

const schemaPattern = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Open the gateway's database: PGlite by default (in memory, or in `dataDir`), PostgreSQL when `databaseUrl`
 * is given. Connects before returning, so a wrong URL or an unreachable server fails here, not on the first
 * request. Does not migrate; call `migrate()`.
 */
export async function createDatabase(options: CreateDatabaseOptions = {}): Promise<Database> {
  const { databaseUrl, dataDir, schema } = options;
  if (schema !== undefined && !schemaPattern.test(schema)) {
    throw new Error(`Invalid schema name ${JSON.stringify(schema)}: use a lower-case SQL identifier`);
  }
  if (databaseUrl !== undefined && dataDir !== undefined) {
    throw new Error('Give either databaseUrl (PostgreSQL) or dataDir (PGlite), not both');
  }

  let db: Kysely<Tables>;
  let followerDb: Kysely<Tables> | undefined;
  let dialect: Database['dialect'];
  let listen: Database['listen'];
  let quietForMs: Database['quietForMs'];
  let unlock = async (): Promise<void> => undefined;
  if (databaseUrl !== undefined) {
    dialect = 'postgres';
    const pool = new pg.Pool({
      connectionString: databaseUrl,
      // Fail instead of waiting forever for an unreachable server or an exhausted pool.
      connectionTimeoutMillis: 10_000,
      // Set at connection start-up, so every pooled connection, including ones opened later, uses the schema.
      ...(schema === undefined ? {} : { options: `-c search_path=${schema}` }),
    });
    pool.on('error', (error) => options.onPoolError?.(error));
    db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  } else {
    dialect = 'pglite';
    // One process per data directory (`lockDataDir`): taken before PGlite touches it, released after it closes.
    if (dataDir !== undefined) unlock = await lockDataDir(dataDir);
    // In a worker thread, so the database's CPU runs on another core than the server (see pgliteProxy.ts).
    const pglite = await createPGliteProxy({
      ...(dataDir === undefined ? {} : { dataDir }),
      ...(options.pgliteSharedBuffers === undefined ? {} : { sharedBuffers: options.pgliteSharedBuffers }),
      ...(options.onPGliteCheckpoint === undefined ? {} : { onCheckpoint: options.onPGliteCheckpoint }),
    }).catch(async (error: unknown) => {
      await unlock();
      throw error;
    });
    listen = (channel, onNotification) => pglite.listen(channel, onNotification);
    quietForMs = () => pglite.quietForMs();
    const pgliteDialect = () =>
      new PGliteDialect({
        pglite,
        // PGlite has a single connection, so setting the path once covers every query.
        ...(schema === undefined
          ? {}
          : {
              onCreateConnection: async (connection) => {
                // The name passed schemaPattern, so quoting it is enough.
                await connection.executeQuery(CompiledQuery.raw(`set search_path to "${schema}"`));
              },
            }),
      });
    db = new Kysely<Tables>({ dialect: pgliteDialect() });
    // Never destroyed: destroying it would close the PGlite that `db` owns.
    followerDb = new Kysely<Tables>({ dialect: pgliteDialect() });
  }

  try {
    if (schema === undefined) await sql`select 1`.execute(db);
    else await createSchema(db, schema);
  } catch (error) {
    await db.destroy().catch(() => undefined);
    await unlock();
    const where =
      dialect === 'postgres' ? redact(databaseUrl ?? '') : dataDir === undefined ? 'PGlite' : `PGlite (${dataDir})`;
    throw new Error(`Cannot open the database at ${where}: ${(error as Error).message}`, { cause: error });
  }

  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
    // Without it kysely looks for its bookkeeping tables in every schema and may find another schema's.
    ...(schema === undefined ? {} : { migrationTableSchema: schema }),
  });

  let closed = false;
  return {
    db,
    followerDb: followerDb ?? db,
    dialect,
    schema,
    ...(listen === undefined ? {} : { listen }),
    ...(quietForMs === undefined ? {} : { quietForMs }),
    migrate: async () => throwOnFailure(await withSchemaRaceRetried(() => migrator.migrateToLatest())),
    migrateDown: async () => throwOnFailure(await withSchemaRaceRetried(() => migrator.migrateTo(NO_MIGRATIONS))),
    dropSchema: async () => {
      if (schema === undefined) throw new Error('dropSchema needs the schema option');
      // Dropping every table at once can deadlock with a transaction of a gateway still running on the schema
      // (PostgreSQL then aborts one of the two, 40P01): the drop is tried again.
      for (let attempt = 1; ; attempt++) {
        try {
          await sql`drop schema if exists ${sql.id(schema)} cascade`.execute(db);
          return;
        } catch (error) {
          if ((error as { code?: unknown }).code !== '40P01' || attempt >= 5) throw error;
          await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
        }
      }
    },
    close: async () => {
      if (closed) return;
      closed = true;
      try {
        await db.destroy();
      } finally {
        await unlock();
      }
    },
  };
}

/** `create schema if not exists` can still fail when two instances start at once; losing that race is fine. */
async function createSchema(db: Kysely<Tables>, schema: string): Promise<void> {
  try {
    await sql`create schema if not exists ${sql.id(schema)}`.execute(db);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== '23505' && code !== '42P06') throw error;
  }
}

/**
 * Runs a migration step again when its setup lost a race with another schema of the database being dropped: the
 * migrator looks for its tables in every schema (`has_schema_privilege` on each), and a schema dropped meanwhile
 * (another gateway's, a test's) fails that look with 3F000 before any migration ran. Nothing was written; a few
 * tries see a settled catalog.
 */
async function withSchemaRaceRetried(step: () => Promise<MigrationResultSet>): Promise<MigrationResultSet> {
  for (let attempt = 1; ; attempt++) {
    const result = await step();
    const lostRace =
      result.error !== undefined &&
      (result.results === undefined || result.results.length === 0) &&
      (result.error as { code?: unknown }).code === '3F000';
    if (!lostRace || attempt >= 5) return result;
    await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
  }
}

function throwOnFailure({ error, results }: MigrationResultSet): void {
  if (error === undefined) return;
  const failed = results?.find((r) => r.status === 'Error')?.migrationName;
  const reason = error instanceof Error ? error.message : inspect(error);
  throw new Error(`Migration ${failed ?? '(setup)'} failed: ${reason}`, {
    cause: error,
  });
}

/** The URL without its password, for error messages. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'the configured databaseUrl';
  }
}
