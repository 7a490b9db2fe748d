import { formatUnits, zeroAddress } from 'viem';
import { deleteUnansweredRequest, sumApiKeyVolume } from '../../store/requests.repository.js';
import type { JsonObject } from '../../records/json.js';
import { createTtlCache, type TtlCache } from '../cache.js';
import type { CoreContext } from '../context.js';
import { committedFills } from '../inventory/inventory.js';
import { committedOutflow } from '../fill/fillOutflow.js';
import { GatewayError, isGatewayError } from '../errors.js';
import { jsonify } from '../json.js';
import { checkQuoteExposure } from '../limits/exposure.js';
import { convert, type MarketData, type UsdPrice } from '../market.js';
import { buildOrder } from './order.js';
import { callsFillGas, paymentFillGas, paymentFillL1Fee, representativeTxBytes } from './fillGas.js';
import { withGasMargin } from '../gasMargin.js';
import { callsGasCap } from '../limits/gasCaps.js';
import { checkNoRecentExecutionRevert } from '../limits/executionReverts.js';
import { type MarketSnapshot, type Pricing } from './pricing.js';
import { checkInventoryLimits, inventoryPricing } from './inventoryQuote.js';
import {
  presentDetails,
  presentLegacyFees,
  presentSponsorship,
  swapImpactUsdMicros,
  timeEstimate,
  type PresentParameters,
} from './present.js';
import { resolveRoute } from './resolve.js';
import { better, quoteDestinationDex } from './dexDestination.js';
import type { ResolvedRoute } from '../vocabulary/route.js';
import { sponsorshipReservation, storeSponsoredRequest } from './sponsorshipReservation.js';
import { quoteTtlSeconds } from './quoteTtl.js';
import { buildPermitSteps, buildSteps, DEPOSIT_GAS } from './steps.js';
import type { PermitStandard } from '../ports/permits.js';
import { PERMIT_DEPOSIT_GAS, representativePermitDeposit } from '../permits/typedData.js';
import { quotePermit } from '../permits/quotePermit.js';
import { depositAddressOfQuote, recordDepositAddress } from './depositAddress.js';
import type { Price, Quote, QuoteDetails, QuoteParameters } from './types.js';
import { planSameChainDex, type InventoryOffer } from './sameChainDex.js';
import { priceSameChainDex, quoteSameChainDex } from './sameChainDexQuote.js';
import {
  buildOriginSwapSteps,
  originSwapGas,
  originSwapRecord,
  planOriginSwap,
  presentOriginSwap,
  type OriginSwap,
} from './originSwap.js';
import type { Caller } from '../vocabulary/caller.js';

export type GetQuoteParameters = QuoteParameters;
export type GetQuoteReturnType = Quote;

/**
 * An executable quote (`POST /quote/v2`, `POST /quote`, GraphQL `quote`): prices the route from live oracle
 * prices and gas, checks it can be filled, stores the request (status `waiting`, its quoted fees and expiry),
 * and returns the steps that deposit exactly the quoted amount with the request id.
 */
export async function getQuote(
  ctx: CoreContext,
  params: GetQuoteParameters,
  caller: Caller,
): Promise<GetQuoteReturnType> {
  const metrics = ctx.metrics;
  if (metrics === undefined) return quoteRequest(ctx, params, caller);
  try {
    const quote = await quoteRequest(ctx, params, caller);
    metrics.quoteAnswered(params.originChainId, params.destinationChainId, 'ok');
    return quote;
  } catch (error) {
    metrics.quoteAnswered(
      params.originChainId,
      params.destinationChainId,
      isGatewayError(error) ? error.code : 'UNEXPECTED',
    );
    throw error;
  }
}

