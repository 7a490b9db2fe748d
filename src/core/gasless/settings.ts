/** Limits of gasless execution (`GATEWAY_GASLESS_*`, README). */
export interface GaslessSettings {
  /** Most gas one batch may use, `originGasOverhead` included. */
  maxGas: bigint;
  /** Gasless submissions per API key per minute. */
  keyPerMinute: number;
  /** Gasless submissions per user (the batch's EOA) per minute. */
  userPerMinute: number;
}

export const defaultGaslessSettings: GaslessSettings = { maxGas: 1_500_000n, keyPerMinute: 60, userPerMinute: 6 };
