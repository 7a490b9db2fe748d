/**
 * The solver's inventory as a swap source with its risk bounded: it never sells an output for less than it could buy
 * it back for in the destination's pools, and never sells more than a configured USD size per swap.
 *
 * The buy-back: the input, once it is the solver's, is the same asset on the destination (ETH → the chain's WETH,
 * USDC → its USDC), or failing that a hub (WETH, USDC) at the oracle's price; what the pools would pay for that
 * amount in the output (exact pool math on the state in memory, every source, direct or through a hub) bounds the
 * quote's output. A 1 ETH swap stays at the oracle's price less fees; a 500 ETH swap into a shallow pool pays what
 * the pool would, its price impact included, and shows it as swap impact.
 */
import { zeroAddress, type Address } from 'viem';
import type { ChainConfig, CurrencyConfig } from '../chains/types.js';
import { DEX_HUB_SYMBOLS } from '../chains/types.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { convert, type PricedCurrency, type UsdPrice } from '../market.js';
import type { ResolvedRoute } from '../vocabulary/route.js';
import { priceRoute, rescale, type InventoryCap, type Pricing, type PricingParameters } from './pricing.js';

/** Largest swap (USD value of its input) the inventory sells when the config names none: USD 250,000. */
export const DEFAULT_MAX_INVENTORY_SWAP_USD_MICROS = 250_000n * 1_000_000n;

/** The token the destination's pools trade for the input: the same asset there, else a hub (priced at the oracle). */
interface PoolInput {
  token: Address;
  decimals: number;
  /** Absent: the same asset (rescaled by decimals); present: a hub, converted at the oracle's prices. */
  price?: UsdPrice;
}

/** The destination's ERC-20 for `currencyIn`'s asset: its own group, native ETH as the chain's WETH. */
function sameAssetOnDestination(destination: ChainConfig, currencyIn: CurrencyConfig): CurrencyConfig | undefined {
  const erc20s = destination.currencies.filter((currency) => currency.address !== zeroAddress);
  if (currencyIn.address === zeroAddress || currencyIn.symbol.toUpperCase() === 'WETH') {
    if (currencyIn.address === zeroAddress && currencyIn.id !== destination.nativeCurrency.id) return undefined;
    return erc20s.find((currency) => currency.symbol.toUpperCase() === 'WETH');
  }
  return erc20s.find((currency) => currency.id === currencyIn.id);
}

/**
 * The cap of a swap sold from inventory on `route`, from the pool state in memory (a fill re-reads it first);
 * undefined when the route is same-asset, the destination has no pools, or no pool token stands
 * for the input.
 */
export async function inventoryCapFor(
  ctx: CoreContext,
  route: ResolvedRoute,
  prices: { priceIn: UsdPrice },
): Promise<InventoryCap | undefined> {
  const dex = ctx.dex;
  const { destination, currencyIn, currencyOut } = route;
  if (route.sameAsset || dex === undefined || !dex.chainIds().includes(destination.id)) return undefined;
  // Native ETH out is bought back as the chain's WETH (unwrapped 1:1).
  const tokenOut =
    currencyOut.address !== zeroAddress
      ? currencyOut.address
      : destination.nativeCurrency.symbol.toUpperCase() === 'ETH'
        ? destination.currencies.find((c) => c.address !== zeroAddress && c.symbol.toUpperCase() === 'WETH')?.address
        : undefined;
  if (tokenOut === undefined) return undefined;
  const same = sameAssetOnDestination(destination, currencyIn);
  let input: PoolInput | undefined;
  if (same !== undefined) input = { token: same.address, decimals: same.decimals };
  else {
    const hub = destination.currencies.find(
      (currency) =>
        currency.address !== zeroAddress &&
        DEX_HUB_SYMBOLS.includes(currency.symbol.toUpperCase()) &&
        currency.address.toLowerCase() !== tokenOut.toLowerCase(),
    );
    if (hub !== undefined)
      input = { token: hub.address, decimals: hub.decimals, price: await ctx.market.usdPrice(destination.id, hub) };
  }
  if (input === undefined || input.token.toLowerCase() === tokenOut.toLowerCase()) return undefined;
  const from: PricedCurrency = { decimals: currencyIn.decimals, price: prices.priceIn };
  const toPool = (net: bigint): bigint =>
    input.price === undefined
      ? rescale(net, currencyIn.decimals, input.decimals, 'down')
      : convert(net, from, { decimals: input.decimals, price: input.price }, 'down');
  const fromPool = (amount: bigint): bigint =>
    input.price === undefined
      ? rescale(amount, input.decimals, currencyIn.decimals, 'up')
      : convert(amount, { decimals: input.decimals, price: input.price }, from, 'up');
  const base = { chainId: destination.id, tokenIn: input.token, tokenOut };
  if (dex.state(destination.id) === undefined) return undefined;
  // No pool path between the two at all (a token only the solver trades): nothing to buy back through, no cap.
  const probe = dex.quoteExactIn({ ...base, amountIn: 10n ** BigInt(Math.max(0, input.decimals - 3)) });
  if (!probe.ok && probe.shortfall === 'no-pool') return undefined;
  return {
    outFor(netIn) {
      const amountIn = toPool(netIn);
      if (amountIn <= 0n) return 0n;
      const result = dex.quoteExactIn({ ...base, amountIn });
      return result.ok ? result.route.amountOut : undefined;
    },
    inFor(amountOut) {
      const result = dex.quoteExactOut({ ...base, amountOut });
      return result.ok ? fromPool(result.route.amountIn) : undefined;
    },
  };
}

