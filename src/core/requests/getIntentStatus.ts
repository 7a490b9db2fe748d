import type { RequestRecord } from '../../store/requestRecord.js';
import { getRequest } from '../../store/requests.repository.js';
import type { CoreContext } from '../context.js';
import { parseRequestId, requestNotFound } from './requestId.js';
import { statusFieldsOf } from './statusRules.js';
import type { IntentStatus } from './types.js';

export interface GetIntentStatusParameters {
  requestId: string;
}
export type GetIntentStatusReturnType = IntentStatus;

/**
 * The status of one request (`GET /intents/status/v3`, GraphQL `requestStatus`): what the SDK polls after the
 * deposit. Fail reasons follow the status rules: `N/A` unless the status is `failure`, `fallback` or `refund`,
 * where it is the recorded reason or `UNKNOWN`; `refundFailReason` is the recorded one or `N/A`.
 *
 * @throws `INVALID_INPUT` (400) for an id that is not 32-byte hex; `NOT_FOUND` (404) for an unknown id.
 */
export async function getIntentStatus(
  ctx: CoreContext,
  params: GetIntentStatusParameters,
): Promise<GetIntentStatusReturnType> {
  return toIntentStatus(await requireRequest(ctx, params.requestId));
}

/** The stored request of a client-given id, or `INVALID_INPUT` / `NOT_FOUND`. */
export async function requireRequest(ctx: CoreContext, requestId: string): Promise<RequestRecord> {
  const id = parseRequestId(requestId);
  const record = await getRequest(ctx.db, id);
  if (record === undefined) throw requestNotFound(id);
  return record;
}

/** The status record of a stored request. */
export function toIntentStatus(record: RequestRecord): IntentStatus {
  return { requestId: record.id, ...statusFieldsOf(record), quoteCreatedAt: record.createdAt };
}
