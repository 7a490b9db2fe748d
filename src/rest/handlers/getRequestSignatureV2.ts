import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { getRequestSignatureV2 as getRequestSignatureV2Core } from '../../core/requests/getRequestSignatureV2.js';
import type { RestContext } from '../context.js';

/** GET /requests/{requestId}/signature/v2 */
export async function getRequestSignatureV2(
  input: OperationInput<'getRequestSignatureV2'>,
  context: RestContext,
): Promise<OperationOutput<'getRequestSignatureV2'>> {
  const { requestData, signature } = await getRequestSignatureV2Core(context.core, {
    requestId: input.params.requestId,
  });
  return { status: 200, body: { requestData, signature } };
}
