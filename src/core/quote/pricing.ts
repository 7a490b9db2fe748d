import type { Address } from 'viem';
import type { ChainConfig, CurrencyConfig, QuoteSettings } from '../chains/types.js';
import type { DexRoute } from '../dex/route.js';
import type { DexLegRecord } from '../dex/legRecord.js';
import { GatewayError } from '../errors.js';
import { appFees as computeAppFees } from '../fees/appFees.js';
import { executionFeeUsd } from '../fees/executionFee.js';
import { ceilDiv, platformFee, platformFeeBps } from '../fees/platformFee.js';
import { revenueShare } from '../fees/revenueShare.js';
import { splitSponsorship, type FeeComponent, type SplitSponsorshipReturnType } from '../fees/sponsorship.js';
import { convert, fromUsdMicros, toUsdMicros, type PricedCurrency, type UsdPrice } from '../market.js';
import type { ResolvedRoute, RouteClass } from '../vocabulary/route.js';
import type { FeeBreakdown, QuoteParameters } from './types.js';
import type { Caller } from '../vocabulary/caller.js';
import { pow10 } from '../powersOfTen.js';

/**
 * Gas the fill's extra call that sends the top-up costs: a value transfer to an account that may not exist yet
 * (9,000 for the value, 25,000 for a new account, a cold access) with a margin.
 */
export const GAS_TOPUP_FILL_GAS = 40_000n;

/** What pricing reads from the market, fetched once per quote. */
export interface MarketSnapshot {
  priceIn: UsdPrice;
  priceOut: UsdPrice;
  destinationNativePrice: UsdPrice;
  destinationGasPrice: bigint;
  /** Gas units of the destination fill. */
  fillGasUnits: bigint;
  /** The fill's L1 data fee (wei) on an OP-stack destination, paid besides its gas; 0 elsewhere. */
  fillL1FeeWei: bigint;
  /**
   * Gasless flows (permit deposits): the origin transaction the gateway sends for the user, priced into the
   * execution fee (spec "Fee rules" §1). Absent when the user sends the deposit and pays its gas.
   */
  originGas?: {
    units: bigint;
    priceWei: bigint;
    nativePrice: UsdPrice;
    nativeDecimals: number;
    /** The origin transaction's L1 data fee (wei) on an OP-stack origin, paid besides its gas; 0 when absent. */
    l1FeeWei?: bigint;
  };
  /**
   * A swap sold from the solver's inventory where the destination's pools trade the pair: what the solver could buy
   * the output back for there (`src/core/quote/inventoryQuote.ts`). The output is then never more than the pools
   * would pay; absent, swaps convert at the oracle prices alone.
   */
  inventoryCap?: InventoryCap;
}

/**
 * What the destination's pools pay for the input, in the route's own currencies: `outFor(net)` is the output (smallest
 * units of currencyOut) for `net` smallest units of currencyIn, `inFor(out)` the least currencyIn that buys `out`;
 * `undefined` when the pools cannot carry the amount.
 */
export interface InventoryCap {
  outFor(netIn: bigint): bigint | undefined;
  inFor(amountOut: bigint): bigint | undefined;
}

export interface PricingParameters {
  route: ResolvedRoute;
  params: Pick<
    QuoteParameters,
    'amount' | 'tradeType' | 'appFees' | 'subsidizeFees' | 'sponsoredFeeComponents' | 'maxSubsidizationAmount'
  >;
  market: MarketSnapshot;
  settings: QuoteSettings;
  caller: Caller;
  /** Trailing 30-day volume of the caller's key in micro-USD (revenue share); 0 without a key. */
  trailingVolumeUsdMicros: bigint;
  /**
   * The class whose swap fee applies, when it is not the route's: a destination DEX leg charges the gateway's swap
   * fee only on the conversion into the currency the pools are entered with (`dexDestination.ts`).
   */
  swapFeeClass?: RouteClass;
}

