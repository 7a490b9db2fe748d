import { serializeTransaction, zeroAddress, type Address, type Hex } from 'viem';
import { createTtlCache, type TtlCache } from '../cache.js';
import type { ChainConfig } from '../chains/types.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { callsRevert } from '../fill/callsRevert.js';
import { fillTransaction } from '../fill/fillTransaction.js';
import { convert, type MarketData, type TransactionRequest } from '../market.js';
import { rescale, type MarketSnapshot } from './pricing.js';
import type { ResolvedRoute } from '../vocabulary/route.js';
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
  return cache.get(`${destination.id}:${currency.toLowerCase()}`, () =>
    ctx.market.estimateGas(destination.id, representativePaymentFill(ctx, destination, currency)),
  );
}

/** L1 data fees of payment fills, per market, destination chain and currency, for one destination block. */
const paymentL1Fees = new WeakMap<MarketData, TtlCache<string, bigint>>();

/**
 * The L1 data fee (wei) of a plain payment fill on `destination` in `currency`: on an OP-stack chain, the
 * GasPriceOracle's `getL1Fee` of the representative fill's bytes (`representativeTxBytes`), read again each
 * destination block (the L1 base fee moves with L1 blocks; the bytes never change) and renewed in the background
 * from half a block on, so quotes do not wait for it; 0 on other chains, without a read.
 */
export function paymentFillL1Fee(ctx: CoreContext, destination: ChainConfig, currency: Address): Promise<bigint> {
  if (destination.feeModel !== 'op-stack') return Promise.resolve(0n);
  let cache = paymentL1Fees.get(ctx.market);
  if (cache === undefined) {
    // One cache for every chain: the shortest block time of the configured OP-stack chains bounds its age.
    const oneBlock = Math.min(
      ...ctx.config.chains.filter((chain) => chain.feeModel === 'op-stack').map((chain) => chain.blockTime * 1_000),
    );
    cache = createTtlCache<string, bigint>(oneBlock, { now: ctx.now, refreshAfterMs: oneBlock / 2 });
    paymentL1Fees.set(ctx.market, cache);
  }
  return cache.get(`${destination.id}:${currency.toLowerCase()}`, () =>
    ctx.market.l1DataFee(
      destination.id,
      representativeTxBytes(destination, representativePaymentFill(ctx, destination, currency)),
    ),
  );
}

/** The representative payment fill whose gas and L1 data fee every payment fill of `currency` is priced at. */
export function representativePaymentFill(
  ctx: CoreContext,
  destination: ChainConfig,
  currency: Address,
): TransactionRequest {
  const fill = fillTransaction({
    requestId: ESTIMATE_ID,
    contracts: destination.contracts,
    solver: ctx.solver.address,
    recipient: FRESH_RECIPIENT,
    currency,
    amount: 1n,
  });
  return { from: ctx.solver.address, ...fill };
}

/**
 * Wide values for the fields of a fill transaction the quote does not know yet (the solver's nonce, the fee caps
 * and gas limit at sending): each takes at least as many bytes as a real fill's, so the L1 data fee of these bytes
 * is not below the real one. Up to 16.7 million nonces, 1,099 gwei fee caps and 4.29 billion gas.
 */
const REPRESENTATIVE_NONCE = 0xff_ff_ff;
const REPRESENTATIVE_FEE_CAP = 2n ** 40n - 1n;
const REPRESENTATIVE_GAS = 2n ** 32n - 1n;

/**
 * The bytes the GasPriceOracle's `getL1Fee` prices for a solver transaction `tx` (a fill, a refund) on
 * `destination`: the unsigned RLP encoding of the EIP-1559 transaction the solver would send (the oracle adds the
 * signature's bytes itself), with representative nonce, fee caps and gas limit.
 */
export function representativeTxBytes(
  destination: ChainConfig,
  tx: Pick<TransactionRequest, 'to' | 'data' | 'value'>,
): Hex {
  return serializeTransaction({
    type: 'eip1559',
    chainId: destination.id,
    nonce: REPRESENTATIVE_NONCE,
    gas: REPRESENTATIVE_GAS,
    maxFeePerGas: REPRESENTATIVE_FEE_CAP,
    maxPriorityFeePerGas: REPRESENTATIVE_FEE_CAP,
    to: tx.to,
    value: tx.value,
    data: tx.data,
  });
}

/**
 * Gas of the real fill with the user's calls, which also simulates them: a call that reverts fails the
 * quote with `DESTINATION_TX_FAILED` and the revert reason. The delivered amount is not known before the
 * fees, so the simulation delivers its upper bound (the input converted without fees, at most the solver's
 * balance); gas hardly depends on it. With it, on an OP-stack chain, the L1 data fee (wei) of its bytes.
 */
export function callsFillGas(
  ctx: CoreContext,
  route: ResolvedRoute,
  params: Pick<QuoteParameters, 'amount' | 'tradeType'>,
  prices: Pick<MarketSnapshot, 'priceIn' | 'priceOut'>,
  solverBalance: bigint,
): Promise<{ gasUnits: bigint; l1FeeWei: bigint }> {
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
  const gas = ctx.market.estimateGas(route.destination.id, { from: ctx.solver.address, ...fill });
  // On an OP-stack chain, the L1 data fee of these very bytes, read while the estimate runs: each quote's calls
  // differ, so this read is not shared.
  const l1Fee =
    route.destination.feeModel === 'op-stack'
      ? ctx.market.l1DataFee(route.destination.id, representativeTxBytes(route.destination, fill))
      : Promise.resolve(0n);
  l1Fee.catch(() => undefined);
  return gas.then(
    async (gasUnits) => ({ gasUnits, l1FeeWei: await l1Fee }),
    (error: unknown) => {
      throw callsRevert(route.calls, route.destination.displayName, error);
    },
  );
}