async function quoteRequest(
  ctx: CoreContext,
  requested: GetQuoteParameters,
  caller: Caller,
): Promise<GetQuoteReturnType> {
  // A same-chain swap the pools serve better is the user's own router transaction: no deposit, no fill.
  const dexPlan = await planSameChainDex(ctx, requested, inventoryOffer(ctx, requested, caller));
  if (dexPlan !== null) return quoteSameChainDex(ctx, requested, caller, dexPlan);
  // An input the solver does not hold is swapped on the origin first: the order is for what that deposits.
  const originSwap = await planOriginSwap(ctx, requested);
  const params = originSwap?.params ?? requested;
  const ttlSeconds = quoteTtlSeconds(ctx.config.quote, params.ttl);
  const prepared = await prepare(ctx, params, caller, 'quote', originSwap);
  const { route, pricing } = prepared;
  const nowMs = ctx.now();
  const deadline = Math.floor(nowMs / 1000) + ttlSeconds;
  const { order, requestId } = buildOrder({
    route,
    pricing,
    solver: ctx.solver.address,
    deadline,
    refundDeadline: deadline + ctx.config.quote.refundWindowSeconds,
  });
  if (params.includeProtocolData === true)
    order.orderSignature = await ctx.solver.signMessage({ message: { raw: order.orderId } });
  const feeSponsorship =
    params.subsidizeFees === true ? { quoted: presentSponsorship(prepared, params.maxSubsidizationAmount) } : undefined;
  const permit =
    prepared.permit === undefined
      ? undefined
      : await quotePermit(ctx, {
          origin: route.origin,
          currencyIn: route.currencyIn,
          user: route.user,
          amountIn: pricing.amountIn,
          ...prepared.permit,
          requestId,
          nowSeconds: Math.floor(nowMs / 1000),
          deadline,
          permitExpiry: params.permitExpiry,
          ttl: params.ttl,
        });

  // The stored request does not depend on the user's balance or allowance, so it is committed while they are
  // read (on a busy gateway the two waits were most of a quote's latency). When a read fails, the quote fails
  // and the request it stored is removed again (with its reservation): a failed quote leaves nothing behind.
  const depositAddress = depositAddressOfQuote(route, params, requestId);
  const quoted = {
    id: requestId,
    ...(depositAddress === null ? {} : { depositAddress: depositAddress.address }),
    user: route.user,
    recipient: route.recipient,
    refundTo: route.refundTo,
    sender: route.user,
    originChainId: route.origin.id,
    destinationChainId: route.destination.id,
    originCurrency: route.currencyIn.address,
    destinationCurrency: route.currencyOut.address,
    amountIn: pricing.amountIn,
    amountOut: pricing.amountOut,
    minAmountOut: pricing.minimumAmountOut,
    tradeType: params.tradeType,
    // A deposit of the output's own asset that the user's swap produced: to the user, a swap.
    operation: originSwap !== null && route.operation === 'bridge' ? 'swap' : route.operation,
    orderId: order.orderId,
    referrer: params.referrer ?? null,
    apiKeyId: caller.apiKey?.id ?? null,
    quote: jsonSafe({
      // With an origin swap, its tolerance (the order's own output is exact when it is a bridge).
      slippageBps: Math.max(route.slippageBps, originSwap?.slippageBps ?? 0),
      calls: route.calls,
      txsGasLimit: params.txsGasLimit ?? null,
      explicitDeposit: params.explicitDeposit !== false,
      referrerAddress: params.referrerAddress ?? null,
      timeEstimate: timeEstimate(route),
      // Of the order only its data: the id is the `order_id` column (the data's hash), and the payment details
      // and the signature follow from the data, the chain and the solver's key. Every reader takes `orderData`,
      // and what is left keeps a bridge quote's row under a third of a heap page (docs/performance.md).
      order: { orderData: order.orderData },
      ...(feeSponsorship === undefined ? {} : { feeSponsorship }),
      ...(permit === undefined ? {} : { permit: { ...permit } }),
      // The native gas the fill sends the recipient besides the output, and what it was charged.
      ...(pricing.gasTopup === null ? {} : { gasTopup: pricing.gasTopup }),
      // The DEX legs the user's origin transaction and the fill execute (`src/core/dex/legRecord.ts`).
      ...(originSwap === null && pricing.dex === undefined
        ? {}
        : {
            dex: {
              ...(originSwap === null ? {} : originSwapRecord(originSwap)),
              ...(pricing.dex === undefined ? {} : { destination: pricing.dex.record }),
            },
          }),
    }),
    feesQuoted: storedFeesOf(pricing),
    expiresAt: deadline * 1000,
    createdAt: nowMs,
    volumeUsdMicros: pricing.usd.in,
    // Null without app fees, so the history's `features=app_fees` reads the same rule as the record's `features`.
    appFeesUsdMicros: pricing.fees.appFees.length === 0 ? null : pricing.usd.app,
  };
  // What its fill will take from the solver, by the rule the fill spends by: the inventory holds it back meanwhile.
  const request = { ...quoted, committedOutflow: committedOutflow(quoted) };
  // What the sponsor pays is reserved against the key's allowance by the statement that stores the request; a quote
  // the allowance cannot cover is refused with nothing stored. Other quotes share the group commit.
  const reservation = sponsorshipReservation(pricing, route, prepared.priceIn);
  // (A sponsor is always an API key: `prepare` refuses `subsidizeFees` without one.)
  const stored =
    reservation > 0n
      ? storeSponsoredRequest(ctx, { ...request, apiKeyId: caller.apiKey!.id }, reservation)
      : ctx.requestWriter.insert(request);
  const [committed, wallet] = await Promise.allSettled([stored, prepared.wallet]);
  if (committed.status === 'rejected') throw committed.reason;
  if (wallet.status === 'rejected') {
    await deleteUnansweredRequest(ctx.db, requestId).catch((error: unknown) =>
      ctx.log.warn({ err: error, requestId }, 'could not remove the request of a failed quote; it expires unused'),
    );
    throw wallet.reason;
  }
  ctx.log.debug({ requestId, operation: route.operation, amountIn: pricing.amountIn.toString() }, 'quote stored');
  // A deposit address is recorded before it is handed out: a transfer to it is then always attributable.
  if (depositAddress !== null)
    await recordDepositAddress(ctx, depositAddress, { route, params, requestId, amountIn: pricing.amountIn });

  const present = presentParameters(prepared, wallet.value);
  const steps =
    originSwap !== null
      ? buildOriginSwapSteps({ swap: originSwap, route, requestId, allowance: wallet.value.allowance, deadline })
      : permit === undefined
        ? buildSteps({
            route,
            requestId,
            amountIn: pricing.amountIn,
            allowance: wallet.value.allowance,
            explicitDeposit: params.explicitDeposit !== false,
            depositAddress: depositAddress?.address ?? null,
          })
        : buildPermitSteps({ route, requestId, permit });
  return {
    requestId,
    steps,
    fees: presentLegacyFees(present),
    ...(feeSponsorship === undefined ? {} : { feeSponsorship }),
    details: detailsOf(prepared, present),
    protocol: { v2: order },
  };
}

