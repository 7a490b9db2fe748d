import type { InventorySettings } from '../chains/settings.js';

export const defaultInventorySettings: InventorySettings = { targetBps: new Map(), thresholdBps: 5_000 };
