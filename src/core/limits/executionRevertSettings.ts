import type { ExecutionRevertSettings } from '../chains/settings.js';

export const defaultExecutionRevertSettings: ExecutionRevertSettings = { cooldownSeconds: 3_600 };
