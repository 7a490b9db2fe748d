import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { getCurrenciesV1 as getCurrenciesV1Core } from '../../core/catalogue/getCurrenciesV1.js';
import type { RestContext } from '../context.js';

/** POST /currencies/v1: groups of the same asset, each item carrying its `groupID`. */
export async function getCurrenciesV1(
  input: OperationInput<'getCurrenciesV1'>,
  context: RestContext,
): Promise<OperationOutput<'getCurrenciesV1'>> {
  const groups = getCurrenciesV1Core(context.core, input.body ?? {});
  return {
    status: 200,
    body: groups.map((group) => group.map(({ groupId, ...item }) => ({ groupID: groupId, ...item }))),
  };
}