/** A price (`POST /price`, GraphQL `price`): the quote's numbers without steps, order or stored request. */
export async function getPrice(ctx: CoreContext, requested: GetQuoteParameters, caller: Caller): Promise<Price> {
  const dexPlan = await planSameChainDex(ctx, requested, inventoryOffer(ctx, requested, caller));
  if (dexPlan !== null) return priceSameChainDex(ctx, dexPlan);
  const originSwap = await planOriginSwap(ctx, requested);
  const prepared = await prepare(ctx, originSwap?.params ?? requested, caller, 'price', originSwap);
  const present = presentParameters(prepared, await prepared.wallet);
  return { fees: presentLegacyFees(present), details: detailsOf(prepared, present) };
}

/** The details of a quote or price, with its origin swap shown when it has one. */
function detailsOf(prepared: Prepared, present: PresentParameters): QuoteDetails {
  const details = presentDetails(present);
  const swap = prepared.originSwap;
  if (swap === null) return details;
  return presentOriginSwap(details, swap, {
    depositPrice: prepared.priceIn,
    userBalance: present.userBalance,
    usd: prepared.pricing.usd,
  });
}

/** What the solver's inventory gives for a same-chain swap, to compare with the DEX (`planSameChainDex`). */
const inventoryOffer =
  (ctx: CoreContext, params: GetQuoteParameters, caller: Caller): InventoryOffer =>
  async () => {
    const { pricing } = await prepare(ctx, params, caller, 'price', null);
    return { amountIn: pricing.amountIn, amountOut: pricing.amountOut };
  };

