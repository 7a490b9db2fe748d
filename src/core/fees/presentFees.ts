import { formatUnits } from 'viem';
import type { Amount, ExpandedPriceImpact, QuoteCurrency } from '../vocabulary/amount.js';
import type { StoredFees } from '../../store/storedFees.js';
import type {
  AppFeeEntry,
  FeeBuckets,
  LegacyAppFee,
  LegacyRequestFeesView,
  PlatformFeeInfo,
  RequestAppFees,
} from '../vocabulary/fees.js';
import { formatUsdMicros } from '../usd.js';

/*
 * Fee presentation: how fees and the amounts around them are shown, by the quote's presenter (from its pricing)
 * and the request's (from the breakdown stored with the request), so that the two agree.
 */

/** The USD values (micro-USD) of the fee components: a quote's `pricing.usd`, a stored breakdown's `usdMicros`. */
export interface FeeUsdMicros {
  execution: bigint;
  swap: bigint;
  platform: bigint;
  app: bigint;
  sponsored: bigint;
}

/** An Amount object: exact smallest units, whole units, and its USD value (micro-USD, computed when priced). */
export function amountOf(
  currency: QuoteCurrency,
  amount: bigint,
  usdMicros: bigint,
  minimumAmount: bigint = amount,
): Amount {
  return {
    currency,
    amount,
    amountFormatted: formatUnits(amount, currency.decimals),
    amountUsd: formatUsdMicros(usdMicros),
    minimumAmount,
  };
}

/**
 * `expandedPriceImpact` of a quote's `details` and of a request in `GET /requests/v2`: costs negative, the
 * sponsored part positive; `relay` repeats `service` (the platform fee) under the reference's name.
 */
export function expandedPriceImpact(usd: FeeUsdMicros): ExpandedPriceImpact {
  return {
    swap: { usd: formatUsdMicros(-usd.swap) },
    execution: { usd: formatUsdMicros(-usd.execution) },
    service: { usd: formatUsdMicros(-usd.platform) },
    relay: { usd: formatUsdMicros(-usd.platform) },
    app: { usd: formatUsdMicros(-usd.app) },
    sponsored: { usd: formatUsdMicros(usd.sponsored) },
  };
}

/**
 * The deprecated `fees` object's split of what the solver earns, in the fee currency: `relayerGas` is the gas
 * share of the execution fee (its gas in micro-USD over its whole in micro-USD), `relayerService` the rest of the
 * execution fee (the flat fee) with the swap and platform fees; `relayer` is their sum.
 */
export function relayerSplit(
  fees: { execution: bigint; swap: bigint; platform: bigint },
  gasUsdMicros: bigint,
  executionUsdMicros: bigint,
): { relayerGas: bigint; relayerService: bigint } {
  const relayerGas = executionUsdMicros === 0n ? 0n : (fees.execution * gasUsdMicros) / executionUsdMicros;
  return { relayerGas, relayerService: fees.execution - relayerGas + fees.swap + fees.platform };
}

/**
 * A request's fee buckets (`fees.quoted` / `fees.actual` of `GET /requests/v3`). `usd` is signed as the
 * reference signs it (and as `expandedPriceImpact` is): costs negative, the sponsored part positive, so a client's
 * sum of the components is the change in the user's value. `amount` stays the positive size of the component.
 */
export function feeBuckets(fees: StoredFees, currency: QuoteCurrency): FeeBuckets {
  const bucket = (amount: bigint, usdMicros: bigint) => ({
    usd: formatUsdMicros(usdMicros),
    amount,
    amountFormatted: formatUnits(amount, currency.decimals),
  });
  const usd = fees.usdMicros;
  return {
    execution: bucket(fees.execution, -usd.execution),
    swap: bucket(fees.swap, -usd.swap),
    platform: bucket(fees.platform, -usd.platform),
    app: bucket(fees.app, -usd.app),
    sponsored: bucket(fees.sponsored, usd.sponsored),
  };
}

