import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { getCurrencies as getCurrenciesCore } from '../../core/catalogue/getCurrencies.js';
import type { RestContext } from '../context.js';

/** POST /currencies/v2: the flat list; the group id is not part of this version's items. */
export async function getCurrencies(
  input: OperationInput<'getCurrencies'>,
  context: RestContext,
): Promise<OperationOutput<'getCurrencies'>> {
  const items = getCurrenciesCore(context.core, input.body ?? {});
  return { status: 200, body: items.map(({ groupId: _groupId, ...item }) => item) };
}
