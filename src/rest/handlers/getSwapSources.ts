import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { getSwapSources as getSwapSourcesCore } from '../../core/catalogue/getSwapSources.js';
import type { RestContext } from '../context.js';

/** GET /swap-sources */
export async function getSwapSources(
  input: OperationInput<'getSwapSources'>,
  context: RestContext,
): Promise<OperationOutput<'getSwapSources'>> {
  return { status: 200, body: { sources: getSwapSourcesCore(context.core, { chainId: input.query.chainId }) } };
}
