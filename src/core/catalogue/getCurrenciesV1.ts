import type { CoreContext } from '../context.js';
import { currencyLimit, matchCurrencies, type CurrencyFilter, type CurrencyListItem } from './matchCurrencies.js';

export interface GetCurrenciesV1Parameters extends CurrencyFilter {
  /** Most groups returned, 1 to 100 (default 20). */
  limit?: number | null | undefined;
}

/** One asset: the matched currencies sharing a group id, in list order. */
export type GetCurrenciesV1ReturnType = CurrencyListItem[][];

/**
 * The deprecated grouped search: the same matches as `getCurrencies`, grouped by currency group id in the
 * order of each group's first match; `limit` counts groups, so a group is never cut. Backs `POST /currencies/v1`.
 *
 * @throws `INVALID_INPUT` (400) for a limit outside 1..100 or a malformed `tokens` item.
 */
export function getCurrenciesV1(ctx: CoreContext, params: GetCurrenciesV1Parameters = {}): GetCurrenciesV1ReturnType {
  const limit = currencyLimit(params.limit);
  const groups = new Map<string, CurrencyListItem[]>();
  for (const item of matchCurrencies(ctx, params)) {
    const group = groups.get(item.groupId);
    if (group) group.push(item);
    else groups.set(item.groupId, [item]);
  }
  return [...groups.values()].slice(0, limit);
}
