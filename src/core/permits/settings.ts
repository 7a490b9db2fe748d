import type { PermitSettings } from '../chains/settings.js';

export const defaultPermitSettings: PermitSettings = { minValiditySeconds: 60, revertCooldownSeconds: 3_600 };

/** Blocks a permit must outlive at least, whatever `minValiditySeconds` says. */
const MIN_VALIDITY_BLOCKS = 10;

/** The least validity (seconds) a permit on a chain with blocks every `blockTime` seconds must have left. */
export function minPermitValiditySeconds(settings: PermitSettings, blockTime: number): number {
  return Math.max(settings.minValiditySeconds, Math.ceil(MIN_VALIDITY_BLOCKS * blockTime));
}
