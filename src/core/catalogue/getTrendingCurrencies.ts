import { listCurrencyBuyActivity } from '../../store/currencyActivity.repository.js';
import { requireChain } from '../chains/requireChain.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import { currencyLimit, matchCurrencies, type CurrencyListItem } from './matchCurrencies.js';

export type TrendingSort = 'relay24hBuyTxCount' | 'relay24hBuyUsdVolume' | 'coingecko6hTrending';

export interface GetTrendingCurrenciesParameters {
  chainId?: number | undefined;
  /** Default `relay24hBuyTxCount`. `coingecko6hTrending` needs an external source this gateway does not have. */
  sortBy?: TrendingSort | undefined;
  /** 1 to 100, default 20. */
  limit?: number | undefined;
}

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Currencies of the curated list ordered by what the gateway's users bought in the last 24 hours (filled
 * requests by output currency): by count or by USD volume, ties in list order, currencies nobody bought
 * after them. Backs `GET /currencies/trending`.
 *
 * @throws `UNSUPPORTED_CHAIN` (400) for a chain the gateway does not serve; `INVALID_INPUT` (400) for
 *   `coingecko6hTrending` (no external trend source) or a limit outside 1..100.
 */
export async function getTrendingCurrencies(
  ctx: CoreContext,
  params: GetTrendingCurrenciesParameters = {},
): Promise<CurrencyListItem[]> {
  const limit = currencyLimit(params.limit);
  if (params.chainId !== undefined) requireChain(ctx, params.chainId);
  const sortBy = params.sortBy ?? 'relay24hBuyTxCount';
  if (sortBy === 'coingecko6hTrending') {
    throw new GatewayError(
      'INVALID_INPUT',
      'sortBy coingecko6hTrending needs an external trend source, which this gateway does not have',
      {
        data: 'sortBy',
      },
    );
  }
  const activity = await listCurrencyBuyActivity(ctx.db, {
    since: ctx.now() - DAY_MS,
    ...(params.chainId === undefined ? {} : { chainId: params.chainId }),
  });
  const score = new Map(
    activity.map((a) => [
      `${a.chainId}:${a.address}`,
      sortBy === 'relay24hBuyUsdVolume' ? a.buyUsdMicros : BigInt(a.buyCount),
    ]),
  );
  const listed = matchCurrencies(ctx, {
    defaultList: false,
    ...(params.chainId === undefined ? {} : { chainIds: [params.chainId] }),
  });
  const scoreOf = (item: CurrencyListItem) => score.get(`${item.chainId}:${item.address.toLowerCase()}`) ?? 0n;
  // Array.prototype.sort is stable: equal scores keep the curated list's order.
  return [...listed].sort((a, b) => (scoreOf(b) > scoreOf(a) ? 1 : scoreOf(b) < scoreOf(a) ? -1 : 0)).slice(0, limit);
}
