import type { GaslessSettings } from '../chains/settings.js';

export const defaultGaslessSettings: GaslessSettings = { maxGas: 1_500_000n, keyPerMinute: 60, userPerMinute: 6 };
