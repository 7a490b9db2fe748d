/**
 * Rebalancing targets, Across-style: each chain's share of a currency's total inventory (`targetBps`, default
 * an equal share) and how far below its target a chain may fall before it is short (`thresholdBps` of the
 * target, default 5000: half).
 */
export interface InventorySettings {
  targetBps: ReadonlyMap<number, number>;
  thresholdBps: number;
}

export const defaultInventorySettings: InventorySettings = { targetBps: new Map(), thresholdBps: 5_000 };
