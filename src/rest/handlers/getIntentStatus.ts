import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { getIntentStatus as getIntentStatusCore } from '../../core/requests/getIntentStatus.js';
import { detailsText } from '../../core/requests/detailsText.js';
import type { RestContext } from '../context.js';

type StatusBody = Extract<OperationOutput<'getIntentStatus'>, { status: 200 }>['body'];

/** GET /intents/status/v3: the status record, without the request id (the caller has it). */
export async function getIntentStatus(
  input: OperationInput<'getIntentStatus'>,
  context: RestContext,
): Promise<OperationOutput<'getIntentStatus'>> {
  const { requestId: _requestId, ...record } = await getIntentStatusCore(context.core, {
    requestId: input.query.requestId,
  });
  // The core's reasons are plain strings (recorded from the contract's enums); `details` is text on the wire,
  // as the reference sends it.
  const failReason = record.failReason as StatusBody['failReason'];
  const refundFailReason = record.refundFailReason as StatusBody['refundFailReason'];
  const details = detailsText(record.details);
  return { status: 200, body: { ...record, details, failReason, refundFailReason } };
}
