import { GatewayError } from '../errors.js';
import { ceilDiv } from './platformFee.js';
import { pow10 } from '../powersOfTen.js';

/** The flat part of every execution fee: USD 0.02 in micro-USD. */
export const EXECUTION_FLAT_FEE_MICROS = 20_000n;

/** Gas of one chain: units, price in wei (smallest native units) and the native coin's price. */
export interface GasLeg {
  units: bigint;
  priceWei: bigint;
  /** What the transaction pays besides its gas, in wei: an OP-stack chain's L1 data fee; 0 when absent. */
  extraWei?: bigint;
  /** Price of one whole native unit in micro-USD. */
  nativeUsdMicros: bigint;
  decimals: number;
}

export interface ExecutionFeeUsdParameters {
  destinationGasUnits: bigint;
  destinationGasPriceWei: bigint;
  /** The fill's L1 data fee in wei on an OP-stack destination (paid besides its gas); 0 when absent. */
  destinationL1FeeWei?: bigint;
  /** Price of one whole destination native unit in micro-USD. */
  destinationNativeUsdMicros: bigint;
  nativeDecimals: number;
  /** Origin gas, only for gasless flows (the gateway submits the origin transaction). */
  originGas?: GasLeg;
}

export interface ExecutionFeeUsdReturnType {
  flatMicros: bigint;
  destinationMicros: bigint;
  originMicros: bigint;
  totalMicros: bigint;
}

/**
 * Execution fee in micro-USD (spec "Fee rules" §1): USD 0.02 flat, always, plus the destination fill gas,
 * always, plus origin gas only when `originGas` is given (gasless flows; otherwise the user pays origin gas
 * to the network directly). Each gas leg is `(units * priceWei + extraWei) * nativeUsdMicros / 10^decimals`,
 * rounded UP per leg, where the destination's `extraWei` is the fill's L1 data fee on an OP-stack chain; the
 * total is the sum of the rounded parts. Throws `INVALID_INPUT` on a negative value or bad decimals.
 */
export function executionFeeUsd(params: ExecutionFeeUsdParameters): ExecutionFeeUsdReturnType {
  const destinationMicros = gasLegUsdMicros({
    units: params.destinationGasUnits,
    priceWei: params.destinationGasPriceWei,
    extraWei: params.destinationL1FeeWei ?? 0n,
    nativeUsdMicros: params.destinationNativeUsdMicros,
    decimals: params.nativeDecimals,
  });
  const originMicros = params.originGas === undefined ? 0n : gasLegUsdMicros(params.originGas);
  return {
    flatMicros: EXECUTION_FLAT_FEE_MICROS,
    destinationMicros,
    originMicros,
    totalMicros: EXECUTION_FLAT_FEE_MICROS + destinationMicros + originMicros,
  };
}

function gasLegUsdMicros({ units, priceWei, extraWei = 0n, nativeUsdMicros, decimals }: GasLeg): bigint {
  if (units < 0n || priceWei < 0n || extraWei < 0n || nativeUsdMicros < 0n) {
    throw new GatewayError('INVALID_INPUT', 'Gas units, gas price, L1 fee and native price must not be negative');
  }
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 255) {
    throw new GatewayError('INVALID_INPUT', `Native decimals must be an integer in 0..255, got ${decimals}`);
  }
  return ceilDiv((units * priceWei + extraWei) * nativeUsdMicros, pow10(decimals));
}
