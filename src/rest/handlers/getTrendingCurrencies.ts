import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { getTrendingCurrencies as getTrendingCurrenciesCore } from '../../core/catalogue/getTrendingCurrencies.js';
import type { RestContext } from '../context.js';

/** GET /currencies/trending */
export async function getTrendingCurrencies(
  input: OperationInput<'getTrendingCurrencies'>,
  context: RestContext,
): Promise<OperationOutput<'getTrendingCurrencies'>> {
  const { chainId, sortBy, limit } = input.query;
  const items = await getTrendingCurrenciesCore(context.core, { chainId, sortBy, limit });
  return { status: 200, body: items.map(({ groupId: _groupId, ...item }) => item) };
}
