import type { CurrencyConfig } from './types.js';

export type CurrencyFields = Pick<CurrencyConfig, 'id' | 'symbol' | 'name' | 'address' | 'decimals'> &
  Partial<CurrencyConfig>;

/**
 * A currency with the defaults a deployment expects for what it leaves out: bridgeable, featured, accepted
 * directly as input, verified, no fees, no permit. The one place these defaults live (config file, devnet).
 */
export function currencyConfig(fields: CurrencyFields): CurrencyConfig {
  return {
    supportsBridging: true,
    supportsPermit: false,
    featured: true,
    solver: true,
    withdrawalFeeBps: 0,
    depositFeeBps: 0,
    surgeEnabled: false,
    logoURI: '',
    verified: true,
    ...fields,
    id: fields.id.toLowerCase(),
  };
}
