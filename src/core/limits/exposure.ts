import { formatUnits } from 'viem';
import { listFillOutflow } from '../../store/outflow.repository.js';
import { createTtlCache, type TtlCache } from '../cache.js';
import type { ExposureLimits } from '../chains/types.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { MarketData } from '../market.js';
import type { ResolvedRoute } from '../vocabulary/route.js';

/**
 * Exposure limits: how much one order and one window of fills may put at risk. Quotes check
 * both here; the solver checks the outflow again before each fill (`src/core/solver/fillGate.ts`) and holds fills
 * that would exceed it instead of refusing them.
 */

/** The largest order (micro-USD of its input) on a route: the first matching `routes` entry, else the default. */
function maxOrderUsdMicros(
  limits: ExposureLimits,
  route: Pick<ResolvedRoute, 'origin' | 'destination' | 'currencyIn' | 'currencyOut'>,
): bigint {
  const match = limits.routes.find(
    (entry) =>
      (entry.originChainId === undefined || entry.originChainId === route.origin.id) &&
      (entry.destinationChainId === undefined || entry.destinationChainId === route.destination.id) &&
      (entry.originCurrency === undefined || entry.originCurrency === route.currencyIn.id) &&
      (entry.destinationCurrency === undefined || entry.destinationCurrency === route.currencyOut.id),
  );
  return match?.maxOrderUsdMicros ?? limits.maxOrderUsdMicros;
}

/** Most USD (micro) the solver's fills may deliver on `chainId` within the outflow window. */
export const maxOutflowUsdMicros = (limits: ExposureLimits, chainId: number): bigint =>
  limits.chainOutflowUsdMicros[chainId] ?? limits.maxOutflowUsdMicros;

/**
 * Refuses a quote over the route's order limit (`AMOUNT_TOO_HIGH`), or one whose output would take the
 * destination chain's fills in the current window over the outflow limit (`ROUTE_TEMPORARILY_RESTRICTED`).
 * `usdIn` / `usdOut` are the order's values in micro-USD.
 */
export async function checkQuoteExposure(
  ctx: CoreContext,
  route: ResolvedRoute,
  usd: { in: bigint; out: bigint },
): Promise<void> {
  const limits = ctx.config.quote.exposure;
  const maxOrder = maxOrderUsdMicros(limits, route);
  if (usd.in > maxOrder) {
    throw new GatewayError(
      'AMOUNT_TOO_HIGH',
      `Orders on this route are limited to USD ${formatUsd(maxOrder)}; this one is worth USD ${formatUsd(usd.in)}`,
      {
        data: `maxOrderUsd=${formatUsd(maxOrder)}`,
      },
    );
  }
  const maxOutflow = maxOutflowUsdMicros(limits, route.destination.id);
  const outflow = (await recentOutflow(ctx)).get(route.destination.id) ?? 0n;
  if (outflow + usd.out > maxOutflow) {
    throw new GatewayError(
      'ROUTE_TEMPORARILY_RESTRICTED',
      `The solver's fills on chain ${route.destination.id} are limited to USD ${formatUsd(maxOutflow)} per ${limits.outflowWindowSeconds} s and USD ${formatUsd(outflow)} is used; try a smaller amount or later`,
      { data: `availableUsd=${formatUsd(outflow >= maxOutflow ? 0n : maxOutflow - outflow)}` },
    );
  }
}

const outflowCaches = new WeakMap<MarketData, TtlCache<'all', Map<number, bigint>>>();

/** The USD of fills per destination chain within the window, read at most about once a second per gateway. */
function recentOutflow(ctx: CoreContext): Promise<Map<number, bigint>> {
  let cache = outflowCaches.get(ctx.market);
  if (cache === undefined) {
    cache = createTtlCache<'all', Map<number, bigint>>(1_000, { now: ctx.now, refreshAfterMs: 500 });
    outflowCaches.set(ctx.market, cache);
  }
  return cache.get('all', async () => {
    const since = ctx.now() - ctx.config.quote.exposure.outflowWindowSeconds * 1_000;
    const sums = new Map<number, bigint>();
    for (const fill of await listFillOutflow(ctx.db, since))
      sums.set(fill.chainId, (sums.get(fill.chainId) ?? 0n) + fill.usdMicros);
    return sums;
  });
}

const formatUsd = (micros: bigint): string => formatUnits(micros, 6);
