import type { Address } from 'viem';
import type { CoreContext } from '../context.js';
import { toUsdMicros } from '../market.js';
import { chainCurrencies, requireChain } from '../chains/requireChain.js';

export interface GetChainsLiquidityParameters {
  chainId: number;
}

/** The solver's holding of one solver currency. */
export interface LiquidityEntry {
  chainId: number;
  /** Currency group id. */
  currencyId: string;
  symbol: string;
  address: Address;
  decimals: number;
  /** Solver balance, smallest units. */
  balance: bigint;
  /** USD value of `balance` in micro-USD, rounded down. */
  amountUsdMicros: bigint;
}

export type GetChainsLiquidityReturnType = LiquidityEntry[];

/**
 * The solver's balance of every solver currency of a chain (native first, then the ERC-20s in configuration
 * order), with its exact USD value. Backs `GET /chains/liquidity`.
 *
 * All or nothing: the USD value is required and must be exact, so when any currency with a non-zero balance
 * cannot be priced the whole answer fails with that error (a retriable 503 `PRICE_FETCH_FAILED` for a feed
 * that is down, stale or not positive) rather than showing a made-up value or hiding a balance. A zero
 * balance is worth zero whatever the price, so its price is not read.
 *
 * @throws `UNSUPPORTED_CHAIN` (400); the market's errors (`PRICE_FETCH_FAILED` 503, `UNSUPPORTED_CURRENCY` 400
 * for a solver currency without a price source, `RPC_HTTP_ERROR` 502, `REQUEST_TIMED_OUT` 504), the first one
 * in currency order.
 */
export async function getChainsLiquidity(
  ctx: CoreContext,
  params: GetChainsLiquidityParameters,
): Promise<GetChainsLiquidityReturnType> {
  const chain = requireChain(ctx, params.chainId);
  const results = await Promise.allSettled(
    chainCurrencies(chain)
      .filter((currency) => currency.solver)
      .map(async (currency): Promise<LiquidityEntry> => {
        const balance = await ctx.market.solverBalance(chain.id, currency.address);
        const amountUsdMicros =
          balance === 0n ? 0n : toUsdMicros(balance, currency.decimals, await ctx.market.usdPrice(chain.id, currency));
        return {
          chainId: chain.id,
          currencyId: currency.id,
          symbol: currency.symbol,
          address: currency.address,
          decimals: currency.decimals,
          balance,
          amountUsdMicros,
        };
      }),
  );
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((result) => (result as PromiseFulfilledResult<LiquidityEntry>).value);
}
