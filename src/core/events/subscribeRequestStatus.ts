import { lastEventId } from '../../store/requestEvents.repository.js';
import { getRequest } from '../../store/requests.repository.js';
import { statusSnapshotOf } from '../../store/requestOutbox.js';
import type { CoreContext } from '../context.js';
import type { Caller } from '../vocabulary/caller.js';
import { parseRequestId, requestNotFound } from '../vocabulary/requestId.js';
import { createEventQueue } from './eventQueue.js';
import { isFinalStatus, requireEventBus, toStatusUpdate, type RequestStatusUpdate } from './statusStream.js';

export interface SubscribeRequestStatusParameters {
  requestId: string;
  caller: Caller;
}
export type SubscribeRequestStatusReturnType = AsyncIterableIterator<RequestStatusUpdate>;

/**
 * The status stream of one request (GraphQL `Subscription.requestStatus`, a `/ws` subscription): its current
 * status first, then every committed change in order, ending after a final status (see `isFinalStatus`).
 * Nothing is lost or repeated between the first message and the changes: the current status and the newest
 * outbox id are read in one snapshot, and only later events follow. Stop early with `return()`.
 *
 * @throws `INVALID_INPUT` for an id that is not 32-byte hex; `NOT_FOUND` for an unknown id;
 *   `SERVICE_UNAVAILABLE` when the gateway has no event bus.
 */
export async function subscribeRequestStatus(
  ctx: CoreContext,
  params: SubscribeRequestStatusParameters,
): Promise<SubscribeRequestStatusReturnType> {
  const requestId = parseRequestId(params.requestId);
  const bus = requireEventBus(ctx);
  let request: { createdAt: number; apiKeyId: string | null } | undefined;
  const queue = createEventQueue<RequestStatusUpdate>(() => subscription.close());
  const subscription = bus.subscribe({
    requestId,
    onEvent: (event) => {
      // Buffered until start(), which runs after `request` is set.
      queue.push(toStatusUpdate(event.payload, request!, params.caller));
      if (isFinalStatus(event.payload)) queue.end();
    },
  });
  try {
    const snapshot = await ctx.db
      .transaction()
      .setIsolationLevel('repeatable read')
      .execute(async (trx) => {
        const record = await getRequest(trx, requestId);
        return {
          record,
          current: record === undefined ? undefined : await statusSnapshotOf(trx, record),
          afterId: await lastEventId(trx),
        };
      });
    if (snapshot.record === undefined || snapshot.current === undefined) throw requestNotFound(requestId);
    request = snapshot.record;
    const current = snapshot.current;
    queue.push(toStatusUpdate(current, request, params.caller));
    if (isFinalStatus(current)) queue.end();
    else subscription.start(snapshot.afterId);
  } catch (error) {
    subscription.close();
    throw error;
  }
  return queue;
}
