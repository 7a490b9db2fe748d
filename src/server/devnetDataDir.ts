import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * The embedded devnet's PGlite data directory when neither `DATABASE_URL` nor `GATEWAY_DATA_DIR` is set: a fresh
 * directory in the OS temp dir, removed when the gateway stops. The devnet's chains are throwaway, so nothing is
 * lost that was not lost before, when PGlite ran in memory. On disk, PostgreSQL's files are not in the WASM heap:
 * the gateway's RSS is what PostgreSQL touches, not the whole database, and a file that grows is not copied whole
 * (the in-memory file system stalls every request while it does). A new directory is initialized in a child
 * process (`pgliteProxy.ts`), so initdb's memory does not stay in the gateway either.
 *
 * Removed by `remove()` (at the orderly stop, after the database is closed) and at the process's `exit` (a second
 * Ctrl-C, the stop's time limit, a failed start). A crash or SIGKILL leaves it in the temp dir, named
 * `gateway-devnet-…`.
 */
export interface TemporaryDataDir {
  readonly path: string;
  /** Removes the directory (once; later calls do nothing). */
  remove(): void;
}

export function createTemporaryDataDir(parent: string = tmpdir()): TemporaryDataDir {
  const dir = mkdtempSync(path.join(parent, 'gateway-devnet-'));
  let removed = false;
  const remove = () => {
    if (removed) return;
    removed = true;
    process.off('exit', remove);
    rmSync(dir, { recursive: true, force: true });
  };
  process.on('exit', remove);
  return { path: dir, remove };
}
