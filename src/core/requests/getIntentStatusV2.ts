import type { CoreContext } from '../context.js';
import { detailsText } from './detailsText.js';
import { requireRequest, toIntentStatus } from './getIntentStatus.js';
import { statusV2 } from './statusRules.js';
import type { EarlierStatusFields, IntentStatus, RequestStatusV2 } from './types.js';

export interface GetIntentStatusV2Parameters {
  requestId: string;
}

/** The status record in the reference's v2 shape. */
export type GetIntentStatusV2ReturnType = {
  /** `submitted` is reported as `pending`, `fallback` as `refund` (the v2 set has neither). */
  status: RequestStatusV2;
} & EarlierStatusFields &
  Pick<IntentStatus, 'quoteCreatedAt'>;

/**
 * The status of one request in the reference's v2 shape (`GET /intents/status/v2`, which the reference's React
 * hooks poll): the v3 record with the v2 status set, the time as `time` and `details` as text.
 *
 * @throws `INVALID_INPUT` (400) for an id that is not 32-byte hex; `NOT_FOUND` (404) for an unknown id.
 */
export async function getIntentStatusV2(
  ctx: CoreContext,
  params: GetIntentStatusV2Parameters,
): Promise<GetIntentStatusV2ReturnType> {
  const record = toIntentStatus(await requireRequest(ctx, params.requestId));
  return {
    status: statusV2[record.status],
    details: detailsText(record.details),
    inTxHashes: record.inTxHashes,
    txHashes: record.txHashes,
    time: record.updatedAt,
    originChainId: record.originChainId,
    destinationChainId: record.destinationChainId,
    quoteCreatedAt: record.quoteCreatedAt,
  };
}
