import { formatUnits } from 'viem';
import type { UsdPrice } from './market.js';

/** A USD price of one whole unit as an exact decimal string (`answer / 10^decimals`): `"3000"`, `"0.5"`. */
export const formatUsdPrice = (price: UsdPrice): string => formatUnits(price.answer, price.decimals);

/** A micro-USD amount as an exact decimal string of USD (`1500000n` -> `"1.5"`). */
export const formatUsdMicros = (micros: bigint): string => formatUnits(micros, 6);
