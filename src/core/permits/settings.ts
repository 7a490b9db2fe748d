/** Limits of permit deposits (`GATEWAY_PERMIT_*`, README). */
export interface PermitSettings {
  /**
   * Seconds of validity a permit must have left when the gateway accepts it, and the least `permitExpiry` a quote
   * may ask for: the time its deposit needs to be mined before the permit's deadline. The gateway pays that
   * deposit's gas, so a permit that expires while the deposit waits for a block costs the solver alone. On a
   * chain whose blocks are slow the minimum is at least ten of its blocks (`blockTime`).
   */
  minValiditySeconds: number;
  /**
   * After a permit deposit of a user reverted on chain (the gateway paid its gas, the user nothing), that user's
   * permits are refused for this many seconds, at quote and at submission; 0 turns the bar off.
   */
  revertCooldownSeconds: number;
}

export const defaultPermitSettings: PermitSettings = { minValiditySeconds: 60, revertCooldownSeconds: 3_600 };

/** Blocks a permit must outlive at least, whatever `minValiditySeconds` says. */
const MIN_VALIDITY_BLOCKS = 10;

/** The least validity (seconds) a permit on a chain with blocks every `blockTime` seconds must have left. */
export function minPermitValiditySeconds(settings: PermitSettings, blockTime: number): number {
  return Math.max(settings.minValiditySeconds, Math.ceil(MIN_VALIDITY_BLOCKS * blockTime));
}
