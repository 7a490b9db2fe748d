import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { getConfig as getConfigCore } from '../../core/quote/getConfig.js';
import { toWire } from '../wire.js';
import type { RestContext } from '../context.js';

/** GET /config/v2 */
export async function getConfig(
  input: OperationInput<'getConfig'>,
  context: RestContext,
): Promise<OperationOutput<'getConfig'>> {
  const { originChainId, destinationChainId, user, currency } = input.query;
  const config = await getConfigCore(context.core, { originChainId, destinationChainId, user, currency });
  return { status: 200, body: toWire(config) };
}
