import type { ChainCursor } from '../store/cursors.repository.js';

/**
 * How long a watcher may read blocks that hold nothing for it without storing its cursor. The cursor is stored in
 * the transaction that records what a range held, so a range with records always moves it; an empty range only
 * moves the cursor in memory until this much time has passed since the stored one was written (or until the
 * watcher stops). Writing it every block cost a database transaction per block per watcher and chain: most of
 * an idle gateway's database work. A restart resumes from the stored cursor, which is never newer than the last
 * block whose records were written, and reads the empty blocks since again (the scan is idempotent).
 */
export const CURSOR_WRITE_INTERVAL_MS = 10_000;

/** Whether a range that recorded `recorded` rows must store the cursor (see `CURSOR_WRITE_INTERVAL_MS`). */
export function cursorWriteDue(
  stored: ChainCursor | undefined,
  recorded: number,
  now: number,
  intervalMs: number = CURSOR_WRITE_INTERVAL_MS,
): boolean {
  return recorded > 0 || stored === undefined || now - stored.updatedAt >= intervalMs;
}
