/**
 * Same-chain swaps through a DEX: the user's own transactions (an approval of the router when needed, then one
 * router call paying the recipient), no deposit and no solver fill. The gateway only quotes, stores the request
 * and follows the router transaction to its status (`src/core/solver/sameChainSwap.ts`).
 *
 * Which source serves a same-chain swap: the DEX when the solver cannot (a currency it does not hold), and between
 * currencies it does hold, whichever gives the user more (more output for an exact input, less input for an
 * output), among the sources `includedSwapSources` / `excludedSwapSources` leave.
 *
 * Fees: the gateway sends nothing, so there is no execution fee, and it is not in the transaction's path, so it
 * takes no platform fee; the pools' fees and price impact are the swap impact. App fees, fee sponsorship,
 * permits, deposit addresses and gas top-ups all need a deposit: such a quote goes through the solver's inventory
 * when it can, and is refused with the reason otherwise.
 */
import { concat, zeroAddress, type Address, type Hex } from 'viem';
import type { ChainConfig, CurrencyConfig } from '../chains/types.js';
import { swapSourcesOf, UNISWAP_V2_SOURCE, UNISWAP_V3_SOURCE, SWAP_SOURCE } from '../chains/dexSources.js';
import type { CoreContext } from '../context.js';
import { dexLegRecord, type DexLegRecord } from '../dex/legRecord.js';
import type { DexSource } from '../dex/poolState.js';
import type { DexQuote, DexRoute } from '../dex/route.js';
import { routerSwapCall } from '../dex/routerCalls.js';
import { GatewayError, isGatewayError } from '../errors.js';
import type { ResolvedRoute } from '../vocabulary/route.js';
import { resolveRoute } from './resolve.js';
import type { QuoteParameters } from './types.js';

/** A same-chain swap the DEX serves: the route, the DEX route and what the router call must deliver at least. */
export interface SameChainDexPlan {
  route: ResolvedRoute;
  dex: DexRoute;
  /** The chain's WETH when the input or output is native (the route runs through it). */
  nativeIn: boolean;
  nativeOut: boolean;
  minAmountOut: bigint;
  leg: DexLegRecord;
}

/** What the solver's inventory would give for the same request (null when it cannot serve it). */
export type InventoryOffer = () => Promise<{ amountIn: bigint; amountOut: bigint } | null>;

/**
 * The DEX plan of a same-chain swap, or null when the request is not one, or is better served (or only served) by
 * the solver's inventory through a deposit.
 *
 * @throws `NO_SWAP_ROUTES_FOUND` when no allowed source can serve it; `UNSUPPORTED_ROUTE` when it needs the DEX
 *   but asks for something only a deposit can do (app fees, sponsorship, a permit, a deposit address, a top-up).
 */
export async function planSameChainDex(
  ctx: CoreContext,
  params: QuoteParameters,
  inventory: InventoryOffer,
): Promise<SameChainDexPlan | null> {
  if (params.originChainId !== params.destinationChainId) return null;
  const route = resolveRoute(ctx, params);
  if (route.operation !== 'swap') return null;
  if (params.amount === 0n) throw new GatewayError('AMOUNT_TOO_LOW', 'Amount must be greater than zero');
  const chain = route.origin;
  const { inventoryAllowed, dexSources } = sourcesFor(params, route);
  const refuse = () => noRoute(route, dexSources, inventoryAllowed);
  const noDex =
    dexSources.length === 0 || ctx.dex === undefined || !ctx.dex.chainIds().includes(chain.id) || !dexTokens(route);
  if (noDex) {
    if (inventoryAllowed) return null;
    throw refuse();
  }
  const needsDeposit = depositOnlyOption(params);
  if (needsDeposit !== null) {
    if (inventoryAllowed) return null;
    throw new GatewayError(
      'UNSUPPORTED_ROUTE',
      `${route.currencyIn.symbol} to ${route.currencyOut.symbol} on chain ${chain.id} is a swap the user sends through the chain's DEX, with no deposit to the gateway, so ${needsDeposit} cannot be applied; leave it out`,
      { data: needsDeposit },
    );
  }
  const dex = quoteDex(ctx, params, route, dexSources);
  if (!dex.ok) {
    if (inventoryAllowed) return null;
    if (dex.shortfall === 'insufficient-liquidity')
      throw new GatewayError(
        'INSUFFICIENT_LIQUIDITY',
        `The pools on chain ${chain.id} cannot swap that much ${route.currencyIn.symbol} for ${route.currencyOut.symbol}; try a smaller amount`,
      );
    throw refuse();
  }
  if (inventoryAllowed && !(await dexBeatsInventory(dex.route, params, inventory))) return null;
  const maxImpactBps = BigInt(ctx.config.quote.maxPriceImpactBps);
  if (params.overridePriceImpact !== true && dex.route.priceImpactBps > maxImpactBps)
    throw new GatewayError(
      'SWAP_IMPACT_TOO_HIGH',
      `The pools' fees and price impact would take ${Number(dex.route.priceImpactBps) / 100}% of the value, above the ${Number(maxImpactBps) / 100}% limit; send a smaller amount or set overridePriceImpact`,
    );
  return planOf(params, route, dex.route);
}

function planOf(params: QuoteParameters, route: ResolvedRoute, dex: DexRoute): SameChainDexPlan {
  const nativeIn = route.currencyIn.address === zeroAddress;
  const nativeOut = route.currencyOut.address === zeroAddress;
  // EXACT_OUTPUT delivers the amount asked or nothing; the others take the slippage tolerance off the quoted output.
  const minAmountOut =
    params.tradeType === 'EXACT_OUTPUT'
      ? params.amount
      : (dex.amountOut * BigInt(10_000 - route.slippageBps)) / 10_000n;
  const routerKind = route.origin.dex?.uniswapV3?.swapRouterKind ?? 'SwapRouter';
  return {
    route,
    dex,
    nativeIn,
    nativeOut,
    minAmountOut,
    leg: dexLegRecord(dex, { minAmountOut, nativeIn, nativeOut, routerKind }),
  };
}

