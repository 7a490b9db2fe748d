/** Amounts as the wire shows them: a currency and its smallest units, shared by quotes, fees and requests. */
import { zeroAddress, type Address } from 'viem';
import type { CurrencyConfig } from '../chains/types.js';

/** A currency as the wire names it: chain, address and catalogue metadata. */
export interface QuoteCurrency {
  chainId: number;
  address: Address;
  symbol: string;
  name: string;
  decimals: number;
  metadata: { logoURI: string; verified: boolean; isNative: boolean };
}

/** The spec's Amount object; `amount` and `minimumAmount` in smallest units. */
export interface Amount {
  currency: QuoteCurrency;
  amount: bigint;
  amountFormatted: string;
  amountUsd: string;
  minimumAmount: bigint;
}

/** What each fee costs the user in USD, as quotes and requests show it. */
export interface ExpandedPriceImpact {
  swap: { usd: string };
  execution: { usd: string };
  service: { usd: string };
  /** Repeats `service` (the platform fee) under the reference's name, which its clients read. */
  relay: { usd: string };
  app: { usd: string };
  sponsored: { usd: string };
}

/** A configured currency as the wire names it. */
export function quoteCurrency(chainId: number, currency: CurrencyConfig): QuoteCurrency {
  return {
    chainId,
    address: currency.address,
    symbol: currency.symbol,
    name: currency.name,
    decimals: currency.decimals,
    metadata: { logoURI: currency.logoURI, verified: currency.verified, isNative: currency.address === zeroAddress },
  };
}