/** What a quote reads of the user's wallet: shown in the details and steps, but not part of the order. */
interface Wallet {
  userBalance: bigint;
  /** The allowance of the input token to the depository; 0 for native input and for prices. */
  allowance: bigint;
}

/** Everything a quote is priced from, with the user's wallet still being read. */
interface Prepared extends Omit<PresentParameters, 'userBalance' | 'originGas'> {
  originGasPrice: bigint;
  originNativePrice: UsdPrice;
  /** Rejects as the reads do; a rejection is handled even when nobody awaits it (the quote failed first). */
  wallet: Promise<Wallet>;
  /** `usePermit`: the standard the deposit uses and the token's EIP-712 domain. */
  permit?: { standard: PermitStandard; domain: { name: string; version: string } };
  /** The swap of an input the solver does not hold into the deposit currency (`originSwap.ts`). */
  originSwap: OriginSwap | null;
}

async function prepare(
  ctx: CoreContext,
  params: QuoteParameters,
  caller: Caller,
  mode: 'quote' | 'price',
  originSwap: OriginSwap | null,
): Promise<Prepared> {
  const route = resolveRoute(ctx, params);
  refuseUnservedRoute(ctx, route);
  if (params.amount === 0n) throw new GatewayError('AMOUNT_TOO_LOW', 'Amount must be greater than zero');
  if (route.calls.length > 0)
    await checkNoRecentExecutionRevert(ctx, { user: route.user, apiKeyId: caller.apiKey?.id ?? null }, 'Call quotes');
  if (params.subsidizeFees === true && caller.apiKey === null) {
    throw new GatewayError('UNAUTHORIZED', 'subsidizeFees needs an x-api-key with fee sponsorship enabled');
  }
  const { market } = ctx;
  const { origin, destination, currencyIn, currencyOut } = route;
  const permitSupport = params.usePermit === true ? permitSupportOf(ctx, route) : undefined;
  permitSupport?.catch(() => undefined);
  // With an origin swap, the user pays the swapped token, approved to the swap-deposit router.
  const paid = originSwap?.currencyIn.address ?? currencyIn.address;
  const spender = originSwap?.router ?? origin.contracts.depository;
  const needsAllowance =
    mode === 'quote' && paid !== zeroAddress && permitSupport === undefined && !route.depositAddress;
  // What the quote shows of the user's wallet: a read of the same head serves every quote of it (`sameHead`).
  const wallet = Promise.all([
    market.balanceOf(origin.id, route.user, paid, { sameHead: true }),
    needsAllowance ? market.allowance(origin.id, route.user, paid, spender, { sameHead: true }) : 0n,
  ]).then(([userBalance, allowance]): Wallet => ({ userBalance, allowance }));
  wallet.catch(() => undefined);
  const inventory = route.swapSources?.inventory !== false;
  const [
    priceIn,
    priceOut,
    destinationNativePrice,
    originNativePrice,
    destinationGasPrice,
    originGasPrice,
    volume,
    committed,
  ] = await Promise.all([
    market.usdPrice(origin.id, currencyIn),
    // A long-tail output has no feed: only the pools price it.
    inventory || currencyOut.price !== undefined ? market.usdPrice(destination.id, currencyOut) : undefined,
    market.usdPrice(destination.id, destination.nativeCurrency),
    market.usdPrice(origin.id, origin.nativeCurrency),
    market.gasPrice(destination.id),
    market.gasPrice(origin.id),
    trailingVolume(ctx, caller),
    committedFills(ctx),
  ]);
  const originGas = await permitOriginGas(ctx, route, permitSupport, { originGasPrice, originNativePrice });
  const common = { route, params, caller, volume, committed, priceIn, destinationNativePrice, destinationGasPrice };
  const [fromInventory, fromDex] = await Promise.allSettled([
    inventory
      ? inventoryQuote(ctx, { ...common, priceOut: priceOut!, originNativePrice, originGas: originGas?.snapshot })
      : Promise.reject(new Error('inventory is not a source of this route')),
    (route.swapSources?.dex.length ?? 0) > 0
      ? quoteDestinationDex(ctx, {
          ...common,
          trailingVolumeUsdMicros: volume,
          priceOut,
          ...(originGas === undefined ? {} : { originGas: originGas.snapshot }),
        }).then((dex) => {
          checkFillable(ctx, dex.entry.route, params, dex.entry.pricing, dex.entry.available, {
            priceIn,
            priceOut: dex.entry.price,
            originNativePrice,
            destinationNativePrice,
          });
          return dex;
        })
      : Promise.reject(new Error('no DEX source')),
  ]);
  let pricing: Pricing;
  let pricedOut: UsdPrice;
  if (
    fromDex.status === 'fulfilled' &&
    (fromInventory.status === 'rejected' || better(fromDex.value.pricing, fromInventory.value, params.tradeType))
  ) {
    pricing = fromDex.value.pricing;
    pricedOut = fromDex.value.priceOut;
  } else if (fromInventory.status === 'fulfilled') {
    pricing = fromInventory.value;
    pricedOut = priceOut!;
  } else {
    throw inventory ? fromInventory.reason : (fromDex as PromiseRejectedResult).reason;
  }
  await checkGasTopup(ctx, route, pricing, committed);
  await checkQuoteExposure(ctx, route, pricing.usd);
  return {
    route,
    pricing,
    priceIn,
    priceOut: pricedOut,
    originGasPrice,
    originNativePrice,
    wallet,
    ...(originGas === undefined ? {} : { permit: originGas.permit }),
    originSwap,
  };
}

