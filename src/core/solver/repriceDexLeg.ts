/**
 * The fill-time check of a destination DEX leg: the pools are read live (`ctx.dex.refresh`) and the stored route is
 * priced along its own pools, with exact pool math, for exactly the amount the fill will spend. Below the order's
 * minimum the router would revert the fill: the request is refunded `SLIPPAGE` before anything is sent.
 */
import type { Address } from 'viem';
import type { CoreContext } from '../context.js';
import type { DexLegRecord } from '../dex/legRecord.js';
import { PoolShortfallError } from '../dex/poolState.js';
import { swapExactIn } from '../dex/poolSwap.js';
import { GatewayError } from '../errors.js';
import type { RequestRecord } from '../../records/request.js';

export type DexLegCheck = { ok: true; amountOutNow: bigint } | { ok: false; amountOutNow: bigint | null; why: string };

/** What the stored route delivers now for its amount in, on the chain's live pool state. */
export async function repriceDexLeg(ctx: CoreContext, request: RequestRecord, leg: DexLegRecord): Promise<DexLegCheck> {
  const dex = ctx.dex;
  if (dex === undefined) throw new GatewayError('SERVICE_UNAVAILABLE', 'The DEX pools are not read by this gateway');
  const state = await dex.refresh(leg.chainId);
  let amount = BigInt(leg.amountIn);
  for (const hop of leg.hops) {
    const pool = state.pools.find((candidate) => candidate.address.toLowerCase() === hop.pool.toLowerCase());
    if (pool === undefined) return { ok: false, amountOutNow: null, why: `pool ${hop.pool} is no longer read` };
    try {
      amount = swapExactIn(pool, hop.tokenIn.toLowerCase() as Address, amount).amountOut;
    } catch (error) {
      if (!(error instanceof PoolShortfallError)) throw error;
      return { ok: false, amountOutNow: null, why: `pool ${hop.pool} cannot take the amount (${error.shortfall})` };
    }
  }
  if (amount >= request.minAmountOut) return { ok: true, amountOutNow: amount };
  return {
    ok: false,
    amountOutNow: amount,
    why: `On the pools at block ${state.blockNumber} the swap would deliver ${amount}, below the order's minimum of ${request.minAmountOut} (quoted ${request.amountOut})`,
  };
}
