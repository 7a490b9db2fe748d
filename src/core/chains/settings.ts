/**
 * The settings each area reads from the configuration, named here so that `CoreConfig` (./types.ts) names them
 * without importing the areas that use them. Each area keeps its defaults beside its code.
 */

/** Limits of gasless execution (`GATEWAY_GASLESS_*`, README). */
export interface GaslessSettings {
  /** Most gas one batch may use, `originGasOverhead` included. */
  maxGas: bigint;
  /** Gasless submissions per API key per minute. */
  keyPerMinute: number;
  /** Gasless submissions per user (the batch's EOA) per minute. */
  userPerMinute: number;
}

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

/** How long a requester whose transactions reverted on chain is refused (`GATEWAY_EXECUTION_REVERT_COOLDOWN_SECONDS`). */
export interface ExecutionRevertSettings {
  /** Seconds after a fill with calls or a gasless batch of a requester reverted on chain; 0 turns the bar off. */
  cooldownSeconds: number;
}

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

/**
 * Rebalancing targets, Across-style: each chain's share of a currency's total inventory (`targetBps`, default
 * an equal share) and how far below its target a chain may fall before it is short (`thresholdBps` of the
 * target, default 5000: half).
 */
export interface InventorySettings {
  targetBps: ReadonlyMap<number, number>;
  thresholdBps: number;
}

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