/** The largest swap the inventory sells (micro-USD of its input). */
export const maxInventorySwapUsdMicros = (ctx: CoreContext): bigint =>
  ctx.config.quote.maxInventorySwapUsdMicros ?? DEFAULT_MAX_INVENTORY_SWAP_USD_MICROS;

/**
 * A swap sold from the solver's inventory, priced: `priceRoute` with the pools' buy-back price as a cap (built here
 * unless the snapshot carries one). Same-asset routes are priced as they always are. What the inventory refuses
 * (too large, or more than the pools could buy back) is `checkInventoryLimits`'s to say, after the checks of the
 * solver's balance.
 */
export async function inventoryPricing(ctx: CoreContext, parameters: PricingParameters): Promise<Pricing> {
  const { route, market } = parameters;
  const inventoryCap = market.inventoryCap ?? (await inventoryCapFor(ctx, route, market));
  return priceRoute(inventoryCap === undefined ? parameters : { ...parameters, market: { ...market, inventoryCap } });
}

/**
 * What the inventory would quote for a swap, as a source another one (a DEX route) compares its output with:
 * `inventoryPricing`, refused where `checkInventoryLimits` refuses it.
 */
export async function inventoryQuote(ctx: CoreContext, parameters: PricingParameters): Promise<Pricing> {
  const pricing = await inventoryPricing(ctx, parameters);
  checkInventoryLimits(ctx, parameters.route, pricing);
  return pricing;
}

/**
 * Refuses a swap from inventory worth more than the size cap (`AMOUNT_TOO_HIGH`), or one the destination's pools
 * could not buy back (`INSUFFICIENT_LIQUIDITY`); same-asset routes pass.
 */
export function checkInventoryLimits(ctx: CoreContext, route: ResolvedRoute, pricing: Pricing): void {
  if (route.sameAsset) return;
  const cap = maxInventorySwapUsdMicros(ctx);
  if (pricing.usd.in > cap)
    throw new GatewayError(
      'AMOUNT_TOO_HIGH',
      `Swaps from the solver's inventory are limited to USD ${formatUsd(cap)} each; this ${route.currencyIn.symbol} → ` +
        `${route.currencyOut.symbol} swap is worth USD ${formatUsd(pricing.usd.in)}; send a smaller amount`,
      { data: `maxInventorySwapUsd=${formatUsd(cap)}` },
    );
  if (pricing.inventoryCapShort === true)
    throw new GatewayError(
      'INSUFFICIENT_LIQUIDITY',
      `The solver's inventory does not sell ${route.currencyOut.symbol} on chain ${route.destination.id} for this ` +
        `amount: the pools there could not buy it back; send a smaller amount`,
    );
}

const formatUsd = (micros: bigint): string => {
  const whole = micros / 1_000_000n;
  const cents = (micros % 1_000_000n) / 10_000n;
  return cents === 0n ? whole.toString() : `${whole}.${cents.toString().padStart(2, '0')}`;
};