/** USD (micro) of a part of the app fees: its share of the app fees' USD value. */
const appFeeUsdShare = (fees: StoredFees, amount: bigint): bigint =>
  fees.app === 0n ? 0n : (fees.usdMicros.app * amount) / fees.app;

/** A request's app fees (`appFees` of `GET /requests/v3`): as quoted, and as collected (empty before the fill). */
export function requestAppFees(quoted: StoredFees, actual: StoredFees | null, currency: QuoteCurrency): RequestAppFees {
  const entries = (fees: StoredFees): AppFeeEntry[] =>
    fees.appFees.map((fee) => ({
      recipient: fee.recipient,
      bps: fee.feeBps,
      amount: fee.amount,
      amountFormatted: formatUnits(fee.amount, currency.decimals),
      amountUsd: formatUsdMicros(appFeeUsdShare(fees, fee.amount)),
    }));
  return { quoted: entries(quoted), actual: actual === null ? [] : entries(actual), currency };
}

/** A request's app fees in the deprecated form (`appFees` / `paidAppFees` of `GET /requests/v2`); none without. */
export function legacyAppFees(fees: StoredFees | null): LegacyAppFee[] {
  if (fees === null) return [];
  return fees.appFees.map((fee) => ({
    recipient: fee.recipient,
    bps: fee.feeBps,
    amount: fee.amount,
    amountUsd: formatUsdMicros(appFeeUsdShare(fees, fee.amount)),
  }));
}

/**
 * A request's deprecated fee object (`fees`, and `feesUsd` its members in USD, of `GET /requests/v2`), split as
 * the quote's `fees` is (`relayerSplit`). The reference's own keys beside it: `gas` the destination gas, `fixed`
 * the rest of the execution fee (the flat fee), `price` the fees priced in bps of the input (swap and platform),
 * `gateway` nothing here. Without a stored breakdown: zeros (the contract requires the object), no USD.
 */
export function legacyRequestFees(fees: StoredFees | null): LegacyRequestFeesView {
  if (fees === null)
    return {
      fees: {
        relayer: 0n,
        relayerGas: 0n,
        relayerService: 0n,
        app: 0n,
        subsidized: 0n,
        gas: 0n,
        fixed: 0n,
        price: 0n,
        gateway: 0n,
      },
      feesUsd: null,
    };
  const usd = fees.usdMicros;
  const { relayerGas, relayerService } = relayerSplit(fees, fees.destinationGasMicros, usd.execution);
  const relayerServiceUsd = usd.execution - fees.destinationGasMicros + usd.swap + usd.platform;
  return {
    fees: {
      relayer: relayerGas + relayerService,
      relayerGas,
      relayerService,
      app: fees.app,
      subsidized: fees.sponsored,
      gas: relayerGas,
      fixed: fees.execution - relayerGas,
      price: fees.swap + fees.platform,
      gateway: 0n,
    },
    feesUsd: {
      relayer: formatUsdMicros(usd.execution + usd.swap + usd.platform),
      relayerGas: formatUsdMicros(fees.destinationGasMicros),
      relayerService: formatUsdMicros(relayerServiceUsd),
      app: formatUsdMicros(usd.app),
      subsidized: formatUsdMicros(usd.sponsored),
      gas: formatUsdMicros(fees.destinationGasMicros),
      fixed: formatUsdMicros(usd.execution - fees.destinationGasMicros),
      price: formatUsdMicros(usd.swap + usd.platform),
      gateway: '0',
    },
  };
}

/** The platform fee applied to a request, as its owner sees it. */
export function platformFeeInfo(fees: StoredFees, currency: QuoteCurrency): PlatformFeeInfo {
  return {
    bucket: fees.routeClass,
    totalFeeBps: fees.platformBps,
    totalPlatformFee: amountOf(currency, fees.platform, fees.usdMicros.platform),
    revenueShare: fees.revenueShare,
  };
}