/** The permit a gasless deposit uses and the origin gas the gateway pays for it; undefined without `usePermit`. */
async function permitOriginGas(
  ctx: CoreContext,
  route: ResolvedRoute,
  permitSupport: Promise<NonNullable<Prepared['permit']>> | undefined,
  prices: { originGasPrice: bigint; originNativePrice: UsdPrice },
): Promise<
  { permit: NonNullable<Prepared['permit']>; snapshot: NonNullable<MarketSnapshot['originGas']> } | undefined
> {
  if (permitSupport === undefined) return undefined;
  const permit = await permitSupport;
  const { origin, currencyIn } = route;
  // On an OP-stack origin the permit deposit the gateway sends also pays an L1 data fee for its bytes.
  const permitL1FeeWei =
    origin.feeModel === 'op-stack'
      ? await ctx.market.l1DataFee(
          origin.id,
          representativeTxBytes(
            origin,
            representativePermitDeposit(permit.standard, origin.contracts.approvalProxy, currencyIn.address),
          ),
        )
      : 0n;
  return {
    permit,
    // The gateway sends a permit's deposit and pays its gas: priced into the execution fee.
    snapshot: {
      units: PERMIT_DEPOSIT_GAS[permit.standard],
      priceWei: prices.originGasPrice,
      nativePrice: prices.originNativePrice,
      nativeDecimals: origin.nativeCurrency.decimals,
      ...(permitL1FeeWei === 0n ? {} : { l1FeeWei: permitL1FeeWei }),
    },
  };
}