export interface Pricing {
  /**
   * The native gas the fill delivers to the recipient with the output (`topupGas`), in the destination's native
   * smallest units, and the micro-USD charged for it in the execution fee; null without a top-up.
   */
  gasTopup: { amount: bigint; usdMicros: bigint } | null;
  amountIn: bigint;
  amountOut: bigint;
  /**
   * Set when the inventory cap's pools could not carry the amount (`MarketSnapshot.inventoryCap`): the output is
   * then the oracle's, which the inventory must not sell (`checkInventoryLimits` refuses it).
   */
  inventoryCapShort?: true;
  /** Floor of the output after slippage (equal to `amountOut` for EXACT_OUTPUT). */
  minimumAmountOut: bigint;
  fees: FeeBreakdown;
  sponsorship: SplitSponsorshipReturnType;
  /**
   * USD values in micro-USD. `inventoryCap`: what the inventory cap (`MarketSnapshot.inventoryCap`) took off the
   * oracle's output, a price impact the quote shows in `swapImpact`; 0 when the oracle's price was the lower.
   */
  usd: {
    in: bigint;
    out: bigint;
    execution: bigint;
    swap: bigint;
    platform: bigint;
    app: bigint;
    sponsored: bigint;
    inventoryCap: bigint;
  };
  /** The destination DEX leg the output is bought through; absent when the solver pays it from inventory. */
  dex?: DestinationDexLeg;
}

/** A destination DEX leg: the inventory currency the fill spends, and the route it buys the output through. */
export interface DestinationDexLeg {
  /** The currency that leaves the solver on the destination (native when the route is entered with value). */
  start: CurrencyConfig;
  startPrice: UsdPrice;
  route: DexRoute;
  record: DexLegRecord;
  /** Micro-USD the swap costs the user: the output's value less the value entering the pools, less the swap fee. */
  swapImpactUsdMicros: bigint;
}

/** Fee components in smallest units of the input currency, for an input of `amountIn`. */
interface FeesAt {
  execution: bigint;
  swap: bigint;
  platform: bigint;
  app: ReturnType<typeof computeAppFees>;
  sponsorship: SplitSponsorshipReturnType;
}

/**
 * Prices a route exactly, in `bigint` smallest units (spec "Fee rules"): every fee is charged in the input
 * currency on top of the converted amount.
 *
 * - EXACT_INPUT: `amount` is paid; output = convert(input - fees the user pays), rounded down.
 * - EXPECTED_OUTPUT / EXACT_OUTPUT: `amount` is delivered; the input is the smallest amount whose
 *   remainder after fees converts to at least `amount` (found by fixed-point iteration, then checked).
 *
 * Same-asset routes (bridge, send, wrap, unwrap) convert 1:1 scaled by decimals; swaps convert at the two
 * oracle prices. The execution fee (USD 0.02 + fill gas at the destination's gas price and, on an OP-stack
 * destination, the fill's L1 data fee) is converted from USD
 * into the input currency rounded up; percentage fees are rounded up (platform, swap) or down (app fees).
 */
