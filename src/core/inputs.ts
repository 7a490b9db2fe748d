import { getAddress, isAddress, type Address } from 'viem';
import { GatewayError } from './errors.js';

/**
 * The checks every number and address a client sends passes through, in the core, so REST, GraphQL and `/ws`
 * refuse the same inputs with the same code and message. The transports' own schemas (OpenAPI, GraphQL scalars)
 * may refuse a malformed value earlier, with the same code; they are never the only guard, because a GraphQL
 * `BigInt` or `Int` is signed and unbounded where the OpenAPI schema says `minimum: 0`.
 */

/** The largest uint256: every amount ends up in a uint256 on chain. */
export const UINT256_MAX = (1n << 256n) - 1n;

const WHOLE = /^-?[0-9]+$/;

/** A value as shown in a message: long strings cut. */
function shown(value: unknown): string {
  const text = typeof value === 'string' ? value : String(value);
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
}

function describeRange(min: bigint, max: bigint): string {
  return `from ${min} to ${max === UINT256_MAX ? '2^256-1' : max}`;
}

/**
 * A whole number a client sent (an amount, a gas overhead, a cap), checked: an integer from `min` (default 0) to
 * `max` (default 2^256-1). Accepts a bigint, a safe integer or a decimal string.
 *
 * @throws `INVALID_INPUT` (400) naming the field (also in `errorData`).
 */
export function parseUint(
  value: bigint | number | string,
  field: string,
  bounds: { min?: bigint; max?: bigint } = {},
): bigint {
  const min = bounds.min ?? 0n;
  const max = bounds.max ?? UINT256_MAX;
  let parsed: bigint | undefined;
  if (typeof value === 'bigint') parsed = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) parsed = BigInt(value);
  else if (typeof value === 'string' && WHOLE.test(value) && value.length <= 80) parsed = BigInt(value);
  if (parsed === undefined || parsed < min || parsed > max) {
    throw new GatewayError(
      'INVALID_INPUT',
      `${field} must be a whole number ${describeRange(min, max)}, got '${shown(value)}'`,
      { data: field },
    );
  }
  return parsed;
}

/**
 * A small whole number a client sent (seconds, basis points, a page size, a nonce), checked: a safe integer from
 * `min` to `max`.
 *
 * @throws `INVALID_INPUT` (400) naming the field.
 */
export function parseInteger(value: number, field: string, min: number, max: number): number {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new GatewayError(
      'INVALID_INPUT',
      `${field} must be an integer from ${min} to ${max}, got '${shown(value)}'`,
      {
        data: field,
      },
    );
  }
  return value;
}

/**
 * A chain id a client sent, checked for its shape only (a positive safe integer); whether the gateway serves the
 * chain is `requireChain`'s answer (`UNSUPPORTED_CHAIN`).
 *
 * @throws `INVALID_INPUT` (400) naming the field.
 */
export function parseChainId(value: number, field = 'chainId'): number {
  return parseInteger(value, field, 1, Number.MAX_SAFE_INTEGER);
}

/**
 * An EVM address a client sent (any letter case: a mixed-case address whose checksum is wrong is accepted as
 * lower case would be, as the reference does), in its checksummed form.
 *
 * @throws `INVALID_ADDRESS` (400) naming the field.
 */
export function parseAddress(value: string, field: string): Address {
  if (typeof value !== 'string' || !isAddress(value, { strict: false })) {
    throw new GatewayError(
      'INVALID_ADDRESS',
      `${field} must be an EVM address (0x and 40 hex digits), got '${shown(value)}'`,
      {
        data: field,
      },
    );
  }
  return getAddress(value);
}
