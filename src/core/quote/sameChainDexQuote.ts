/**
 * The quote (or price) of a same-chain swap the DEX serves (`planSameChainDex`): the user's steps, the details as
 * for any quote with the pool's numbers, and the request stored with its DEX leg (`quote.dex.sameChain`) so the
 * status, the history and the explorer find it like any other.
 */
import { formatUnits, type Hex } from 'viem';
import type { CurrencyConfig } from '../chains/types.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { splitSponsorship } from '../fees/sponsorship.js';
import { committedOutflow } from '../fill/fillOutflow.js';
import { jsonify } from '../json.js';
import { toUsdMicros, type UsdPrice } from '../market.js';
import { pow10 } from '../powersOfTen.js';
import type { Caller } from '../vocabulary/caller.js';
import { buildOrder } from './order.js';
import type { Pricing } from './pricing.js';
import { presentDetails, presentLegacyFees, timeEstimate, type PresentParameters } from './present.js';
import { quoteTtlSeconds } from './quoteTtl.js';
import { sameChainSwapCall, type SameChainDexPlan } from './sameChainDex.js';
import { approveStep } from './steps.js';
import type { Price, Quote, QuoteParameters, QuoteStep } from './types.js';

/** Gas of the user's router transaction besides the swaps' own (the call, the transfers in and out). */
const ROUTER_CALL_GAS = 60_000n;
const APPROVE_GAS = 50_000n;

export async function priceSameChainDex(ctx: CoreContext, plan: SameChainDexPlan): Promise<Price> {
  const priced = await pricedPlan(ctx, plan);
  const userBalance = await ctx.market.balanceOf(plan.route.origin.id, plan.route.user, plan.route.currencyIn.address);
  const present = presentOf(plan, priced, userBalance, false);
  return { fees: presentLegacyFees(present), details: detailsOf(plan, present) };
}

export async function quoteSameChainDex(
  ctx: CoreContext,
  params: QuoteParameters,
  caller: Caller,
  plan: SameChainDexPlan,
): Promise<Quote> {
  const { route, dex } = plan;
  const priced = await pricedPlan(ctx, plan);
  const nowMs = ctx.now();
  const deadline = Math.floor(nowMs / 1000) + quoteTtlSeconds(ctx.config.quote, params.ttl);
  // The order describes the request (its id is the request id); no deposit is ever made to it.
  const { order, requestId } = buildOrder({
    route,
    pricing: priced.pricing,
    solver: ctx.solver.address,
    deadline,
    refundDeadline: deadline,
  });
  const router = dex.hops[0]!.router;
  const [userBalance, allowance] = await Promise.all([
    ctx.market.balanceOf(route.origin.id, route.user, route.currencyIn.address, { sameHead: true }),
    plan.nativeIn
      ? 0n
      : ctx.market.allowance(route.origin.id, route.user, route.currencyIn.address, router, { sameHead: true }),
  ]);
  const quoted = {
    id: requestId,
    user: route.user,
    recipient: route.recipient,
    refundTo: route.refundTo,
    sender: route.user,
    originChainId: route.origin.id,
    destinationChainId: route.destination.id,
    originCurrency: route.currencyIn.address,
    destinationCurrency: route.currencyOut.address,
    amountIn: dex.amountIn,
    amountOut: dex.amountOut,
    minAmountOut: plan.minAmountOut,
    tradeType: params.tradeType,
    operation: route.operation,
    orderId: order.orderId,
    referrer: params.referrer ?? null,
    apiKeyId: caller.apiKey?.id ?? null,
    quote: jsonify({
      slippageBps: route.slippageBps,
      calls: [],
      txsGasLimit: null,
      explicitDeposit: true,
      referrerAddress: params.referrerAddress ?? null,
      timeEstimate: timeEstimate(route),
      order: { orderData: order.orderData },
      dex: { sameChain: plan.leg },
    }),
    feesQuoted: jsonify({ ...priced.pricing.fees, usdMicros: priced.pricing.usd }),
    expiresAt: deadline * 1000,
    createdAt: nowMs,
    volumeUsdMicros: priced.pricing.usd.in,
    appFeesUsdMicros: null,
  };
  // The user's own swap pays the recipient, but the rule is the fills': a request never in flight commits nothing.
  await ctx.requestWriter.insert({ ...quoted, committedOutflow: committedOutflow(quoted) });
  ctx.log.debug({ requestId, source: plan.leg.source, amountIn: dex.amountIn.toString() }, 'same-chain DEX quote');
  const needsApproval = !plan.nativeIn && allowance < dex.amountIn;
  const present = presentOf(plan, priced, userBalance, needsApproval);
  return {
    requestId,
    steps: stepsOf(plan, requestId, BigInt(deadline), needsApproval),
    fees: presentLegacyFees(present),
    details: detailsOf(plan, present),
    protocol: { v2: order },
  };
}