export function priceRoute(parameters: PricingParameters): Pricing {
  const { route, params, market, settings, caller } = parameters;
  const from: PricedCurrency = { decimals: route.currencyIn.decimals, price: market.priceIn };
  const to: PricedCurrency = { decimals: route.currencyOut.decimals, price: market.priceOut };
  const swapBps = settings.swapFeeBps[parameters.swapFeeClass ?? route.routeClass];
  const appEntries = (params.appFees ?? []).map((entry) => ({
    recipient: entry.recipient as Address,
    feeBps: parseFeeBps(entry.fee),
  }));

  const topupUsdMicros = route.gasTopupUsdMicros ?? 0n;
  const gasTopup =
    topupUsdMicros === 0n
      ? null
      : {
          // What the requested USD buys of the native currency, rounded down: never more than is charged.
          amount: fromUsdMicros(
            topupUsdMicros,
            route.destination.nativeCurrency.decimals,
            market.destinationNativePrice,
            'down',
          ),
          usdMicros: topupUsdMicros,
        };
  const fillGasUnits = market.fillGasUnits + (gasTopup === null ? 0n : GAS_TOPUP_FILL_GAS);
  const execution = fillExecutionFee(
    route.destination,
    { units: fillGasUnits, priceWei: market.destinationGasPrice, l1FeeWei: market.fillL1FeeWei },
    market.destinationNativePrice,
    market.originGas,
  );
  // The top-up's value is charged with the fill's gas, in the execution fee, as the reference shows it.
  const executionMicros = execution.totalMicros + topupUsdMicros;
  const executionIn = fromUsdMicros(executionMicros, from.decimals, from.price, 'up');
  const capIn =
    params.maxSubsidizationAmount === undefined
      ? undefined
      : fromUsdMicros(params.maxSubsidizationAmount, from.decimals, from.price, 'down');

  const feesAt = (amountIn: bigint): FeesAt => {
    const swap = ceilDiv(amountIn * BigInt(swapBps), 10_000n);
    const platform = platformFee(amountIn, route.routeClass);
    const app = computeAppFees(amountIn, appEntries);
    const sponsorship = splitSponsorship({
      components: { execution: executionIn, swap, platform, app: app.total },
      subsidizeFees: params.subsidizeFees === true,
      ...(params.sponsoredFeeComponents === undefined
        ? {}
        : { sponsoredComponents: params.sponsoredFeeComponents as FeeComponent[] }),
      sponsorshipEnabled: caller.apiKey?.sponsorshipEnabled === true,
      ...(capIn === undefined ? {} : { maxSubsidization: capIn }),
    });
    return { execution: executionIn, swap, platform, app, sponsorship };
  };
  const oracleOutput = (net: bigint): bigint =>
    route.sameAsset ? rescale(net, from.decimals, to.decimals, 'down') : convert(net, from, to, 'down');
  const cap = route.sameAsset ? undefined : market.inventoryCap;
  // The inventory never sells for less than it could buy the output back for in the pools.
  /** Whether the pools could not carry the net input: the output is the oracle's, and the caller refuses it. */
  let poolsShort = false;
  const toOutput = (net: bigint): bigint => {
    const atOracle = oracleOutput(net);
    if (cap === undefined) return atOracle;
    const inPools = cap.outFor(net);
    if (inPools === undefined) {
      poolsShort = true;
      return atOracle;
    }
    return inPools < atOracle ? inPools : atOracle;
  };

  /** Micro-USD of output the cap takes off the oracle's conversion of `net`. */
  const capImpact = (net: bigint): bigint => toUsdMicros(oracleOutput(net) - toOutput(net), to.decimals, to.price);

  let amountIn: bigint;
  let amountOut: bigint;
  let fees: FeesAt;
  if (params.tradeType === 'EXACT_INPUT') {
    amountIn = params.amount;
    fees = feesAt(amountIn);
    const net = amountIn - fees.sponsorship.userPaysTotal;
    if (net <= 0n) throw amountTooLow(fees.sponsorship.userPaysTotal, route);
    amountOut = toOutput(net);
    if (amountOut === 0n) throw amountTooLow(fees.sponsorship.userPaysTotal, route);
  } else {
    amountOut = params.amount;
    let net = route.sameAsset
      ? rescale(amountOut, to.decimals, from.decimals, 'up')
      : convert(amountOut, to, from, 'up');
    if (cap !== undefined) {
      const inPools = cap.inFor(amountOut);
      if (inPools === undefined) poolsShort = true;
      else if (inPools > net) net = inPools;
    }
    ({ amountIn, fees } = solveInput(net, feesAt));
    // The fixed point guarantees the user's remainder covers `net`; converting back must reach the output.
    while (toOutput(amountIn - fees.sponsorship.userPaysTotal) < amountOut) {
      amountIn += 1n;
      fees = feesAt(amountIn);
    }
  }

  const minimumAmountOut =
    params.tradeType === 'EXACT_OUTPUT' ? amountOut : (amountOut * BigInt(10_000 - route.slippageBps)) / 10_000n;
  const usdIn = (amount: bigint) => toUsdMicros(amount, from.decimals, from.price);
  const share = revenueShare({
    routeClass: route.routeClass,
    trailing30dVolumeUsdMicros: parameters.trailingVolumeUsdMicros,
    qualified: caller.apiKey?.revenueShareEligible === true,
    platformFee: fees.platform,
  });

  return {
    ...(poolsShort ? { inventoryCapShort: true as const } : {}),
    gasTopup,
    amountIn,
    amountOut,
    minimumAmountOut,
    sponsorship: fees.sponsorship,
    fees: {
      currency: {
        chainId: route.origin.id,
        address: route.currencyIn.address,
        decimals: route.currencyIn.decimals,
        symbol: route.currencyIn.symbol,
      },
      routeClass: route.routeClass,
      execution: fees.execution,
      executionUsdMicros: executionMicros,
      executionParts: {
        flatMicros: execution.flatMicros,
        destinationGasMicros: execution.destinationMicros,
        originGasMicros: execution.originMicros,
        gasTopupMicros: topupUsdMicros,
        gasUnits: fillGasUnits,
        gasPriceWei: market.destinationGasPrice,
        l1FeeWei: market.fillL1FeeWei,
        ...(market.originGas?.l1FeeWei ? { originL1FeeWei: market.originGas.l1FeeWei } : {}),
      },
      swap: fees.swap,
      swapBps,
      platform: fees.platform,
      platformBps: platformFeeBps(route.routeClass),
      app: fees.app.total,
      appFees: fees.app.perRecipient.map((entry) => ({ ...entry, recipient: entry.recipient as Address })),
      sponsored: fees.sponsorship.sponsoredTotal,
      sponsoredComponents: fees.sponsorship.selected,
      userPays: fees.sponsorship.userPaysTotal,
      revenueShare: share,
    },
    usd: {
      in: usdIn(amountIn),
      out: toUsdMicros(amountOut, to.decimals, to.price),
      execution: executionMicros,
      swap: usdIn(fees.swap),
      platform: usdIn(fees.platform),
      app: usdIn(fees.app.total),
      sponsored: usdIn(fees.sponsorship.sponsoredTotal),
      inventoryCap: cap === undefined ? 0n : capImpact(amountIn - fees.sponsorship.userPaysTotal),
    },
  };
}

