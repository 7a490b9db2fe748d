/** App-fee claim policy, on its own so the core configuration types can name it without importing the claim code. */
/** Minimum claim and claim fee of one chain, micro-USD. */
export interface ClaimChainSettings {
  minimumUsdMicros: bigint;
  feeUsdMicros: bigint;
}

/**
 * App-fee claim policy: a default and per-chain overrides (`GATEWAY_APP_FEE_CLAIM_MINIMUM_USD`,
 * `GATEWAY_APP_FEE_CLAIM_FEE_USD`), and how long a wallet has to sign a claim.
 */
export interface AppFeeClaimSettings {
  defaults: ClaimChainSettings;
  perChain: ReadonlyMap<number, Partial<ClaimChainSettings>>;
  /** Milliseconds an unsigned claim can still be authorized. */
  ttlMs: number;
}

export const defaultAppFeeClaimSettings: AppFeeClaimSettings = {
  defaults: { minimumUsdMicros: 1_000_000n, feeUsdMicros: 0n },
  perChain: new Map(),
  ttlMs: 10 * 60_000,
};

export function claimSettingsOf(settings: AppFeeClaimSettings, chainId: number): ClaimChainSettings {
  return { ...settings.defaults, ...settings.perChain.get(chainId) };
}
