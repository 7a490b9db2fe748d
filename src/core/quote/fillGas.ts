import { zeroAddress, type Address, type Hex } from 'viem';
import { createTtlCache, type TtlCache } from '../cache.js';
import type { ChainConfig } from '../chains/types.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { callsRevert } from '../fill/callsRevert.js';
import { fillTransaction } from '../fill/fillTransaction.js';
import { convert, type MarketData } from '../market.js';
import { rescale, type MarketSnapshot } from './pricing.js';
import type { ResolvedRoute } from './resolve.js';
import type { QuoteParameters } from './types.js';

/** Payment fill estimates per market (one per gateway), per destination chain and currency, for a minute (renewed in the background after half a minute, so quotes do not wait for it). */
const paymentEstimates = new WeakMap<MarketData, TtlCache<string, bigint>>();

/** A recipient that has never held anything: paying a fresh account costs most, so the estimate covers every recipient. */
const FRESH_RECIPIENT: Address = '0x000000000000000000000000000000000000f111';
const ESTIMATE_ID: Hex = `0x${'ee'.repeat(32)}`;

/**
 * Gas of a plain payment fill on `destination` in `currency`: a representative fill (one smallest unit to a
 * fresh recipient) estimated on the chain, re-estimated every minute. Every payment fill of the currency
 * costs the same, so quotes share the estimate instead of simulating each.
 */
export function paymentFillGas(ctx: CoreContext, destination: ChainConfig, currency: Address): Promise<bigint> {
  let cache = paymentEstimates.get(ctx.market);
  if (cache === undefined) {
    cache = createTtlCache<string, bigint>(60_000, { now: ctx.now, refreshAfterMs: 30_000 });
    paymentEstimates.set(ctx.market, cache);
  }
  return cache.get(`${destination.id}:${currency.toLowerCase()}`, () => {
    const fill = fillTransaction({
      requestId: ESTIMATE_ID,
      contracts: destination.contracts,
      solver: ctx.solver.address,
      recipient: FRESH_RECIPIENT,
      currency,
      amount: 1n,
    });
    return ctx.market.estimateGas(destination.id, { from: ctx.solver.address, ...fill });
  });
}

/**
 * Gas of the real fill with the user's calls, which also simulates them: a call that reverts fails the
 * quote with `DESTINATION_TX_FAILED` and the revert reason. The delivered amount is not known before the
 * fees, so the simulation delivers its upper bound (the input converted without fees, at most the solver's
 * balance); gas hardly depends on it.
 */
export function callsFillGas(
  ctx: CoreContext,
  route: ResolvedRoute,
  params: Pick<QuoteParameters, 'amount' | 'tradeType'>,
  prices: Pick<MarketSnapshot, 'priceIn' | 'priceOut'>,
  solverBalance: bigint,
): Promise<bigint> {
  const { currencyIn, currencyOut } = route;
  let amount = params.amount;
  if (params.tradeType === 'EXACT_INPUT') {
    amount = route.sameAsset
      ? rescale(params.amount, currencyIn.decimals, currencyOut.decimals, 'down')
      : convert(
          params.amount,
          { decimals: currencyIn.decimals, price: prices.priceIn },
          { decimals: currencyOut.decimals, price: prices.priceOut },
        );
    if (amount > solverBalance) amount = solverBalance;
  }
  // Calls can spend at most what the fill delivers; more would only revert in the simulation, unexplained.
  const callValue = route.calls.reduce((sum, call) => sum + call.value, 0n);
  if (currencyOut.address === zeroAddress && callValue > amount) {
    throw new GatewayError(
      'INVALID_EXTRA_TXS',
      `The calls send ${callValue} in total, more than the ${amount} the fill can deliver`,
    );
  }
  const fill = fillTransaction({
    requestId: ESTIMATE_ID,
    contracts: route.destination.contracts,
    solver: ctx.solver.address,
    recipient: route.recipient,
    currency: currencyOut.address,
    amount,
    calls: route.calls,
  });
  return ctx.market.estimateGas(route.destination.id, { from: ctx.solver.address, ...fill }).catch((error: unknown) => {
    throw callsRevert(route.calls, route.destination.displayName, error);
  });
}
