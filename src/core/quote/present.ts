import { formatUnits } from 'viem';
import { fillPayee } from '../fill/fillTransaction.js';
import { amountOf, expandedPriceImpact, relayerSplit } from '../fees/presentFees.js';
import { FEE_COMPONENTS, type FeeComponent } from '../fees/sponsorship.js';
import { toUsdMicros, type UsdPrice } from '../market.js';
import { SWAP_SOURCE } from '../chains/dexSources.js';
import { formatUsdMicros } from '../usd.js';
import type { Pricing } from './pricing.js';
import type { ResolvedRoute } from '../vocabulary/route.js';
import type { FeeSponsorshipPhase, Impact, LegacyFees, QuoteDetails, SponsorshipComponentName } from './types.js';
import { quoteCurrency, type Amount, type QuoteCurrency } from '../vocabulary/amount.js';
import { pow10 } from '../powersOfTen.js';

/** `part / whole` as a percentage with two decimals, truncated toward zero (`-1.25`); `0` when `whole` is 0. */
function formatPercent(part: bigint, whole: bigint): string {
  if (whole === 0n) return '0';
  return formatUnits((part * 10_000n) / whole, 2);
}

/** An Amount object priced at `price`: exact smallest units, whole units and USD for display. */
const pricedAmount = (
  currency: QuoteCurrency,
  price: UsdPrice,
  amount: bigint,
  minimumAmount: bigint = amount,
): Amount => amountOf(currency, amount, toUsdMicros(amount, currency.decimals, price), minimumAmount);

const impact = (usdMicros: bigint, inUsdMicros: bigint): Impact => ({
  usd: formatUsdMicros(usdMicros),
  percent: formatPercent(usdMicros, inUsdMicros),
});

/** Output units per input unit in whole units, to 18 decimals (trailing zeros trimmed). */
export function rateOf(amountIn: bigint, decimalsIn: number, amountOut: bigint, decimalsOut: number): string {
  if (amountIn === 0n) return '0';
  const scaled = (amountOut * pow10(decimalsIn + 18)) / (amountIn * pow10(decimalsOut));
  return formatUnits(scaled, 18);
}

export interface PresentParameters {
  route: ResolvedRoute;
  pricing: Pricing;
  priceIn: UsdPrice;
  priceOut: UsdPrice;
  userBalance: bigint;
  /** Origin gas of the deposit, in the origin's native currency (the legacy `fees.gas`). */
  originGas: { amount: bigint; nativePrice: UsdPrice };
}

/** The `details` of a quote or price. */
export function presentDetails(p: PresentParameters): QuoteDetails {
  const { route, pricing } = p;
  const inCurrency = quoteCurrency(route.origin.id, route.currencyIn);
  const outCurrency = quoteCurrency(route.destination.id, route.currencyOut);
  const currencyIn = pricedAmount(inCurrency, p.priceIn, pricing.amountIn);
  const currencyOut = pricedAmount(outCurrency, p.priceOut, pricing.amountOut, pricing.minimumAmountOut);
  const slippageValue = pricing.amountOut - pricing.minimumAmountOut;
  const dex = pricing.dex;
  // The source that delivers the output: the pools of the destination leg, else the solver's inventory.
  const source = dex?.record.source ?? SWAP_SOURCE;
  const sources = route.sameAsset ? [] : [source];
  const { usd } = pricing;
  const swapImpactMicros = swapImpactUsdMicros(pricing);
  // What enters the destination's swap: the currency the solver spends into the pools, or the output itself.
  const destinationInput =
    dex === undefined
      ? currencyOut
      : pricedAmount(quoteCurrency(route.destination.id, dex.start), dex.startPrice, dex.route.amountIn);
  return {
    operation: route.operation,
    sender: route.user,
    // What the fill pays: with calls, the multicaller receives `currencyOut` and runs the calls (the order's
    // `output.calls` lists them); the quote's `recipient` then only gets leftover native.
    recipient: fillPayee(route.destination.contracts, route.recipient, route.calls),
    currencyIn,
    currencyOut,
    refundCurrency: currencyIn,
    ...(pricing.gasTopup === null
      ? {}
      : {
          // Priced at what it is charged (the requested USD), as the execution fee carries it.
          currencyGasTopup: amountOf(
            quoteCurrency(route.destination.id, route.destination.nativeCurrency),
            pricing.gasTopup.amount,
            pricing.gasTopup.usdMicros,
            pricing.gasTopup.amount,
          ),
        }),
    totalImpact: impact(usd.out - usd.in, usd.in),
    swapImpact: impact(swapImpactMicros, usd.in),
    expandedPriceImpact: { ...expandedPriceImpact(usd), swap: { usd: formatUsdMicros(swapImpactMicros) } },
    rate: rateOf(pricing.amountIn, inCurrency.decimals, pricing.amountOut, outCurrency.decimals),
    slippageTolerance: {
      total: route.slippageBps,
      origin: { usd: '0', value: '0', percent: '0' },
      destination: {
        usd: formatUsdMicros(toUsdMicros(slippageValue, outCurrency.decimals, p.priceOut)),
        value: slippageValue.toString(),
        // The slippage applied to the output: none for EXACT_OUTPUT, whose output is exact (value "0").
        percent: slippageValue === 0n ? '0' : formatUnits(BigInt(route.slippageBps), 2),
      },
    },
    timeEstimate: timeEstimate(route),
    userBalance: p.userBalance,
    isFixedRate: false,
    route: {
      origin: { inputCurrency: currencyIn, outputCurrency: currencyIn, router: SWAP_SOURCE, includedSwapSources: [] },
      destination: {
        inputCurrency: destinationInput,
        outputCurrency: currencyOut,
        router: route.sameAsset ? SWAP_SOURCE : source,
        includedSwapSources: sources,
      },
    },
  };
}

