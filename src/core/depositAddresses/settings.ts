/**
 * When a transfer to a deposit address is worth sweeping (`GATEWAY_DEPOSIT_ADDRESS_SWEEP_MARGIN_BPS`,
 * `GATEWAY_DEPOSIT_ADDRESS_SWEEP_MINIMUM_USD`): a sweep is one transaction the solver pays per address, and what
 * it moves is then a deposit the solver fills or refunds, so a transfer worth less than its sweep costs the solver
 * more than it brings (1 wei to many addresses in one cheap transaction would make the solver pay a sweep each).
 */
export interface SweepSettings {
  /**
   * What a transfer must be worth beyond the sweep's cost, in bps of that cost: 10000 (the default) sweeps only what
   * is worth at least twice its sweep; 0, at least the sweep.
   */
  marginBps: number;
  /** A floor in USD micros (per chain overrides): nothing worth less is swept, whatever the gas. Default 0. */
  minimumUsdMicros: bigint;
  minimumUsdMicrosPerChain?: ReadonlyMap<number, bigint>;
}

export const defaultSweepSettings: SweepSettings = { marginBps: 10_000, minimumUsdMicros: 0n };
