import type { CoreContext } from '../context.js';
import { detailsText } from './detailsText.js';
import { requireRequest } from './getIntentStatus.js';
import { detailsObject, statusV1 } from './statusRules.js';
import type { IntentStatusV1 } from './types.js';

export interface GetIntentStatusV1Parameters {
  requestId: string;
}
export type GetIntentStatusV1ReturnType = IntentStatusV1;

/**
 * The status of one request in the earlier shape (`GET /intents/status`, deprecated): statuses mapped to the
 * earlier set (`depositing`, `pending`, `submitted` → `pending`; `refund` → `fallback`), the time as `time`,
 * `details` as text, as every version of the reference sends it (`detailsText`: a recorded message is itself).
 *
 * @throws `INVALID_INPUT` (400) for an id that is not 32-byte hex; `NOT_FOUND` (404) for an unknown id.
 */
export async function getIntentStatusV1(
  ctx: CoreContext,
  params: GetIntentStatusV1Parameters,
): Promise<GetIntentStatusV1ReturnType> {
  const record = await requireRequest(ctx, params.requestId);
  return {
    status: statusV1[record.status],
    details: detailsText(detailsObject(record.details)),
    inTxHashes: record.inTxHashes,
    txHashes: record.txHashes,
    time: record.updatedAt,
    originChainId: record.originChainId,
    destinationChainId: record.destinationChainId,
  };
}