/**
 * Seconds from the deposit's broadcast to the fill: the origin block plus its confirmations, then one
 * destination block for the fill (rounded up, at least one second).
 */
export function timeEstimate(route: ResolvedRoute): number {
  const seconds = (route.origin.confirmations + 1) * route.origin.blockTime + route.destination.blockTime;
  return Math.max(1, Math.ceil(seconds));
}

/**
 * The deprecated `fees` object, consistent with the breakdown, in the input currency: `relayerGas` is the
 * destination-gas part of the execution fee, `relayerService` the rest of what the solver earns (flat fee,
 * swap and platform fees), `relayer` their sum, `app` the app fees, `subsidized` the sponsored part. `gas` is
 * the origin deposit's gas in the origin's native currency, paid by the user to the network.
 */
export function presentLegacyFees(p: PresentParameters): LegacyFees {
  const { route, pricing } = p;
  const inCurrency = quoteCurrency(route.origin.id, route.currencyIn);
  const fees = pricing.fees;
  const { relayerGas, relayerService } = relayerSplit(
    fees,
    // A gas top-up is destination gas the user buys: with the fill's gas, as the reference shows it.
    fees.executionParts.destinationGasMicros + fees.executionParts.originGasMicros + fees.executionParts.gasTopupMicros,
    fees.executionUsdMicros,
  );
  const at = (amount: bigint) => pricedAmount(inCurrency, p.priceIn, amount);
  return {
    gas: pricedAmount(
      quoteCurrency(route.origin.id, route.origin.nativeCurrency),
      p.originGas.nativePrice,
      p.originGas.amount,
    ),
    relayer: at(relayerGas + relayerService),
    relayerGas: at(relayerGas),
    relayerService: at(relayerService),
    app: at(fees.app),
    subsidized: at(fees.sponsored),
  };
}

const wireComponent = (component: FeeComponent): SponsorshipComponentName =>
  component === 'platform' ? 'service' : component;

/** `feeSponsorship.quoted`: each component's total, sponsored part and what the user pays. */
export function presentSponsorship(
  p: Pick<PresentParameters, 'route' | 'pricing' | 'priceIn'>,
  maxSubsidizationAmount: bigint | undefined,
): FeeSponsorshipPhase {
  const { route, pricing } = p;
  const inCurrency = quoteCurrency(route.origin.id, route.currencyIn);
  const at = (amount: bigint) => pricedAmount(inCurrency, p.priceIn, amount);
  const components = Object.fromEntries(
    FEE_COMPONENTS.map((component) => {
      const split = pricing.sponsorship.perComponent[component];
      return [
        wireComponent(component),
        {
          selected: split.selected,
          total: at(split.total),
          sponsored: at(split.sponsored),
          userPays: at(split.userPays),
        },
      ];
    }),
  ) as FeeSponsorshipPhase['components'];
  // The reference's clients read the platform component as `relay`: the same entry under both names.
  components.relay = components.service;
  const selected = pricing.sponsorship.selected.map(wireComponent);
  return {
    selectedComponents: selected.includes('service') ? [...selected, 'relay'] : selected,
    ...(maxSubsidizationAmount === undefined ? {} : { maxSubsidizationAmount: maxSubsidizationAmount.toString() }),
    capHit: pricing.sponsorship.capHit,
    components,
    sponsoredTotal: at(pricing.sponsorship.sponsoredTotal),
    userPaysTotal: at(pricing.sponsorship.userPaysTotal),
  };
}

/**
 * What the swap costs the user in micro-USD, signed as `swapImpact` shows it (a cost is negative): the swap fee and
 * what the inventory cap took off the oracle's price, or, bought through the pools, their fees and impact. Stored
 * with the request's fees (`usdMicros.swapWithImpact`, as a positive cost) so the request shows what the quote did.
 */
export function swapImpactUsdMicros(pricing: Pricing): bigint {
  const { usd, dex } = pricing;
  return dex === undefined ? -(usd.swap + usd.inventoryCap) : dex.swapImpactUsdMicros;
}