/** The DEX's route: exact input as asked, or the input that buys the output, then that input's exact-input route. */
function quoteDex(ctx: CoreContext, params: QuoteParameters, route: ResolvedRoute, sources: DexSource[]): DexQuote {
  const book = ctx.dex!;
  const { tokenIn, tokenOut } = dexTokens(route)!;
  const base = { chainId: route.origin.id, tokenIn, tokenOut, sources };
  if (params.tradeType === 'EXACT_INPUT') return book.quoteExactIn({ ...base, amountIn: params.amount });
  const bought = book.quoteExactOut({ ...base, amountOut: params.amount });
  if (!bought.ok) return bought;
  // The router call is exact-input (what `routerSwapCall` builds): the input that buys the output, swapped along
  // the best route for it, delivers at least the output on the same state.
  const sold = book.quoteExactIn({ ...base, amountIn: bought.route.amountIn });
  if (sold.ok && sold.route.amountOut < params.amount) return bought;
  return sold;
}

async function dexBeatsInventory(dex: DexRoute, params: QuoteParameters, inventory: InventoryOffer): Promise<boolean> {
  let offer: Awaited<ReturnType<InventoryOffer>>;
  try {
    offer = await inventory();
  } catch (error) {
    if (isGatewayError(error)) return true;
    throw error;
  }
  if (offer === null) return true;
  return params.tradeType === 'EXACT_INPUT' ? dex.amountOut > offer.amountOut : dex.amountIn < offer.amountIn;
}

/** The tokens the pools trade for the route's currencies: native rides on the chain's WETH. */
export function dexTokens(route: ResolvedRoute): { tokenIn: Address; tokenOut: Address } | null {
  const weth = wethOf(route.origin);
  const tokenOf = (currency: CurrencyConfig) => (currency.address === zeroAddress ? weth : currency.address);
  const tokenIn = tokenOf(route.currencyIn);
  const tokenOut = tokenOf(route.currencyOut);
  if (tokenIn === undefined || tokenOut === undefined) return null;
  return { tokenIn, tokenOut };
}

function wethOf(chain: ChainConfig): Address | undefined {
  return chain.currencies.find((c) => c.symbol.toUpperCase() === 'WETH' && c.address !== zeroAddress)?.address;
}

/**
 * The sources a same-chain swap may use on its chain: those the chain has, in every inclusion list given, in no
 * exclusion list. The inventory also needs both currencies to be the solver's.
 */
function sourcesFor(
  params: QuoteParameters,
  route: ResolvedRoute,
): { inventoryAllowed: boolean; dexSources: DexSource[] } {
  const included = [params.includedSwapSources, params.includedOriginSwapSources, params.includedDestinationSwapSources]
    .filter((list): list is ReadonlyArray<string> => list !== undefined && list.length > 0)
    .map((list) => list.map((name) => name.toLowerCase()));
  const excluded = (params.excludedSwapSources ?? []).map((name) => name.toLowerCase());
  const allowed = swapSourcesOf(route.origin).filter(
    (source) => included.every((list) => list.includes(source)) && !excluded.includes(source),
  );
  return {
    inventoryAllowed: allowed.includes(SWAP_SOURCE) && route.currencyIn.solver && route.currencyOut.solver,
    // `forceSolverExecution` asks for the solver's fill (a deposit) instead of the user's own swap.
    dexSources: allowed.filter(
      (source): source is DexSource =>
        params.forceSolverExecution !== true && (source === UNISWAP_V3_SOURCE || source === UNISWAP_V2_SOURCE),
    ),
  };
}

function noRoute(route: ResolvedRoute, dexSources: DexSource[], inventoryAllowed: boolean): GatewayError {
  const sources = [...(inventoryAllowed ? [SWAP_SOURCE] : []), ...dexSources];
  return new GatewayError(
    'NO_SWAP_ROUTES_FOUND',
    `No swap route from ${route.currencyIn.symbol} to ${route.currencyOut.symbol} on chain ${route.origin.id} (${route.origin.displayName}) ${sources.length === 0 ? 'with no swap source left by includedSwapSources/excludedSwapSources' : `through ${sources.join(', ')}`}`,
  );
}

/** The first option set that only a deposit can honour, by its field name; null when none is. */
function depositOnlyOption(params: QuoteParameters): string | null {
  if ((params.appFees ?? []).some((fee) => fee.fee !== undefined && fee.fee !== '0')) return 'appFees';
  if (params.subsidizeFees === true) return 'subsidizeFees';
  if (params.usePermit === true) return 'usePermit';
  if (params.useDepositAddress === true) return 'useDepositAddress';
  if (params.topupGas === true) return 'topupGas';
  return null;
}

/**
 * The router call of the plan, paying the recipient, with the request id appended to its calldata: the routers
 * decode their arguments and ignore trailing bytes, so the transaction names its request (as a deposit's does)
 * and the gateway can tell a request's swap from any other.
 */
export function sameChainSwapCall(
  plan: SameChainDexPlan,
  requestId: Hex,
  deadline: bigint,
): { to: Address; data: Hex; value: bigint } {
  const call = routerSwapCall(plan.dex, {
    recipient: plan.route.recipient,
    amountOutMinimum: plan.minAmountOut,
    deadline,
    v3RouterKind: plan.leg.routerKind ?? 'SwapRouter',
    nativeIn: plan.nativeIn,
    nativeOut: plan.nativeOut,
  });
  return { ...call, data: concat([call.data, requestId]) };
}
