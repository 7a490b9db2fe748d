import type { CoreConfig } from './chains/types.js';

/** Structured logger the core writes to (pino satisfies it). */
export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * What every core operation receives: configuration and the services it may use.
 * Built once by the composition root (`src/server`); never a module-level singleton.
 */
export interface CoreContext {
  config: CoreConfig;
  log: Logger;
  /** Current time in Unix milliseconds (injectable for tests). */
  now: () => number;
}