/** The quote paid from the solver's inventory of the output, at the oracle prices. */
async function inventoryQuote(
  ctx: CoreContext,
  inputs: {
    route: ResolvedRoute;
    params: QuoteParameters;
    caller: Caller;
    volume: bigint;
    committed: ReadonlyMap<string, bigint>;
    priceIn: UsdPrice;
    priceOut: UsdPrice;
    originNativePrice: UsdPrice;
    destinationNativePrice: UsdPrice;
    destinationGasPrice: bigint;
    originGas: MarketSnapshot['originGas'] | undefined;
  },
): Promise<Pricing> {
  const { route, params, priceIn, priceOut } = inputs;
  const { destination, currencyOut } = route;
  const solverBalance = await ctx.market.solverBalance(destination.id, currencyOut.address);
  // What the solver can promise: its balance less what fills in flight will take from it.
  const availableOut =
    solverBalance - (inputs.committed.get(`${destination.id}:${currencyOut.address.toLowerCase()}`) ?? 0n);
  const { gasUnits: fillGasUnits, l1FeeWei: fillL1FeeWei } =
    route.calls.length === 0
      ? await Promise.all([
          paymentFillGas(ctx, destination, currencyOut.address),
          paymentFillL1Fee(ctx, destination, currencyOut.address),
        ]).then(([gasUnits, l1FeeWei]) => ({ gasUnits, l1FeeWei }))
      : await callsFillGas(ctx, route, params, { priceIn, priceOut }, solverBalance);
  checkCallsGas(route, params, fillGasUnits);
  // Swaps sold from the inventory are capped at the destination pools' price and a size per swap.
  const pricing = await inventoryPricing(ctx, {
    route,
    params,
    market: {
      priceIn,
      priceOut,
      destinationNativePrice: inputs.destinationNativePrice,
      destinationGasPrice: inputs.destinationGasPrice,
      fillGasUnits,
      fillL1FeeWei,
      ...(inputs.originGas === undefined ? {} : { originGas: inputs.originGas }),
    },
    settings: ctx.config.quote,
    caller: inputs.caller,
    trailingVolumeUsdMicros: inputs.volume,
  });
  checkFillable(ctx, route, params, pricing, availableOut, {
    priceIn,
    priceOut,
    originNativePrice: inputs.originNativePrice,
    destinationNativePrice: inputs.destinationNativePrice,
  });
  checkInventoryLimits(ctx, route, pricing);
  return pricing;
}

function checkCallsGas(route: ResolvedRoute, params: QuoteParameters, fillGasUnits: bigint): void {
  const { destination } = route;
  if (params.txsGasLimit !== undefined && route.calls.length > 0 && fillGasUnits > BigInt(params.txsGasLimit)) {
    throw new GatewayError(
      'INVALID_EXTRA_TXS',
      `The calls need ${fillGasUnits} gas with the fill, more than txsGasLimit ${params.txsGasLimit}`,
    );
  }
  if (route.calls.length > 0 && withGasMargin(fillGasUnits) > callsGasCap(destination)) {
    // The solver sends the fill with this limit: more is gas it will not risk on calls it cannot vouch for.
    throw new GatewayError(
      'INVALID_EXTRA_TXS',
      `The calls need ${withGasMargin(fillGasUnits)} gas with the fill (margin included), more than the ${callsGasCap(destination)} the solver sends a fill with calls with on ${destination.displayName}`,
      { data: `maxCallsGas=${callsGasCap(destination)}` },
    );
  }
}

/** The top-up is paid from the solver's native balance on the destination, less what native fills in flight take. */
async function checkGasTopup(
  ctx: CoreContext,
  route: ResolvedRoute,
  pricing: Pricing,
  committed: ReadonlyMap<string, bigint>,
): Promise<void> {
  if (pricing.gasTopup === null) return;
  const { destination } = route;
  const nativeBalance = await ctx.market.solverBalance(destination.id, zeroAddress);
  // A DEX leg entered with native value takes it from the same balance.
  const entered = pricing.dex?.start.address === zeroAddress ? pricing.dex.route.amountIn : 0n;
  const availableNative = nativeBalance - (committed.get(`${destination.id}:${zeroAddress}`) ?? 0n) - entered;
  if (availableNative < pricing.gasTopup.amount)
    throw new GatewayError(
      'INSUFFICIENT_LIQUIDITY',
      `The solver cannot send a gas top-up of ${formatUnits(pricing.gasTopup.amount, destination.nativeCurrency.decimals)} ${destination.nativeCurrency.symbol} on chain ${destination.id} right now; leave topupGas out or ask for a smaller topupGasAmount`,
      { data: `available=${availableNative > 0n ? availableNative : 0n}` },
    );
}

/** `usePermit`: the input must be an ERC-20 configured with `supportsPermit` whose token really supports one. */
async function permitSupportOf(
  ctx: CoreContext,
  route: ResolvedRoute,
): Promise<{ standard: PermitStandard; domain: { name: string; version: string } }> {
  const { origin, currencyIn } = route;
  const refuse = (why: string) =>
    new GatewayError('INVALID_INPUT', `usePermit is not available here: ${why}`, { data: 'usePermit' });
  if (currencyIn.address === zeroAddress) throw refuse(`${currencyIn.symbol} is native; permits are for ERC-20 tokens`);
  if (!currencyIn.supportsPermit) throw refuse(`${currencyIn.symbol} on chain ${origin.id} does not support permits`);
  if (ctx.permitChain === undefined) throw new GatewayError('SERVICE_UNAVAILABLE', 'Permits are not available');
  const token = await ctx.permitChain.token(origin.id, currencyIn.address);
  const standard = token.standards[0];
  if (standard === undefined)
    throw refuse(`${currencyIn.symbol} on chain ${origin.id} supports neither EIP-3009 nor EIP-2612`);
  return { standard, domain: token.domain };
}

