import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { getIntentStatusV1 as getIntentStatusV1Core } from '../../core/requests/getIntentStatusV1.js';
import type { RestContext } from '../context.js';

/** GET /intents/status (deprecated): the status in the earlier shape. */
export async function getIntentStatusV1(
  input: OperationInput<'getIntentStatusV1'>,
  context: RestContext,
): Promise<OperationOutput<'getIntentStatusV1'>> {
  return { status: 200, body: await getIntentStatusV1Core(context.core, { requestId: input.query.requestId }) };
}