/** `approve` of the router when the allowance is short, then `swap`, the router call; its `check` is the status. */
function stepsOf(plan: SameChainDexPlan, requestId: Hex, deadline: bigint, needsApproval: boolean): QuoteStep[] {
  const { route, dex } = plan;
  const chainId = route.origin.id;
  const steps: QuoteStep[] = [];
  if (needsApproval)
    steps.push(
      approveStep({
        description: `Approve ${route.currencyIn.symbol} for the swap`,
        requestId,
        from: route.user,
        token: route.currencyIn.address,
        spender: dex.hops[0]!.router,
        amount: dex.amountIn,
        chainId,
      }),
    );
  steps.push({
    id: 'swap',
    action: 'Confirm transaction in your wallet',
    description: `Swapping ${route.currencyIn.symbol} for ${route.currencyOut.symbol} through ${plan.leg.source} on ${route.origin.displayName}`,
    kind: 'transaction',
    requestId,
    depositAddress: '',
    items: [
      {
        status: 'incomplete',
        data: { from: route.user, ...sameChainSwapCall(plan, requestId, deadline), chainId },
        check: { endpoint: `/intents/status/v3?requestId=${requestId}`, method: 'GET' },
      },
    ],
  });
  return steps;
}

interface PricedPlan {
  pricing: Pricing;
  priceIn: UsdPrice;
  priceOut: UsdPrice;
  originGasPrice: bigint;
  originNativePrice: UsdPrice;
}

/**
 * The plan's numbers in the engine's shape: no execution, platform or app fee (the gateway sends nothing and is
 * not in the path); the pools' fees and impact are the swap impact in USD (`usd.swap`), the input's value less the
 * output's. A currency without a price feed (a long-tail token) is valued at the route's mid price against the
 * other side; with neither priced, the USD figures are 0.
 */
async function pricedPlan(ctx: CoreContext, plan: SameChainDexPlan): Promise<PricedPlan> {
  const { route, dex } = plan;
  const chain = route.origin;
  const [feedIn, feedOut, originGasPrice, originNativePrice] = await Promise.all([
    feedPrice(ctx, chain.id, route.currencyIn),
    feedPrice(ctx, chain.id, route.currencyOut),
    ctx.market.gasPrice(chain.id),
    ctx.market.usdPrice(chain.id, chain.nativeCurrency),
  ]);
  const { currencyIn, currencyOut } = route;
  const unpriced: UsdPrice = { answer: 0n, decimals: 0, updatedAt: 0 };
  // One whole unit of the other side at the mid price: value(amountIn) = value(midAmountOut).
  const priceIn =
    feedIn ??
    (feedOut === undefined || dex.amountIn === 0n
      ? unpriced
      : scaledPrice(feedOut, dex.midAmountOut, currencyOut.decimals, dex.amountIn, currencyIn.decimals));
  const priceOut =
    feedOut ??
    (dex.midAmountOut === 0n || priceIn.answer === 0n
      ? unpriced
      : scaledPrice(priceIn, dex.amountIn, currencyIn.decimals, dex.midAmountOut, currencyOut.decimals));
  const usdIn = toUsdMicros(dex.amountIn, currencyIn.decimals, priceIn);
  const usdOut = toUsdMicros(dex.amountOut, currencyOut.decimals, priceOut);
  if (usdIn > 0n && usdIn < ctx.config.quote.minSameChainSwapUsdMicros)
    throw new GatewayError(
      'AMOUNT_TOO_LOW',
      `Same-chain swaps must be worth at least USD ${formatUnits(ctx.config.quote.minSameChainSwapUsdMicros, 6)}`,
    );
  return {
    pricing: pricingOf(plan, usdIn, usdOut),
    priceIn,
    priceOut,
    originGasPrice,
    originNativePrice,
  };
}