/**
 * The execution fee (micro-USD) of a fill of `gas.units` on `destination` at its gas price, plus its L1 data fee
 * (`gas.l1FeeWei`, OP-stack chains), at the native price.
 */
export function fillExecutionFee(
  destination: ChainConfig,
  gas: { units: bigint; priceWei: bigint; l1FeeWei: bigint },
  nativePrice: UsdPrice,
  originGas?: MarketSnapshot['originGas'],
) {
  const nativeDecimals = destination.nativeCurrency.decimals;
  return executionFeeUsd({
    destinationGasUnits: gas.units,
    destinationGasPriceWei: gas.priceWei,
    destinationL1FeeWei: gas.l1FeeWei,
    destinationNativeUsdMicros: toUsdMicros(pow10(nativeDecimals), nativeDecimals, nativePrice, 'up'),
    nativeDecimals,
    ...(originGas === undefined
      ? {}
      : {
          originGas: {
            units: originGas.units,
            priceWei: originGas.priceWei,
            extraWei: originGas.l1FeeWei ?? 0n,
            nativeUsdMicros: toUsdMicros(
              pow10(originGas.nativeDecimals),
              originGas.nativeDecimals,
              originGas.nativePrice,
              'up',
            ),
            decimals: originGas.nativeDecimals,
          },
        }),
  });
}

/**
 * The smallest input whose remainder after the user's fees is at least `net`. Fees grow with the input, so
 * `input = net + userFees(input)` is found by iterating from `net`; the sequence only increases and settles
 * within a few rounds because fees are a fraction of the input.
 */
function solveInput(net: bigint, feesAt: (amountIn: bigint) => FeesAt): { amountIn: bigint; fees: FeesAt } {
  let amountIn = net;
  let fees = feesAt(amountIn);
  for (let round = 0; round < 64; round += 1) {
    const next = net + fees.sponsorship.userPaysTotal;
    if (next <= amountIn) return { amountIn, fees };
    amountIn = next;
    fees = feesAt(amountIn);
  }
  throw new GatewayError(
    'SWAP_IMPACT_TOO_HIGH',
    'Fees take (almost) all of the input; no input amount can deliver this output',
  );
}

/** An amount in a currency with other decimals (same asset): exact when scaling up, rounded when down. */
export function rescale(amount: bigint, fromDecimals: number, toDecimals: number, rounding: 'down' | 'up'): bigint {
  if (toDecimals >= fromDecimals) return amount * pow10(toDecimals - fromDecimals);
  const divisor = pow10(fromDecimals - toDecimals);
  return rounding === 'down' ? amount / divisor : ceilDiv(amount, divisor);
}

function parseFeeBps(fee: string | undefined): number {
  const bps = Number(fee);
  if (fee === undefined || !/^[0-9]+$/.test(fee) || !Number.isInteger(bps) || bps > 10_000) {
    throw new GatewayError(
      'INVALID_INPUT',
      `appFees[].fee must be an integer number of basis points from 0 to 10000, got '${fee}'`,
      { data: 'appFees' },
    );
  }
  return bps;
}

function amountTooLow(fees: bigint, route: ResolvedRoute): GatewayError {
  return new GatewayError(
    'AMOUNT_TOO_LOW',
    `Amount is too low: fees of ${fees} (smallest units of ${route.currencyIn.symbol}) use up the whole input`,
  );
}
