import type { Address, Hex } from 'viem';
import type { RequestRecord } from '../../records/request.js';
import type { DestinationCall } from '../fill/fillTransaction.js';

/** The native gas a request's fill sends its recipient with the output (`topupGas`); 0 without a top-up. */
export const gasTopupOf = (request: RequestRecord): bigint =>
  BigInt((request.quote.gasTopup as { amount?: string } | undefined)?.amount ?? '0');

/** The user's calls a request's fill runs (none for a plain payment). */
export const callsOf = (request: RequestRecord): DestinationCall[] =>
  ((request.quote.calls ?? []) as Array<{ to: Address; data: Hex; value: string }>).map((call): DestinationCall => ({
    to: call.to,
    data: call.data,
    value: BigInt(call.value),
  }));
