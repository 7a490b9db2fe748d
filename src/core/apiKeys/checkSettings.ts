import type { JsonObject } from '../../records/json.js';
import { GatewayError } from '../errors.js';
import type { ApiKeyLimits } from './apiKey.js';

/** A key's label: trimmed, 1..100 characters. Throws `INVALID_INPUT`. */
export function checkName(name: string): string {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 100)
    throw new GatewayError('INVALID_INPUT', 'name must be 1 to 100 characters');
  return trimmed;
}

/** Limits as stored: `requestsPerMinute` a positive integer, `fastFillUsd` a positive decimal string. Throws `INVALID_INPUT`. */
export function checkLimits(limits: ApiKeyLimits): JsonObject {
  const { requestsPerMinute, fastFillUsd } = limits;
  if (requestsPerMinute !== undefined && (!Number.isSafeInteger(requestsPerMinute) || requestsPerMinute < 1)) {
    throw new GatewayError('INVALID_INPUT', 'limits.requestsPerMinute must be a positive integer');
  }
  if (fastFillUsd !== undefined && !/^[0-9]+(\.[0-9]{1,6})?$/.test(fastFillUsd)) {
    throw new GatewayError('INVALID_INPUT', 'limits.fastFillUsd must be a decimal USD amount with at most 6 decimals');
  }
  return { ...limits };
}

/** An EVM payout address, stored lower case; null clears it. Throws `INVALID_ADDRESS`. */
export function normalizePayoutAddress(address: string | null | undefined): string | null {
  if (address == null) return null;
  if (!/^0x[0-9a-fA-F]{40}$/.test(address))
    throw new GatewayError('INVALID_ADDRESS', 'payoutAddress must be an EVM address');
  return address.toLowerCase();
}

/** A sponsorship allowance in micro-USD: a decimal integer string (`"5000000"` = USD 5). Throws `INVALID_INPUT`. */
export function parseSponsorshipAllowance(value: string): bigint {
  if (!/^[0-9]{1,30}$/.test(value)) {
    throw new GatewayError(
      'INVALID_INPUT',
      'sponsorshipAllowanceUsdMicros must be a non-negative integer of micro-USD ("1000000" = USD 1)',
      { data: 'sponsorshipAllowanceUsdMicros' },
    );
  }
  return BigInt(value);
}
