/** Fees as a request shows them, computed by the fees and rendered by the requests. */
import type { Amount, QuoteCurrency } from './amount.js';

/** One fee component: its size (positive) in smallest units of the fee currency, and its signed USD value. */
export interface FeeBucket {
  /** Decimal USD, from the USD value computed when the fee was priced: negative for a cost, positive for the
   *  sponsored part (the reference's convention). */
  usd: string;
  amount: bigint;
  amountFormatted: string;
}

export interface FeeBuckets {
  execution: FeeBucket;
  swap: FeeBucket;
  platform: FeeBucket;
  app: FeeBucket;
  sponsored: FeeBucket;
}

export interface AppFeeEntry {
  recipient: string;
  bps: number;
  amount: bigint;
  amountFormatted: string;
  amountUsd: string;
}

export interface RequestAppFees {
  quoted: AppFeeEntry[];
  /** App fees actually collected; empty until the fill is computed. */
  actual: AppFeeEntry[];
  currency: QuoteCurrency;
}

/** The platform fee applied to a request (owner-only data). */
export interface PlatformFeeInfo {
  /** Route class that decided the rate (`bridge`, `stablecoin`, `major`, `minor`). */
  bucket: string;
  totalFeeBps: number;
  totalPlatformFee: Amount;
  revenueShare: { tier: string | null; shareBps: number; amount: bigint };
}

/** The deprecated fee object of the earlier history, in smallest units of the fee currency. */
export interface LegacyRequestFees {
  relayer: bigint;
  relayerGas: bigint;
  relayerService: bigint;
  app: bigint;
  subsidized: bigint;
  /** The reference's keys: destination gas, the flat fee, the bps-priced fees (swap and platform), and a
   *  gateway fee (always zero: no canonical bridge is involved). */
  gas: bigint;
  fixed: bigint;
  price: bigint;
  gateway: bigint;
}

/** One app fee in the deprecated form of `GET /requests/v2` (`appFees`, `paidAppFees`). */
export interface LegacyAppFee {
  recipient: string;
  bps: number;
  amount: bigint;
  amountUsd: string;
}

/** The deprecated fee object of `GET /requests/v2` and its members in decimal USD (null when unreadable). */
export interface LegacyRequestFeesView {
  fees: LegacyRequestFees;
  feesUsd: Record<keyof LegacyRequestFees, string> | null;
}
