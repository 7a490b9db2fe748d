import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { getRequestSignature as getRequestSignatureCore } from '../../core/requests/getRequestSignature.js';
import { toWire } from '../wire.js';
import type { RestContext } from '../context.js';

/** GET /requests/{requestId}/signature: the attested order parameters (amount as a decimal string) and the signature. */
export async function getRequestSignature(
  input: OperationInput<'getRequestSignature'>,
  context: RestContext,
): Promise<OperationOutput<'getRequestSignature'>> {
  const { requestData, signature } = await getRequestSignatureCore(context.core, { requestId: input.params.requestId });
  return { status: 200, body: { requestData: toWire(requestData), signature } };
}
