import type { Address } from 'viem';
import { dexLegsOf, routeOfLeg } from '../dex/legRecord.js';
import { routerSwapCall } from '../dex/routerCalls.js';
import type { DexSwapFill } from '../fill/fillTransaction.js';
import { fillOutflow } from '../fill/fillOutflow.js';
import type { RequestRecord } from '../../records/request.js';

/**
 * Seconds past the order's deadline the router still accepts the swap: a fill sent just before the deadline may be
 * mined a little after it, and the order (not the router) decides whether it may be sent at all.
 */
const ROUTER_DEADLINE_MARGIN_SECONDS = 600;

/**
 * The DEX swap a request's fill runs, from the destination leg stored with its quote: exactly the quoted input
 * through the quoted pools, delivering to the recipient at least the order's minimum. Undefined without a leg.
 */
export function dexSwapOf(request: RequestRecord): DexSwapFill | undefined {
  const leg = dexLegsOf(request.quote).destination;
  if (leg === undefined) return undefined;
  const call = routerSwapCall(routeOfLeg(leg), {
    recipient: request.recipient as Address,
    amountOutMinimum: request.minAmountOut,
    deadline: BigInt(Math.floor(request.expiresAt / 1000) + ROUTER_DEADLINE_MARGIN_SECONDS),
    ...(leg.routerKind === undefined ? {} : { v3RouterKind: leg.routerKind }),
    nativeIn: leg.nativeIn,
    nativeOut: leg.nativeOut,
  });
  // What the swap spends is the fill's outflow, as the inventory counted it while the fill was in flight.
  const spent = fillOutflow(request);
  return { currency: spent.currency, amountIn: spent.amount, call };
}
