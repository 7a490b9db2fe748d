import { GatewayError } from '../errors.js';
import type { RouteClass } from '../vocabulary/route.js';

/** USD 1 in micro-USD. */
const USD = 1_000_000n;
/** Tier 1 starts strictly above this trailing-30-day volume (micro-USD). */
export const TIER1_THRESHOLD_MICROS = 10_000_000n * USD;
/** Tier 2 starts strictly above this trailing-30-day volume (micro-USD). */
export const TIER2_THRESHOLD_MICROS = 100_000_000n * USD;

export type RevenueShareTier = 'tier1' | 'tier2';

const SHARE_BPS: Readonly<Record<RevenueShareTier, Readonly<Record<RouteClass, number>>>> = {
  tier1: { bridge: 0, stablecoin: 3400, major: 2500, minor: 3333 },
  tier2: { bridge: 0, stablecoin: 6700, major: 5000, minor: 6667 },
};

export interface RevenueShareParameters {
  routeClass: RouteClass;
  trailing30dVolumeUsdMicros: bigint;
  /** API key in the quote, completed business verification and an EVM payout address, all present. */
  qualified: boolean;
  /** The platform fee charged, smallest units. */
  platformFee: bigint;
}

export interface RevenueShareReturnType {
  tier: RevenueShareTier | null;
  shareBps: number;
  amount: bigint;
}

/**
 * Integrator's share of the platform fee (spec "Fee rules" §4).
 *
 * Boundaries (trailing 30-day volume): the spec requires "more than USD 10,000,000", so exactly 10M earns
 * nothing; tier1 covers (10M, 100M] and tier2 starts strictly above 100M. The spec's table stops at 1B; volume
 * above 1B stays in tier2 (no higher tier is published). Shares are bps (33.33% = 3333, 66.67% = 6667);
 * the amount is `platformFee * shareBps / 10000`, rounded DOWN so the payout never exceeds the stated share.
 * Throws `INVALID_INPUT` on a negative fee or volume.
 */
export function revenueShare(params: RevenueShareParameters): RevenueShareReturnType {
  const { routeClass, trailing30dVolumeUsdMicros: volume, qualified, platformFee } = params;
  if (platformFee < 0n)
    throw new GatewayError('INVALID_INPUT', `Platform fee must not be negative, got ${platformFee}`);
  if (volume < 0n) throw new GatewayError('INVALID_INPUT', `Volume must not be negative, got ${volume}`);
  const tier: RevenueShareTier | null =
    !qualified || volume <= TIER1_THRESHOLD_MICROS ? null : volume <= TIER2_THRESHOLD_MICROS ? 'tier1' : 'tier2';
  if (tier === null) return { tier, shareBps: 0, amount: 0n };
  const shareBps = SHARE_BPS[tier][routeClass];
  return { tier, shareBps, amount: (platformFee * BigInt(shareBps)) / 10_000n };
}
