import { mkdir, open, readFile, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** The file that marks a PGlite data directory as open by one process. */
export const DATA_DIR_LOCK_FILE = 'gateway.lock';

/** A PGlite data directory another live process has open (a running gateway, `npm run keys`, ...). */
export class DataDirInUseError extends Error {
  override name = 'DataDirInUseError';
  constructor(
    readonly dataDir: string,
    readonly holder: { pid: number; hostname: string; since: string },
  ) {
    super(
      `The data directory ${dataDir} is in use by process ${holder.pid} on ${holder.hostname} (since ${holder.since}): ` +
        'PGlite allows one process per data directory, and a second one would corrupt it. Stop that process first ' +
        '(a running gateway, or a command such as `npm run keys`), or use its admin operations instead. If that ' +
        `process no longer exists on ${holder.hostname}, remove ${join(dataDir, DATA_DIR_LOCK_FILE)}.`,
    );
  }
}

/**
 * Takes a PGlite data directory for this process, or throws `DataDirInUseError` naming the process that has it.
 *
 * PGlite writes `postmaster.pid` but never checks it: two processes opening one directory both succeed and then
 * overwrite each other's pages. So the gateway keeps its own lock file, created exclusively (`wx`) with the
 * holder's pid and host. A lock left by a process that died (a crash, `kill -9`) is taken over when its pid is no
 * longer alive on this host; one held from another host (a shared filesystem) cannot be checked and is refused.
 * Resolves to the release, which removes the file if it is still this process's.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  await mkdir(dataDir, { recursive: true });
  const path = join(dataDir, DATA_DIR_LOCK_FILE);
  const mine = JSON.stringify({ pid: process.pid, hostname: hostname(), since: new Date().toISOString() });
  // Three tries: two processes taking over one stale lock at once both remove it, and one of them then finds the
  // other's (live) lock.
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const file = await open(path, 'wx');
      await file.writeFile(mine);
      await file.close();
      return async () => {
        const current = await readFile(path, 'utf8').catch(() => null);
        if (current === mine) await unlink(path).catch(() => undefined);
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = parseHolder(await readFile(path, 'utf8').catch(() => ''));
    if (holder !== null && (holder.hostname !== hostname() || isAlive(holder.pid))) {
      throw new DataDirInUseError(dataDir, holder);
    }
    // Left by a process that is gone (or unreadable, from a crash mid-write): taken over.
    await unlink(path).catch(() => undefined);
  }
  throw new Error(`Could not take the lock of the data directory ${dataDir} (${path})`);
}

function parseHolder(text: string): { pid: number; hostname: string; since: string } | null {
  try {
    const value = JSON.parse(text) as { pid?: unknown; hostname?: unknown; since?: unknown };
    if (typeof value.pid !== 'number' || typeof value.hostname !== 'string') return null;
    return { pid: value.pid, hostname: value.hostname, since: typeof value.since === 'string' ? value.since : '?' };
  } catch {
    return null;
  }
}

/** Whether a process with this pid exists here (`EPERM`: it does, owned by someone else). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
