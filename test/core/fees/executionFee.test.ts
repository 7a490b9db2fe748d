import { describe, expect, it } from 'vitest';
import {
  executionFeeUsd,
  type ExecutionFeeUsdParameters,
  type ExecutionFeeUsdReturnType,
} from '../../../src/core/fees/index.js';

const GWEI = 10n ** 9n;
const ETH_USD = 3_000_000_000n; // USD 3000.000000
const SOL_USD = 150_000_000n; // USD 150

describe('executionFeeUsd', () => {
  it.each<[string, ExecutionFeeUsdParameters, ExecutionFeeUsdReturnType]>([
    [
      'flat fee only when gas is free',
      { destinationGasUnits: 0n, destinationGasPriceWei: 0n, destinationNativeUsdMicros: ETH_USD, nativeDecimals: 18 },
      { flatMicros: 20_000n, destinationMicros: 0n, originMicros: 0n, totalMicros: 20_000n },
    ],
    [
      // 100000 gas * 1 gwei = 1e14 wei = 0.0001 ETH = USD 0.30
      'regular flow: destination gas, no origin gas',
      {
        destinationGasUnits: 100_000n,
        destinationGasPriceWei: GWEI,
        destinationNativeUsdMicros: ETH_USD,
        nativeDecimals: 18,
      },
      { flatMicros: 20_000n, destinationMicros: 300_000n, originMicros: 0n, totalMicros: 320_000n },
    ],
    [
      // destination as above; origin 50000 gas * 0.01 gwei = 5e11 wei * 3000 USD = USD 0.0015
      'gasless flow: destination and origin gas',
      {
        destinationGasUnits: 100_000n,
        destinationGasPriceWei: GWEI,
        destinationNativeUsdMicros: ETH_USD,
        nativeDecimals: 18,
        originGas: { units: 50_000n, priceWei: 10_000_000n, nativeUsdMicros: ETH_USD, decimals: 18 },
      },
      { flatMicros: 20_000n, destinationMicros: 300_000n, originMicros: 1_500n, totalMicros: 321_500n },
    ],
    [
      // 21000 gas * 1 wei * USD 3000 / 1e18 = 6.3e-8 micro-USD -> 1
      'a dust destination leg rounds up to 1 micro-USD',
      {
        destinationGasUnits: 21_000n,
        destinationGasPriceWei: 1n,
        destinationNativeUsdMicros: ETH_USD,
        nativeDecimals: 18,
      },
      { flatMicros: 20_000n, destinationMicros: 1n, originMicros: 0n, totalMicros: 20_001n },
    ],
    [
      // each leg is rounded up on its own: two dust legs cost 2 micro-USD
      'gasless dust on both legs rounds each leg up',
      {
        destinationGasUnits: 1n,
        destinationGasPriceWei: 1n,
        destinationNativeUsdMicros: ETH_USD,
        nativeDecimals: 18,
        originGas: { units: 1n, priceWei: 1n, nativeUsdMicros: ETH_USD, decimals: 18 },
      },
      { flatMicros: 20_000n, destinationMicros: 1n, originMicros: 1n, totalMicros: 20_002n },
    ],
    [
      // origin on a 9-decimals chain: 5000 units * 1000 lamports-per-unit = 5e6 lamports = 0.005 SOL = USD 0.75
      'gasless origin with other native decimals',
      {
        destinationGasUnits: 0n,
        destinationGasPriceWei: 0n,
        destinationNativeUsdMicros: ETH_USD,
        nativeDecimals: 18,
        originGas: { units: 5_000n, priceWei: 1_000n, nativeUsdMicros: SOL_USD, decimals: 9 },
      },
      { flatMicros: 20_000n, destinationMicros: 0n, originMicros: 750_000n, totalMicros: 770_000n },
    ],
    [
      // OP-stack destination: 100,000 gas at 0.01 gwei = 1e12 wei, plus an L1 data fee of 4e12 wei = 5e12 wei
      // = 0.000005 ETH = USD 0.015, rounded up once over the sum
      'L1 data fee on an OP-stack destination',
      {
        destinationGasUnits: 100_000n,
        destinationGasPriceWei: 10_000_000n,
        destinationL1FeeWei: 4_000_000_000_000n,
        destinationNativeUsdMicros: ETH_USD,
        nativeDecimals: 18,
      },
      { flatMicros: 20_000n, destinationMicros: 15_000n, originMicros: 0n, totalMicros: 35_000n },
    ],
    [
      // 1 wei of gas and 1 wei of L1 fee: 2 wei, one rounding up, not one per part
      'L1 data fee rounded with the gas',
      {
        destinationGasUnits: 1n,
        destinationGasPriceWei: 1n,
        destinationL1FeeWei: 1n,
        destinationNativeUsdMicros: ETH_USD,
        nativeDecimals: 18,
      },
      { flatMicros: 20_000n, destinationMicros: 1n, originMicros: 0n, totalMicros: 20_001n },
    ],
  ])('%s', (_name, params, expected) => {
    expect(executionFeeUsd(params)).toEqual(expected);
  });

  it.each<[string, ExecutionFeeUsdParameters]>([
    [
      'negative gas units',
      { destinationGasUnits: -1n, destinationGasPriceWei: 1n, destinationNativeUsdMicros: 1n, nativeDecimals: 18 },
    ],
    [
      'negative price',
      { destinationGasUnits: 1n, destinationGasPriceWei: 1n, destinationNativeUsdMicros: -1n, nativeDecimals: 18 },
    ],
    [
      'negative L1 fee',
      {
        destinationGasUnits: 1n,
        destinationGasPriceWei: 1n,
        destinationL1FeeWei: -1n,
        destinationNativeUsdMicros: 1n,
        nativeDecimals: 18,
      },
    ],
    [
      'fractional decimals',
      { destinationGasUnits: 1n, destinationGasPriceWei: 1n, destinationNativeUsdMicros: 1n, nativeDecimals: 1.5 },
    ],
  ])('rejects %s with INVALID_INPUT', (_name, params) => {
    expect(() => executionFeeUsd(params)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }));
  });
});
