import type { Address, Hex } from 'viem';
import type { RequestRecord } from '../../records/request.js';
import type { DestinationCall } from '../fill/fillTransaction.js';

/** The user's calls a request's fill runs (none for a plain payment). */
export const callsOf = (request: RequestRecord): DestinationCall[] =>
  ((request.quote.calls ?? []) as Array<{ to: Address; data: Hex; value: string }>).map((call): DestinationCall => ({
    to: call.to,
    data: call.data,
    value: BigInt(call.value),
  }));
