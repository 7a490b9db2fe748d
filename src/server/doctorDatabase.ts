import { existsSync, readdirSync } from 'node:fs';
import { sql } from 'kysely';
import { Migrator } from 'kysely/migration';
import type { Address } from 'viem';
import { createDatabase, type Database } from '../store/database.js';
import { DataDirInUseError } from '../store/dataDirLock.js';
import { migrations } from '../store/migrations/index.js';
import { durableDatabaseProblems, type Env } from './config.js';

/** What the database check found: its lines for `npm run doctor`, and whether anything needs fixing. */
export interface DatabaseReport {
  ok: boolean;
  lines: string[];
}

export interface DoctorDatabaseSettings {
  databaseUrl: string | undefined;
  dataDir: string | undefined;
  databaseSchema: string | undefined;
}

const keyRule =
  'One solver key, one database, ever (docs/real-networks.md, "Operating"): start with the key this database was ' +
  'used with, or give this key a database of its own (and contracts deployed for it)';

/**
 * The database half of `npm run doctor`: the configured database (DATABASE_URL, or GATEWAY_DATA_DIR for PGlite)
 * answers; its schema is the current version, or which migrations the next start applies; no running gateway holds
 * a PGlite directory (the doctor opens it only when none does, as `npm run keys` does); and the solver key it was
 * used with (the signers of `solver_nonces` and `outgoing_txs`) is the configured one. Nothing is written, except
 * `GATEWAY_DATABASE_SCHEMA`, created when missing as the gateway's start creates it.
 */
export async function checkDatabase(
  settings: DoctorDatabaseSettings,
  solver: Address,
  env: Env,
): Promise<DatabaseReport> {
  const { databaseUrl, dataDir, databaseSchema: schema } = settings;
  const problems = durableDatabaseProblems(env);
  if (problems.length > 0)
    return {
      ok: false,
      lines: problems.map((problem) => `✗ database: ${problem}`),
    };
  if (databaseUrl === undefined && dataDir === undefined)
    return {
      ok: true,
      lines: [
        '  database: in memory (GATEWAY_IN_MEMORY_DATABASE=true): nothing to check, and nothing kept at a restart',
      ],
    };
  const where =
    databaseUrl === undefined
      ? `PGlite at ${dataDir}`
      : `PostgreSQL${schema === undefined ? '' : ` (schema ${schema})`}`;
  if (dataDir !== undefined && (!existsSync(dataDir) || readdirSync(dataDir).length === 0))
    return {
      ok: true,
      lines: [`✓ database: ${where} is empty: created and migrated at the first start`],
    };
  let database: Database;
  try {
    database = await createDatabase({
      ...(databaseUrl === undefined ? {} : { databaseUrl }),
      ...(dataDir === undefined ? {} : { dataDir }),
      ...(schema === undefined ? {} : { schema }),
    });
  } catch (error) {
    if (error instanceof DataDirInUseError)
      return {
        ok: false,
        lines: [
          `✗ database: ${where} is held by process ${error.holder.pid} on ${error.holder.hostname} (since ${error.holder.since}): a gateway runs on it`,
          '    fix: stop that gateway before starting another on this directory (PGlite allows one process per data directory); run the doctor again once it is stopped to check the database',
        ],
      };
    return {
      ok: false,
      lines: [
        `✗ database: ${where} does not answer: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
        '    fix: check DATABASE_URL (host, port, user, password, database name) and that the server runs, or GATEWAY_DATA_DIR',
      ],
    };
  }
  try {
    return await inspect(database, where, solver);
  } finally {
    await database.close();
  }
}

async function inspect(database: Database, where: string, solver: Address): Promise<DatabaseReport> {
  const lines: string[] = [];
  let ok = true;
  const known = Object.keys(migrations).sort();
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrations },
    ...(database.schema === undefined ? {} : { migrationTableSchema: database.schema }),
  });
  const applied = await appliedMigrations(database);
  const unknown = applied.filter((name) => !known.includes(name));
  const pending = (await migrator.getMigrations()).filter((info) => info.executedAt === undefined).map((m) => m.name);
  if (unknown.length > 0) {
    ok = false;
    lines.push(
      `✗ database: ${where} was migrated by a newer version of the gateway (${unknown.length} migration(s) this version does not know: ${unknown.slice(-3).join(', ')})`,
      '    fix: run the version of the gateway that migrated it (a database is never migrated down), or restore a backup taken before the upgrade',
    );
  } else if (applied.length === 0) {
    lines.push(`✓ database: ${where} answers; it has no gateway tables yet: migrated at the first start`);
  } else if (pending.length > 0) {
    lines.push(
      `✓ database: ${where} answers; ${pending.length} migration(s) pending (${pending[0]} to ${pending.at(-1)}): applied at the next start, before anything is served`,
    );
  } else {
    lines.push(`✓ database: ${where} answers and is migrated to the current version (${known.at(-1)})`);
  }
  if (applied.length > 0 && unknown.length === 0) {
    const signers = await usedSigners(database);
    const others = signers.filter((signer) => signer !== solver.toLowerCase());
    if (others.length > 0) {
      ok = false;
      lines.push(
        `✗ database: it was used with another solver key (${others.join(', ')}), not the configured ${solver}`,
        `    fix: ${keyRule}`,
      );
    }
  }
  return { ok, lines };
}

/** Whether the gateway's table `name` exists (a database an older version migrated may lack it). */
async function hasTable(database: Database, name: string): Promise<boolean> {
  const qualified = database.schema === undefined ? name : `${database.schema}.${name}`;
  const { rows } = await sql<{ found: string | null }>`select to_regclass(${qualified})::text as found`.execute(
    database.db,
  );
  return rows[0]?.found != null;
}

/** The migrations recorded in the database (none on one the gateway never started on). */
async function appliedMigrations(database: Database): Promise<string[]> {
  if (!(await hasTable(database, 'kysely_migration'))) return [];
  const name = database.schema === undefined ? 'kysely_migration' : `${database.schema}.kysely_migration`;
  const { rows } = await sql<{ name: string }>`select name from ${sql.table(name)} order by name`.execute(database.db);
  return rows.map((row) => row.name);
}

/** The solver addresses the database recorded transactions or nonces for (lower case). */
async function usedSigners(database: Database): Promise<string[]> {
  const signers = new Set<string>();
  if (await hasTable(database, 'solver_nonces'))
    for (const row of await database.db.selectFrom('solver_nonces').select('signer').distinct().execute())
      signers.add(row.signer.toLowerCase());
  if (await hasTable(database, 'outgoing_txs'))
    for (const row of await database.db.selectFrom('outgoing_txs').select('signer').distinct().execute())
      signers.add(row.signer.toLowerCase());
  return [...signers].sort();
}
