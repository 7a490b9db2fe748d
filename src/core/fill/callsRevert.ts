import { GatewayError } from '../errors.js';
import type { DestinationCall } from './fillTransaction.js';

/**
 * A simulated fill that reverts because of the user's calls: the chain names the transaction's target (the
 * solver's fill contract), which tells the user nothing. Names the calls' targets instead (the multicaller
 * passes the failing call's revert data up unchanged, so the reason is the call's own), keeping the decoded
 * reason in `errorData` / the status `details.revert`. Used by the quote's simulation and by the solver's
 * simulation before it sends the fill. Any other error, or a fill without calls, is returned unchanged.
 */
export function callsRevert(
  calls: ReadonlyArray<Pick<DestinationCall, 'to'>>,
  destinationName: string,
  error: unknown,
): unknown {
  if (!(error instanceof GatewayError) || error.code !== 'DESTINATION_TX_FAILED' || calls.length === 0) return error;
  const reason = typeof error.data === 'string' ? error.data : error.message;
  const targets = [...new Set(calls.map((call) => call.to))];
  const which = targets.length === 1 ? `The call to ${targets[0]}` : `One of the calls (to ${targets.join(', ')})`;
  return new GatewayError('DESTINATION_TX_FAILED', `${which} would revert on ${destinationName}: ${reason}`, {
    data: reason,
    cause: error,
  });
}