/** The presentation's inputs once the wallet is read: the deposit's origin gas needs the allowance. */
function presentParameters(prepared: Prepared, { userBalance, allowance }: Wallet): PresentParameters {
  const { route, pricing, priceIn, priceOut, originGasPrice, originNativePrice } = prepared;
  // A permit deposit is sent (and its gas paid) by the gateway: the user pays no origin gas.
  const originGasUnits =
    prepared.originSwap !== null
      ? originSwapGas(prepared.originSwap, allowance)
      : prepared.permit !== undefined
        ? 0n
        : route.currencyIn.address === zeroAddress
          ? DEPOSIT_GAS.native
          : DEPOSIT_GAS.erc20 + (allowance < pricing.amountIn ? DEPOSIT_GAS.approve : 0n);
  return {
    route,
    pricing,
    priceIn,
    priceOut,
    userBalance,
    originGas: { amount: originGasUnits * originGasPrice, nativePrice: originNativePrice },
  };
}

/** Checks made once the numbers are known: value limits, liquidity, calls' value and the price impact. */
function checkFillable(
  ctx: CoreContext,
  route: ResolvedRoute,
  params: QuoteParameters,
  pricing: Pricing,
  /** The solver's balance of the output less what fills in flight will take. */
  availableOut: bigint,
  prices: Pick<MarketSnapshot, 'priceIn' | 'priceOut' | 'destinationNativePrice'> & {
    originNativePrice: MarketSnapshot['priceIn'];
  },
): void {
  const { origin, destination, currencyIn, currencyOut } = route;
  if (route.operation === 'swap' && route.sameChain && pricing.usd.in < ctx.config.quote.minSameChainSwapUsdMicros) {
    throw new GatewayError(
      'AMOUNT_TOO_LOW',
      `Same-chain swaps must be worth at least USD ${formatMicros(ctx.config.quote.minSameChainSwapUsdMicros)}`,
    );
  }
  const inNative = convert(
    pricing.amountIn,
    { decimals: currencyIn.decimals, price: prices.priceIn },
    { decimals: origin.nativeCurrency.decimals, price: prices.originNativePrice },
  );
  if (origin.partialDisableLimit > 0n && inNative > origin.partialDisableLimit) {
    throw new GatewayError(
      'CHAIN_DISABLED',
      `Chain ${origin.id} is partially disabled: amounts worth more than ${formatUnits(origin.partialDisableLimit, origin.nativeCurrency.decimals)} ${origin.nativeCurrency.symbol} are not accepted`,
    );
  }
  const outNative = convert(
    pricing.amountOut,
    { decimals: currencyOut.decimals, price: prices.priceOut },
    { decimals: destination.nativeCurrency.decimals, price: prices.destinationNativePrice },
  );
  if (destination.partialDisableLimit > 0n && outNative > destination.partialDisableLimit) {
    throw new GatewayError(
      'CHAIN_DISABLED',
      `Chain ${destination.id} is partially disabled: amounts worth more than ${formatUnits(destination.partialDisableLimit, destination.nativeCurrency.decimals)} ${destination.nativeCurrency.symbol} are not delivered`,
    );
  }
  if (availableOut < pricing.amountOut) {
    throw new GatewayError(
      'INSUFFICIENT_LIQUIDITY',
      `The solver cannot deliver ${formatUnits(pricing.amountOut, currencyOut.decimals)} ${currencyOut.symbol} on chain ${destination.id} right now (it has ${formatUnits(availableOut > 0n ? availableOut : 0n, currencyOut.decimals)} available, not committed to fills in flight); try a smaller amount`,
      {
        data: `available=${availableOut}`,
      },
    );
  }
  if (currencyOut.address === zeroAddress) {
    const callValue = route.calls.reduce((sum, call) => sum + call.value, 0n);
    if (callValue > pricing.amountOut) {
      throw new GatewayError(
        'INVALID_EXTRA_TXS',
        `The calls send ${formatUnits(callValue, currencyOut.decimals)} ${currencyOut.symbol} in total, more than the ${formatUnits(pricing.amountOut, currencyOut.decimals)} ${currencyOut.symbol} the fill delivers`,
      );
    }
  }
  const maxFees = (pricing.amountIn * BigInt(ctx.config.quote.maxPriceImpactBps)) / 10_000n;
  if (params.overridePriceImpact !== true && pricing.fees.userPays > maxFees) {
    throw new GatewayError(
      'SWAP_IMPACT_TOO_HIGH',
      `Fees would take ${formatBps(pricing.fees.userPays, pricing.amountIn)} of the input, above the ${ctx.config.quote.maxPriceImpactBps / 100}% limit; send a larger amount or set overridePriceImpact`,
    );
  }
}

