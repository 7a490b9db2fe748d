import type { AppFeeClaimSettings, ClaimChainSettings } from '../chains/settings.js';

export const defaultAppFeeClaimSettings: AppFeeClaimSettings = {
  defaults: { minimumUsdMicros: 1_000_000n, feeUsdMicros: 0n },
  perChain: new Map(),
  ttlMs: 10 * 60_000,
};

export function claimSettingsOf(settings: AppFeeClaimSettings, chainId: number): ClaimChainSettings {
  return { ...settings.defaults, ...settings.perChain.get(chainId) };
}
