import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { getIntentStatusV2 as getIntentStatusV2Core } from '../../core/requests/getIntentStatusV2.js';
import type { RestContext } from '../context.js';

/** GET /intents/status/v2 */
export async function getIntentStatusV2(
  input: OperationInput<'getIntentStatusV2'>,
  context: RestContext,
): Promise<OperationOutput<'getIntentStatusV2'>> {
  return { status: 200, body: await getIntentStatusV2Core(context.core, { requestId: input.query.requestId }) };
}
