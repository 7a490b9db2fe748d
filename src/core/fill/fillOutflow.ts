/**
 * What a request's fill takes from the solver's wallet on the destination chain, read from the request as quoted:
 * the fill's checks and its ledger facts read it when the fill is made, and the quote stores it with the request
 * (`requests.committed_outflow`) so the inventory counts it while the fill is in flight. One rule for all of them,
 * so what the inventory holds back is what the fill then spends.
 */
import { zeroAddress, type Address } from 'viem';
import { dexLegsOf } from '../dex/legRecord.js';
import type { RequestRecord } from '../../records/request.js';

/** The parts of a request its fill's outflow follows from: the output, and the quote (its DEX leg, its top-up). */
export type OutflowSource = Pick<RequestRecord, 'destinationCurrency' | 'amountOut' | 'quote'>;

/** An amount of one currency of the destination chain (the zero address is native), smallest units. */
export interface OutflowLine {
  currency: Address;
  amount: bigint;
}

/** The native gas a request's fill sends its recipient with the output (`topupGas`); 0 without a top-up. */
export const gasTopupOf = (request: Pick<RequestRecord, 'quote'>): bigint =>
  BigInt((request.quote.gasTopup as { amount?: string } | undefined)?.amount ?? '0');

/**
 * What a request's fill takes from the solver on the destination for its output: the output itself, or, when the
 * output is bought through a DEX (`quote.dex.destination`), the entry currency and amount the swap spends (native
 * when the leg takes native in).
 */
export function fillOutflow(request: OutflowSource): OutflowLine {
  const leg = dexLegsOf(request.quote).destination;
  if (leg === undefined) return { currency: request.destinationCurrency as Address, amount: request.amountOut };
  return { currency: leg.nativeIn ? zeroAddress : leg.tokenIn, amount: BigInt(leg.amountIn) };
}

/**
 * Everything a request's fill takes from the solver on the destination: its `fillOutflow`, and a gas top-up in
 * native beside it. One line per currency (lower-case addresses): a native-in leg and a top-up make one native line.
 */
export function committedOutflow(request: OutflowSource): OutflowLine[] {
  const output = fillOutflow(request);
  const lines: OutflowLine[] = [{ currency: output.currency.toLowerCase() as Address, amount: output.amount }];
  const topup = gasTopupOf(request);
  if (topup > 0n) {
    const native = lines.find((line) => line.currency === zeroAddress);
    if (native === undefined) lines.push({ currency: zeroAddress, amount: topup });
    else native.amount += topup;
  }
  return lines;
}
