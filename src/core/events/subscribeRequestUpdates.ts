import { normalizeHex } from '../../store/mappers.js';
import { lastEventId } from '../../store/requestEvents.repository.js';
import type { RequestEvent } from '../../records/requestEvent.js';
import type { RequestRecord } from '../../records/request.js';
import type { RequestStatus } from '../../records/requestStatus.js';
import type { CoreContext } from '../context.js';
import { GatewayError } from '../errors.js';
import type { Caller } from '../vocabulary/caller.js';
import { parseRequestId } from '../vocabulary/requestId.js';
import { createEventQueue } from './eventQueue.js';
import { ownsRequest, requireEventBus, toStatusUpdate, type RequestStatusUpdate } from './statusStream.js';

export interface SubscribeRequestUpdatesParameters {
  requestIds?: readonly string[] | undefined;
  /** Matches the paying user, the sender or the recipient. */
  user?: string | undefined;
  originChainId?: number | undefined;
  destinationChainId?: number | undefined;
  status?: readonly RequestStatus[] | undefined;
  /** The referrer label of the caller's own requests (owner-only data: needs an API key). */
  referrer?: string | undefined;
  /** Only requests quoted with the caller's API key. */
  mine?: boolean | undefined;
  caller: Caller;
}
export type SubscribeRequestUpdatesReturnType = AsyncIterableIterator<RequestStatusUpdate>;

/**
 * Every status change committed from now on of the requests matching all given filters (GraphQL
 * `Subscription.requestUpdates`). Never ends by itself. `referrer` and `mine` restrict the stream to requests
 * quoted with the caller's key, as the history does for `referrer`.
 *
 * Without `requestIds` or `user` the stream shows only requests quoted with the caller's key.
 *
 * @throws `UNAUTHORIZED` for `referrer` or `mine`, or for neither `requestIds` nor `user`, without an API key; `INVALID_INPUT` for a malformed request
 *   id or an empty `requestIds`/`status` list; `SERVICE_UNAVAILABLE` when the gateway has no event bus.
 */
export async function subscribeRequestUpdates(
  ctx: CoreContext,
  params: SubscribeRequestUpdatesParameters,
): Promise<SubscribeRequestUpdatesReturnType> {
  const match = compileFilter(params);
  const bus = requireEventBus(ctx);
  const queue = createEventQueue<RequestStatusUpdate>(() => subscription.close());
  const subscription = bus.subscribe({
    withRecord: true,
    onEvent: (event, record) => {
      if (record !== undefined && match(event, record))
        queue.push(toStatusUpdate(event.payload, record, params.caller));
    },
  });
  try {
    subscription.start(await lastEventId(ctx.db));
  } catch (error) {
    subscription.close();
    throw error;
  }
  return queue;
}

function compileFilter(
  params: SubscribeRequestUpdatesParameters,
): (event: RequestEvent, record: RequestRecord) => boolean {
  const { caller } = params;
  if ((params.referrer !== undefined || params.mine === true) && caller.apiKey === null) {
    throw new GatewayError(
      'UNAUTHORIZED',
      "Filtering by referrer or mine needs an x-api-key: it matches only your key's requests",
      {
        data: params.referrer !== undefined ? 'referrer' : 'mine',
      },
    );
  }
  // Without ids or a user the stream would be every request of every user: only a key's own requests are shown.
  const unfiltered = params.requestIds === undefined && params.user === undefined;
  if (unfiltered && caller.apiKey === null) {
    throw new GatewayError(
      'UNAUTHORIZED',
      "requestUpdates needs requestIds or user, or an x-api-key (it then streams only your key's requests)",
      {
        data: 'requestIds',
      },
    );
  }
  if (params.requestIds?.length === 0)
    throw new GatewayError('INVALID_INPUT', 'requestIds must name at least one request', { data: 'requestIds' });
  if (params.status?.length === 0)
    throw new GatewayError('INVALID_INPUT', 'status must name at least one status', { data: 'status' });
  const ids =
    params.requestIds === undefined
      ? undefined
      : new Set<string>(params.requestIds.map((id) => parseRequestId(id, 'requestIds')));
  const user = params.user === undefined ? undefined : normalizeHex(params.user);
  const statuses = params.status === undefined ? undefined : new Set(params.status);
  const keyOnly = params.referrer !== undefined || params.mine === true || unfiltered;

  return (event, record) =>
    (ids === undefined || ids.has(event.requestId)) &&
    (user === undefined || record.user === user || record.sender === user || record.recipient === user) &&
    (params.originChainId === undefined || record.originChainId === params.originChainId) &&
    (params.destinationChainId === undefined || record.destinationChainId === params.destinationChainId) &&
    (statuses === undefined || statuses.has(event.status)) &&
    (!keyOnly || ownsRequest(caller, record)) &&
    (params.referrer === undefined || record.referrer === params.referrer);
}
