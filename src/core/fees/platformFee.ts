import { GatewayError } from '../errors.js';
import type { RouteClass } from '../vocabulary/route.js';

const BPS_DENOMINATOR = 10_000n;

const PLATFORM_FEE_BPS: Readonly<Record<RouteClass, number>> = {
  bridge: 0,
  stablecoin: 1,
  major: 6,
  minor: 15,
};

/** Platform fee of a route class in basis points (spec "Fee rules" §3): 0 / 1 / 6 / 15. */
export function platformFeeBps(routeClass: RouteClass): number {
  return PLATFORM_FEE_BPS[routeClass];
}

/**
 * Platform fee on `amount` (smallest units of the input currency): `amount * bps / 10000`, rounded UP so the
 * platform never under-charges (any non-zero fraction of a unit costs one whole unit; a 0-bps class is always 0).
 * Throws `INVALID_INPUT` for a negative amount.
 */
export function platformFee(amount: bigint, routeClass: RouteClass): bigint {
  if (amount < 0n) throw new GatewayError('INVALID_INPUT', `Amount must not be negative, got ${amount}`);
  return ceilDiv(amount * BigInt(platformFeeBps(routeClass)), BPS_DENOMINATOR);
}

/** Ceiling division of non-negative bigints. */
export const ceilDiv = (numerator: bigint, denominator: bigint): bigint => (numerator + denominator - 1n) / denominator;
