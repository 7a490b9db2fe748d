import type { ChainConfig } from '../chains/types.js';
import type { GaslessSettings } from '../chains/settings.js';

/**
 * Most gas a fill that runs the user's calls (`txs`) is sent with on a chain that sets no `maxCallsGas`. Calls
 * people make (a swap, a mint, a deposit into a vault) need well under a million; the cap bounds what one fill can
 * burn when its calls behave differently once mined than in their simulation.
 */
export const DEFAULT_MAX_CALLS_GAS = 3_000_000n;

/** The gas limit (estimate plus margin) over which a fill with calls is refused on `chain`. */
export const callsGasCap = (chain: Pick<ChainConfig, 'maxCallsGas'>): bigint =>
  chain.maxCallsGas ?? DEFAULT_MAX_CALLS_GAS;

/** The gas (limit plus `originGasOverhead`) over which a gasless batch is refused on `chain`. */
export const gaslessGasCap = (chain: Pick<ChainConfig, 'maxGaslessGas'>, settings: GaslessSettings): bigint =>
  chain.maxGaslessGas ?? settings.maxGas;
