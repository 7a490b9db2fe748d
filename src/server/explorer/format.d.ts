// Types of format.js, which the browser loads as it is (no build step) and the unit tests import.

export declare const SIGNIFICANT_DIGITS: number;
export declare const FEE_NAMES: Record<'execution' | 'swap' | 'platform' | 'app' | 'sponsored', string>;
export declare function exactAmount(amount: string | bigint, decimals: number): string;
export declare function formatAmount(amount: string | bigint, decimals: number, digits?: number): string;
export declare function formatUsd(usd: string): string;
export declare function feeCost(
  name: string,
  bucket: { amount: string | bigint; usd: string },
  decimals: number,
): { name: string; amount: string; exact: string; usd: string };
