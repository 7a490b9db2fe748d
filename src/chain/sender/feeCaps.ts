import type { HeadFeed } from '../heads.js';
import { estimateFees } from './broadcast.js';
import type { Fees } from './payload.js';
import type { SenderState } from './state.js';

/** The fee caps of new sends (`createFeeCaps`). */
export interface FeeCaps {
  /** The caps for a send now: the read kept for the current head, else a new one. */
  read(): Promise<Fees>;
  /** Starts the read for the current head without waiting (a fill being decided); nothing without a live feed. */
  readAhead(): void;
}

/**
 * The fee caps of new sends, as `sameHead` keeps users' balances (`src/chain/market.ts`): the read made at the head
 * feed's current version, kept for that version, so the fills of one block (sent one after the other) read them
 * once, and a read started while a fill is being decided (`readAhead`) is the one its send takes. The caps follow
 * the latest block's base fee, which only a new head changes; a new head or subscription (the version changes)
 * drops the kept read, as does a failed read, and a kept read also expires one block time after it began, in case a
 * subscription stays open but stops pushing heads. Without a live feed every send reads now. A fee bump
 * (`replacement.ts`) always reads anew.
 */
export function createFeeCaps(state: SenderState, heads: HeadFeed | undefined, blockTimeMs: number): FeeCaps {
  let kept: { version: number; at: number; fees: Promise<Fees> } | undefined;
  function read(): Promise<Fees> {
    const version = heads?.version();
    if (version === undefined) return estimateFees(state);
    const now = Date.now();
    if (kept !== undefined && kept.version === version && now - kept.at < blockTimeMs) return kept.fees;
    const entry = { version, at: now, fees: estimateFees(state) };
    kept = entry;
    entry.fees.catch(() => {
      if (kept === entry) kept = undefined;
    });
    return entry.fees;
  }
  return {
    read,
    readAhead() {
      if (heads?.version() !== undefined) read().catch(() => undefined);
    },
  };
}