/** The price of one whole unit of B when `amountA` of A (priced `priceA`) is worth `amountB` of B. */
function scaledPrice(
  priceA: UsdPrice,
  amountA: bigint,
  decimalsA: number,
  amountB: bigint,
  decimalsB: number,
): UsdPrice {
  const extra = 12;
  return {
    answer: (priceA.answer * amountA * pow10(decimalsB + extra)) / (amountB * pow10(decimalsA)),
    decimals: priceA.decimals + extra,
    updatedAt: priceA.updatedAt,
  };
}

async function feedPrice(ctx: CoreContext, chainId: number, currency: CurrencyConfig): Promise<UsdPrice | undefined> {
  return currency.price === undefined ? undefined : ctx.market.usdPrice(chainId, currency);
}

function pricingOf(plan: SameChainDexPlan, usdIn: bigint, usdOut: bigint): Pricing {
  const { route, dex } = plan;
  const zero = { execution: 0n, swap: 0n, platform: 0n, app: 0n };
  return {
    gasTopup: null,
    amountIn: dex.amountIn,
    amountOut: dex.amountOut,
    minimumAmountOut: plan.minAmountOut,
    fees: {
      currency: {
        chainId: route.origin.id,
        address: route.currencyIn.address,
        decimals: route.currencyIn.decimals,
        symbol: route.currencyIn.symbol,
      },
      routeClass: route.routeClass,
      execution: 0n,
      executionUsdMicros: 0n,
      executionParts: {
        flatMicros: 0n,
        destinationGasMicros: 0n,
        originGasMicros: 0n,
        gasTopupMicros: 0n,
        gasUnits: 0n,
        gasPriceWei: 0n,
        l1FeeWei: 0n,
      },
      swap: 0n,
      swapBps: 0,
      platform: 0n,
      platformBps: 0,
      app: 0n,
      appFees: [],
      sponsored: 0n,
      sponsoredComponents: [],
      userPays: 0n,
      revenueShare: { tier: null, shareBps: 0, amount: 0n },
    },
    sponsorship: splitSponsorship({ components: zero, subsidizeFees: false, sponsorshipEnabled: false }),
    usd: {
      in: usdIn,
      out: usdOut,
      execution: 0n,
      swap: usdIn - usdOut,
      platform: 0n,
      app: 0n,
      sponsored: 0n,
      inventoryCap: 0n,
    },
  };
}

function presentOf(
  plan: SameChainDexPlan,
  priced: PricedPlan,
  userBalance: bigint,
  needsApproval: boolean,
): PresentParameters {
  const gas = plan.dex.gasEstimate + ROUTER_CALL_GAS + (needsApproval ? APPROVE_GAS : 0n);
  return {
    route: plan.route,
    pricing: priced.pricing,
    priceIn: priced.priceIn,
    priceOut: priced.priceOut,
    userBalance,
    originGas: { amount: gas * priced.originGasPrice, nativePrice: priced.originNativePrice },
  };
}

/** The details as for any quote, naming the DEX as the route's router and source on both legs (one chain). */
function detailsOf(plan: SameChainDexPlan, present: PresentParameters) {
  const details = presentDetails(present);
  const source = plan.leg.source;
  return {
    ...details,
    // The recipient is paid by the router, whatever the timing of blocks: one block on the chain.
    timeEstimate: Math.max(1, Math.ceil(plan.route.origin.blockTime)),
    route: {
      origin: { ...details.route.origin, router: source, includedSwapSources: [source] },
      destination: { ...details.route.destination, router: source, includedSwapSources: [source] },
    },
  };
}