const formatMicros = (micros: bigint): string => formatUnits(micros, 6);
const formatBps = (part: bigint, whole: bigint): string => `${formatUnits((part * 10_000n) / whole, 2)}%`;

const THIRTY_DAYS_MS = 30 * 24 * 3_600_000;
const volumeCaches = new WeakMap<MarketData, TtlCache<string, bigint>>();

/** Trailing 30-day volume of an eligible key (cached a minute, renewed in the background after half a minute); 0 for callers that cannot earn a share. */
function trailingVolume(ctx: CoreContext, caller: Caller): Promise<bigint> {
  const key = caller.apiKey;
  if (key === null || !key.revenueShareEligible) return Promise.resolve(0n);
  let cache = volumeCaches.get(ctx.market);
  if (cache === undefined) {
    cache = createTtlCache<string, bigint>(60_000, { now: ctx.now, refreshAfterMs: 30_000 });
    volumeCaches.set(ctx.market, cache);
  }
  return cache.get(key.id, () => sumApiKeyVolume(ctx.db, key.id, ctx.now() - THIRTY_DAYS_MS));
}

/** A JSON copy (bigints as decimal strings) for a jsonb column. */
const jsonSafe = (value: object): JsonObject => jsonify(value) as JsonObject;

/**
 * The fee breakdown as stored with the request (`fees_quoted`): the engine's breakdown with the components' USD
 * values, less `executionUsdMicros`, which is `usdMicros.execution` again (`parseStoredFees` reads the latter).
 */
function storedFeesOf(pricing: Pricing): JsonObject {
  const { executionUsdMicros: _sameAsUsdExecution, ...fees } = pricing.fees;
  return jsonSafe({ ...fees, usdMicros: { ...pricing.usd, swapWithImpact: -swapImpactUsdMicros(pricing) } });
}

/**
 * A route through a chain the start-up checks found the solver cannot serve, or delivering a token it has not
 * approved for fills there, is refused before it is priced: its deposit could never be filled.
 */
function refuseUnservedRoute(ctx: CoreContext, route: ResolvedRoute): void {
  const status = ctx.chainStatus;
  if (status === undefined) return;
  for (const [side, chain] of [
    ['origin', route.origin],
    ['destination', route.destination],
  ] as const) {
    const reason = status.chainBlocked(chain.id);
    if (reason !== null) {
      throw new GatewayError(
        'CHAIN_DISABLED',
        `The ${side} chain ${chain.id} (${chain.displayName}) is out of service: the solver's start-up check failed (${reason})`,
      );
    }
  }
  const { destination, currencyOut } = route;
  if (currencyOut.address === zeroAddress) return;
  const reason = status.tokenBlocked(destination.id, currencyOut.address);
  if (reason !== null) {
    throw new GatewayError(
      'ROUTE_TEMPORARILY_RESTRICTED',
      `The solver cannot deliver ${currencyOut.symbol} on chain ${destination.id} (${destination.displayName}) now: ${reason}`,
    );
  }
}
