import type { SweepSettings } from '../chains/settings.js';

export const defaultSweepSettings: SweepSettings = { marginBps: 10_000, minimumUsdMicros: 0n };
