import { GatewayError } from '../errors.js';

const BYTES32 = /^0x[0-9a-fA-F]{64}$/;

/**
 * A request id as given by a client, checked: 32 bytes as `0x` + 64 hex digits (any letter case). REST
 * validates the pattern before the core runs; GraphQL `ID`s arrive unchecked.
 *
 * @throws `INVALID_INPUT` (400), with the field name in `errorData`.
 */
export function parseRequestId(value: string, field = 'requestId'): `0x${string}` {
  if (!BYTES32.test(value)) {
    const shown = value.length > 80 ? `${value.slice(0, 80)}...` : value;
    throw new GatewayError(
      'INVALID_INPUT',
      `${field} must be a request id: 0x followed by 64 hex digits, got '${shown}'`,
      { data: field },
    );
  }
  return value.toLowerCase() as `0x${string}`;
}

/** The error for a well-formed id the gateway has no request for. */
export const requestNotFound = (requestId: string): GatewayError =>
  new GatewayError(
    'NOT_FOUND',
    `Request ${requestId} not found: the gateway has no request with this id (request ids come from steps[].requestId of a quote made on this gateway)`,
  );
