import type { Address } from 'viem';
import { chainCurrencies, requireChain } from '../chains/requireChain.js';
import type { ChainConfig, CurrencyConfig } from '../chains/types.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { fromUsdMicros } from '../market.js';
import { paymentFillGas, paymentFillL1Fee } from './fillGas.js';
import { fillExecutionFee, rescale } from './pricing.js';
import { parseAddress } from '../inputs.js';

export interface GetConfigParameters {
  originChainId: number;
  destinationChainId: number;
  user?: string | undefined;
  /** Currency group id (`eth`, `usdc`); default: the destination's native currency. */
  currency?: string | undefined;
}

export interface GetConfigReturnType {
  enabled: boolean;
  user?: { balance: bigint; maxBridgeAmount: bigint };
  /** Indicative fee of a transfer on the route (USD 0.02 + the fill's gas), smallest units of the origin currency. */
  fee: bigint;
  solver: { address: Address; balance: bigint; capacityPerRequest: bigint };
  supportsExternalLiquidity: boolean;
}

/**
 * Capacity of a bridge route (`GET /config/v2`): whether it is open, the solver's balance of the currency on
 * the destination (what one request can receive at most), the indicative fee of a transfer, and with `user`,
 * their balance on the origin and the largest amount they can bridge (their balance, and no more than the
 * solver can deliver plus the fee).
 */
export async function getConfig(ctx: CoreContext, params: GetConfigParameters): Promise<GetConfigReturnType> {
  const origin = requireChain(ctx, params.originChainId, 'origin');
  const destination = requireChain(ctx, params.destinationChainId, 'destination');
  const currencyId = (params.currency ?? destination.nativeCurrency.id).toLowerCase();
  const currencyIn = currencyByGroup(origin, currencyId);
  const currencyOut = currencyByGroup(destination, currencyId);
  const user = params.user === undefined ? undefined : parseAddress(params.user, 'user');
  const enabled =
    !origin.disabled &&
    !destination.disabled &&
    destination.depositEnabled &&
    currencyIn.supportsBridging &&
    currencyOut.supportsBridging;

  const [solverBalance, gasUnits, l1FeeWei, gasPrice, nativePrice, priceIn, userBalance] = await Promise.all([
    ctx.market.solverBalance(destination.id, currencyOut.address),
    paymentFillGas(ctx, destination, currencyOut.address),
    paymentFillL1Fee(ctx, destination, currencyOut.address),
    ctx.market.gasPrice(destination.id),
    ctx.market.usdPrice(destination.id, destination.nativeCurrency),
    ctx.market.usdPrice(origin.id, currencyIn),
    user === undefined ? Promise.resolve(undefined) : ctx.market.balanceOf(origin.id, user, currencyIn.address),
  ]);
  const execution = fillExecutionFee(destination, { units: gasUnits, priceWei: gasPrice, l1FeeWei }, nativePrice);
  const fee = fromUsdMicros(execution.totalMicros, currencyIn.decimals, priceIn, 'up');
  // Same asset on both sides: the solver's balance in destination units is the same amount in origin units,
  // rescaled when the decimals differ.
  const capacityIn = rescale(solverBalance, currencyOut.decimals, currencyIn.decimals, 'down');
  return {
    enabled,
    ...(userBalance === undefined
      ? {}
      : { user: { balance: userBalance, maxBridgeAmount: enabled ? min(userBalance, capacityIn + fee) : 0n } }),
    fee,
    solver: { address: ctx.solver.address, balance: solverBalance, capacityPerRequest: enabled ? solverBalance : 0n },
    supportsExternalLiquidity: false,
  };
}

const min = (a: bigint, b: bigint): bigint => (a < b ? a : b);

function currencyByGroup(chain: ChainConfig, id: string): CurrencyConfig {
  const currency = chainCurrencies(chain).find((candidate) => candidate.id === id);
  if (currency === undefined)
    throw new GatewayError(
      'UNSUPPORTED_CURRENCY',
      `Currency '${id}' is not available on chain ${chain.id} (${chain.displayName})`,
    );
  return currency;
}
