import { zeroAddress, type Address } from 'viem';
import { dexLegsOf, type DexLegRecord } from '../dex/legRecord.js';
import { classifyRoute } from '../fees/classifyRoute.js';
import { repriceDexLeg } from './repriceDexLeg.js';
import type { RequestRecord } from '../../records/request.js';
import type { JsonObject } from '../../records/json.js';
import { storedAmount } from '../json.js';
import { requireChain, requireCurrency } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { isGatewayError } from '../errors.js';
import type { RouteClass } from '../vocabulary/route.js';
import { NEVER_SPONSORED } from '../fees/sponsorship.js';
import { toUsdMicros } from '../market.js';
import { fillExecutionFee, GAS_TOPUP_FILL_GAS, priceRoute } from '../quote/pricing.js';
import { inventoryCapFor } from '../quote/inventoryQuote.js';
import type { ResolvedRoute } from '../vocabulary/route.js';
import type { QuoteDetails } from '../quote/types.js';

export type RepriceAtFillReturnType =
  | { ok: true }
  /** The order is no longer worth filling at today's prices: refund it with `SLIPPAGE`. */
  | { ok: false; failReason: 'SLIPPAGE'; details: JsonObject };

/**
 * The fill-time price re-check, as the reference does it: a quote is not a free option on
 * the solver's inventory. Just before a fill, the order is priced again with the quote's own pricing code
 * (`priceRoute`) at the current oracle prices and gas price, as an EXACT_INPUT quote of what the user paid, with
 * the order's app fees and sponsorship.
 *
 * - Swaps (and calls with a swap): when what the gateway would quote now is below the order's floor, the
 *   request is refunded with `SLIPPAGE`. The floor is the order's minimum output (`minAmountOut`); for
 *   EXACT_OUTPUT orders, whose minimum is the output itself, the quote's slippage tolerance is taken off it, so
 *   a gas-price tick does not refund them.
 * - Same-asset routes (bridge, wrap, unwrap, send) are converted 1:1 and only the gas can move: the execution
 *   fee the order charged (at the current price of the input) must still cover the fill's gas at the current gas
 *   and native prices (the USD 0.02 flat part is the margin that absorbs a rise).
 * - Swaps sold from inventory where the destination has pools: the same cap as the quote (never more than the
 *   pools would pay for the input, `inventoryQuote.ts`), on the pools' state read again now; the size cap is not
 *   checked again (the order was accepted at its size).
 * - Surplus: the fill always delivers the quoted output, never more. A move in the user's favour stays with the
 *   solver, as a move against it within the tolerance is the solver's to bear.
 *
 * Throws what the market throws: `PRICE_FETCH_FAILED` when a price is stale or off its peg, RPC errors. The
 * caller holds the fill until prices can be read again (see `fillGate.ts`).
 */
export async function repriceAtFill(ctx: CoreContext, request: RequestRecord): Promise<RepriceAtFillReturnType> {
  const leg = dexLegsOf(request.quote).destination;
  if (leg !== undefined) return repriceWithDexLeg(ctx, request, leg);
  return repriceOrder(ctx, request);
}

/**
 * A request whose output is bought through the destination's pools: the swap on live pool state must still reach
 * the order's minimum, and the currency the fill spends into the pools must still be covered by what the user paid
 * (checked as an order paying that currency: 1:1 routes by their gas, oracle conversions by their price).
 */
async function repriceWithDexLeg(
  ctx: CoreContext,
  request: RequestRecord,
  leg: DexLegRecord,
): Promise<RepriceAtFillReturnType> {
  const pools = await repriceDexLeg(ctx, request, leg);
  if (!pools.ok)
    return slippage(pools.why, {
      quotedAmountOut: request.amountOut.toString(),
      minimumAmountOut: request.minAmountOut.toString(),
      amountOutNow: pools.amountOutNow?.toString() ?? '0',
      dexBlockNumber: ctx.dex?.state(leg.chainId)?.blockNumber.toString() ?? '',
    });
  const origin = requireChain(ctx, request.originChainId);
  const destination = requireChain(ctx, request.destinationChainId);
  const currencyIn = requireCurrency(origin, request.originCurrency);
  const entry = requireCurrency(destination, leg.nativeIn ? zeroAddress : leg.tokenIn);
  const oneToOne =
    classifyRoute({
      origin: { chainId: origin.id, currencyId: currencyIn.id, symbol: currencyIn.symbol },
      destination: { chainId: destination.id, currencyId: entry.id, symbol: entry.symbol },
      operation: 'swap',
    }) === 'bridge';
  const entryAmount = BigInt(leg.amountIn);
  const slippageBps = Number(request.quote.slippageBps ?? 0);
  const fees = request.feesQuoted;
  return repriceOrder(
    ctx,
    {
      ...request,
      destinationCurrency: entry.address,
      amountOut: entryAmount,
      minAmountOut: (entryAmount * BigInt(10_000 - slippageBps)) / 10_000n,
      tradeType: 'EXACT_INPUT',
      feesQuoted: oneToOne ? { ...fees, routeClass: 'bridge' } : fees,
    },
    // The swap fee charged: the conversion's into the entry currency, not the user's pair's.
    typeof fees.swapBps === 'number' ? fees.swapBps : undefined,
  );
}

