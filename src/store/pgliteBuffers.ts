import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const MiB = 1024 * 1024;
/** The pool of a new or small data directory (the devnet's): PGlite allocates all of it in its WASM heap. */
export const PGLITE_BUFFERS_SMALL_MB = 16;
/** The most the pool grows to by itself; a larger one is set (`GATEWAY_PGLITE_SHARED_BUFFERS`). */
export const PGLITE_BUFFERS_LARGE_MB = 256;

/**
 * PGlite's `shared_buffers` when none is set: a quarter of what the data directory's relations hold at start
 * (`base/`: tables and indexes), rounded up to a power of two, from `smallestMb` (default 16 MB) to 256 MB. In
 * memory, or on a new or small directory, the smallest: the pool lives in PGlite's WASM heap, so the process's RSS grows by its size whether its
 * pages are used or not. A million stored requests (~1.5 GB of tables and indexes) get 256 MB: with 16 MB the
 * indexes a quote enters no longer fit, and each insert read ~3.5 index pages and evicted ~4 dirty ones
 * (docs/performance.md, "PGlite: the buffer pool at a million rows"). Read once, as PGlite starts: a gateway whose
 * data grows large while it runs gets the larger pool at its next start.
 */
export function pgliteSharedBuffersFor(
  dataDir: string | undefined,
  smallestMb: number = PGLITE_BUFFERS_SMALL_MB,
): string {
  const bytes = dataDir === undefined ? 0 : directoryBytes(join(dataDir, 'base'));
  let megabytes = smallestMb;
  while (megabytes < PGLITE_BUFFERS_LARGE_MB && megabytes * MiB * 4 < bytes) megabytes *= 2;
  return `${megabytes}MB`;
}

/** The bytes of the files under `path`; 0 when it does not exist (a new data directory). */
function directoryBytes(path: string): number {
  let entries;
  try {
    entries = readdirSync(path, { withFileTypes: true });
  } catch {
    return 0;
  }
  let bytes = 0;
  for (const entry of entries) {
    const child = join(path, entry.name);
    if (entry.isDirectory()) bytes += directoryBytes(child);
    else if (entry.isFile()) bytes += statSync(child, { throwIfNoEntry: false })?.size ?? 0;
  }
  return bytes;
}
