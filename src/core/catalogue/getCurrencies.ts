import type { CoreContext } from '../context.js';
import { currencyLimit, matchCurrencies, type CurrencyFilter, type CurrencyListItem } from './matchCurrencies.js';

export interface GetCurrenciesParameters extends CurrencyFilter {
  /** Most currencies returned, 1 to 100 (default 20). */
  limit?: number | null | undefined;
}

export type GetCurrenciesReturnType = CurrencyListItem[];

/**
 * Currencies of the curated list matching the filter (see `matchCurrencies`), flat, at most `limit`.
 * Backs `POST /currencies/v2` and the GraphQL `currencies` field.
 *
 * @throws `INVALID_INPUT` (400) for a limit outside 1..100 or a malformed `tokens` item.
 */
export function getCurrencies(ctx: CoreContext, params: GetCurrenciesParameters = {}): GetCurrenciesReturnType {
  const limit = currencyLimit(params.limit);
  return matchCurrencies(ctx, params).slice(0, limit);
}