async function repriceOrder(
  ctx: CoreContext,
  request: RequestRecord,
  swapBps?: number,
): Promise<RepriceAtFillReturnType> {
  const fees = request.feesQuoted;
  const origin = requireChain(ctx, request.originChainId);
  const destination = requireChain(ctx, request.destinationChainId);
  const currencyIn = requireCurrency(origin, request.originCurrency);
  const currencyOut = requireCurrency(destination, request.destinationCurrency);
  const routeClass = fees.routeClass as RouteClass;
  const sameAsset = routeClass === 'bridge';
  const parts = fees.executionParts as { gasUnits: string; l1FeeWei?: string; gasTopupMicros?: string } | undefined;
  // A gas top-up's value is in the execution fee (`topupGas`), but it pays for the native sent, not for gas.
  const gasTopupMicros = BigInt(parts?.gasTopupMicros ?? '0');
  const gasUnits = BigInt(parts?.gasUnits ?? '0');
  // The L1 data fee quoted (OP-stack destinations): its bytes do not change, and the L1 base fee is not re-read.
  const l1FeeWei = BigInt(parts?.l1FeeWei ?? '0');

  const [priceIn, priceOut, destinationNativePrice, destinationGasPrice] = await Promise.all([
    ctx.market.usdPrice(origin.id, currencyIn),
    sameAsset ? undefined : ctx.market.usdPrice(destination.id, currencyOut),
    ctx.market.usdPrice(destination.id, destination.nativeCurrency),
    ctx.market.gasPrice(destination.id),
  ]);

  if (sameAsset) {
    const charged = toUsdMicros(storedAmount(fees.execution), currencyIn.decimals, priceIn) - gasTopupMicros;
    const gasNow = fillExecutionFee(
      destination,
      { units: gasUnits, priceWei: destinationGasPrice, l1FeeWei },
      destinationNativePrice,
    ).destinationMicros;
    if (charged >= gasNow) return { ok: true };
    return slippage(
      `The fill's gas now costs ${gasNow} micro-USD, more than the ${charged} micro-USD execution fee the order charged`,
      {
        executionFeeUsdMicros: charged.toString(),
        fillGasUsdMicros: gasNow.toString(),
      },
    );
  }

  const slippageBps = Number(request.quote.slippageBps ?? 0);
  const floor =
    request.tradeType === 'EXACT_OUTPUT'
      ? (request.amountOut * BigInt(10_000 - slippageBps)) / 10_000n
      : request.minAmountOut;
  const route: ResolvedRoute = {
    origin,
    destination,
    currencyIn,
    currencyOut,
    user: request.user as Address,
    recipient: request.recipient as Address,
    refundTo: request.refundTo as Address,
    operation: request.operation as QuoteDetails['operation'],
    routeClass,
    sameAsset,
    sameChain: origin.id === destination.id,
    calls: [],
    slippageBps,
    gasTopupUsdMicros: gasTopupMicros,
  };
  const appFees = ((fees.appFees ?? []) as Array<{ recipient: string; feeBps: number }>).map((entry) => ({
    recipient: entry.recipient,
    fee: String(entry.feeBps),
  }));
  // A request quoted while app fees could be sponsored is re-priced with the user paying them, as it is quoted now.
  const sponsored = ((fees.sponsoredComponents ?? []) as string[]).filter(
    (component) => !(NEVER_SPONSORED as readonly string[]).includes(component),
  );
  const cap = ((request.quote.feeSponsorship as JsonObject | undefined)?.quoted as JsonObject | undefined)
    ?.maxSubsidizationAmount;
  // The inventory's cap at the destination pools' price, as the quote applied it, on their live state.
  if (ctx.dex?.chainIds().includes(destination.id) === true) await ctx.dex.refresh(destination.id);
  const inventoryCap = await inventoryCapFor(ctx, route, { priceIn });
  let amountOutNow: bigint;
  try {
    const now = priceRoute({
      route,
      params: {
        amount: request.amountIn,
        tradeType: 'EXACT_INPUT',
        appFees,
        subsidizeFees: sponsored.length > 0,
        ...(sponsored.length > 0 ? { sponsoredFeeComponents: sponsored } : {}),
        ...(typeof cap === 'string' ? { maxSubsidizationAmount: BigInt(cap) } : {}),
      },
      market: {
        priceIn,
        priceOut: priceOut!,
        destinationNativePrice,
        destinationGasPrice,
        // The stored units include the top-up's call, which pricing adds again.
        fillGasUnits: gasTopupMicros > 0n ? gasUnits - GAS_TOPUP_FILL_GAS : gasUnits,
        fillL1FeeWei: l1FeeWei,
        ...(inventoryCap === undefined ? {} : { inventoryCap }),
      },
      settings:
        swapBps === undefined
          ? ctx.config.quote
          : { ...ctx.config.quote, swapFeeBps: { ...ctx.config.quote.swapFeeBps, [routeClass]: swapBps } },
      caller: {
        apiKey:
          sponsored.length > 0
            ? {
                id: request.apiKeyId ?? '',
                sponsorshipEnabled: true,
                revenueShareEligible: false,
                fastFillLimitUsdMicros: null,
              }
            : null,
      },
      trailingVolumeUsdMicros: 0n,
    });
    // Pools that could no longer buy the output back: the inventory would not sell it now.
    amountOutNow = now.inventoryCapShort === true ? 0n : now.amountOut;
  } catch (error) {
    // Fees now take the whole input: nothing would be quoted at all.
    if (isGatewayError(error) && error.code === 'AMOUNT_TOO_LOW') amountOutNow = 0n;
    else throw error;
  }
  if (amountOutNow >= floor) return { ok: true };
  return slippage(
    `At current prices the order would deliver ${amountOutNow}, below its minimum of ${floor} (quoted ${request.amountOut})`,
    {
      quotedAmountOut: request.amountOut.toString(),
      minimumAmountOut: floor.toString(),
      amountOutNow: amountOutNow.toString(),
    },
  );
}

const slippage = (message: string, numbers: Record<string, string>): RepriceAtFillReturnType => ({
  ok: false,
  failReason: 'SLIPPAGE',
  details: { message, ...numbers },
});
