import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { requestRefund as requestRefundCore } from '../../core/requests/requestRefund.js';
import type { RestContext } from '../context.js';

/** POST /requests/refund */
export async function requestRefund(
  input: OperationInput<'requestRefund'>,
  context: RestContext,
): Promise<OperationOutput<'requestRefund'>> {
  const { requestId, deadline, signature } = input.body;
  const result = await requestRefundCore(context.core, { requestId, deadline, signature });
  return { status: 200, body: result };
}
