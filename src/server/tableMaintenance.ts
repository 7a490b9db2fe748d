import type { Logger } from 'pino';
import { createPeriodicJob, type PeriodicJob } from '../core/periodicJob.js';
import type { Database } from '../store/database.js';
import { analyzeChangedTables } from '../store/tableStatistics.js';
import { vacuumTables } from '../store/tableVacuum.js';

/**
 * How often a gateway on PGlite vacuums the tables with dead rows (`vacuumTables`) and analyzes those whose rows
 * changed (`analyzeChangedTables`): PostgreSQL's autovacuum does both there. When nothing is due it is four small
 * statements (a statistics flush and a catalog query each, about a millisecond of the PGlite worker in all); often
 * enough that a new gateway's requests table has
 * statistics within seconds of filling.
 */
export const TABLE_MAINTENANCE_INTERVAL_MS = 10_000;

/**
 * When a `VACUUM` or `ANALYZE` that is due runs: once the database has had nothing to do for `quietMs`, or after
 * `maxWaitMs` even so. On PGlite each one holds every other statement for its run (0.1 s to seconds: see
 * docs/performance.md), so one that falls in a burst of quotes adds its whole run to every quote in flight; between
 * bursts it delays nobody. A gateway busy without a pause still gets its maintenance, `maxWaitMs` late.
 */
export interface MaintenanceQuiet {
  quietMs: number;
  maxWaitMs: number;
}

export const TABLE_MAINTENANCE_QUIET: MaintenanceQuiet = { quietMs: 200, maxWaitMs: 30_000 };

/**
 * The info lines of what holds every statement on PGlite while it runs: this job's passes and the worker's
 * checkpoints (logged by `createServer`). `bench:soak` reads them to name what ran in a slow window.
 */
export const PGLITE_HOLD_MESSAGES = {
  analyze: 'analyzed the tables whose rows changed',
  vacuum: 'vacuumed the tables with dead rows',
  checkpoint: 'PGlite checkpoint (it held every statement meanwhile)',
} as const;

/**
 * The periodic table maintenance of a gateway on PGlite, or null on PostgreSQL (its autovacuum does it, beside the
 * queries). Each pass analyzes, then vacuums, what is due, each statement waiting for a quiet moment; a stop ends
 * the wait and leaves the rest for the next start.
 */
export function createTableMaintenance({
  database,
  log,
  intervalMs = TABLE_MAINTENANCE_INTERVAL_MS,
  quiet = TABLE_MAINTENANCE_QUIET,
}: {
  database: Database;
  log: Logger;
  intervalMs?: number;
  quiet?: MaintenanceQuiet;
}): PeriodicJob<void> | null {
  if (database.quietForMs === undefined) return null;
  const quietForMs: () => number = database.quietForMs;
  let waitedMs = 0;

  async function whenQuiet({ first }: { first: boolean }): Promise<boolean> {
    // A table's first statistics go at once: without them the planner guesses (a search that walks the whole
    // table), and the table has just reached `ANALYZE_MIN_PAGES`, so its analysis is short.
    if (first) return !job.stopped;
    const started = performance.now();
    const deadline = started + quiet.maxWaitMs;
    try {
      for (;;) {
        if (job.stopped) return false;
        const quietFor = quietForMs();
        const now = performance.now();
        if (quietFor >= quiet.quietMs || now >= deadline) return true;
        // Busy: look again after a quiet period's length; quiet for a while: just when it would be long enough.
        await new Promise((resolve) => setTimeout(resolve, Math.min(quiet.quietMs - quietFor, deadline - now)));
      }
    } finally {
      waitedMs += performance.now() - started;
    }
  }

  async function run(done: string, failed: string, work: () => Promise<string[]>): Promise<void> {
    waitedMs = 0;
    const started = performance.now();
    try {
      const tables = await work();
      const ms = Math.round(performance.now() - started - waitedMs);
      if (tables.length > 0) log.info({ tables, ms, waitedMs: Math.round(waitedMs) }, done);
    } catch (error) {
      log.warn({ err: error }, `${failed}; tried again at the next interval`);
    }
  }

  const job = createPeriodicJob(intervalMs, async () => {
    // Analyses first: a table's first statistics do not wait (see `whenQuiet`), so nothing should hold them.
    await run(PGLITE_HOLD_MESSAGES.analyze, 'analyzing the tables whose rows changed failed', () =>
      analyzeChangedTables(database.db, { before: whenQuiet }),
    );
    await run(PGLITE_HOLD_MESSAGES.vacuum, 'vacuuming the tables with dead rows failed', () =>
      vacuumTables(database.db, { before: whenQuiet }),
    );
  });
  return job;
}
