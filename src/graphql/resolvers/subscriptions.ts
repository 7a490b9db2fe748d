import type { SubscriptionResolvers } from '../../../generated/graphql/resolvers.js';
import { subscribeRequestStatus } from '../../core/events/subscribeRequestStatus.js';
import { subscribeRequestUpdates } from '../../core/events/subscribeRequestUpdates.js';
import { shareEvent } from '../sharedEvents.js';

/** The source event wrapping each message, per field: one per message object, so its subscribers share it. */
const wrappers = new Map<string, WeakMap<object, object>>();

/**
 * Wraps each value as graphql-js expects a subscription's source to yield: `{ [field]: value }`. Not an async
 * generator: a generator's `return()` waits for the pending `next()`, so a client that completes while no event
 * is due would keep its bus subscription until the next event; this forwards `return()` at once.
 *
 * The streams hand one message object to every subscriber of a change that may see it (`toStatusUpdate`, per
 * view), and no resolver under these fields reads the context: so the wrapper is one object per message too, and
 * is shared (`shareEvent`): each document executes once per change, not once per subscriber.
 */
function as<K extends string, T extends object>(
  field: K,
  source: AsyncIterableIterator<T>,
): AsyncIterableIterator<{ [key in K]: T }> {
  type Wrapped = { [key in K]: T };
  let byValue = wrappers.get(field);
  if (byValue === undefined) wrappers.set(field, (byValue = new WeakMap()));
  const wrap = (value: T): Wrapped => {
    let wrapped = byValue.get(value) as Wrapped | undefined;
    if (wrapped === undefined) {
      wrapped = shareEvent({ [field]: value } as Wrapped);
      byValue.set(value, wrapped);
    }
    return wrapped;
  };
  const iterator: AsyncIterableIterator<Wrapped> = {
    next: async () => {
      const result = await source.next();
      return result.done ? { value: undefined, done: true } : { value: wrap(result.value), done: false };
    },
    return: async () => {
      await source.return?.();
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]: () => iterator,
  };
  return iterator;
}

/** `Subscription.requestStatus` (core `subscribeRequestStatus`): current status, then changes, until a final one. */
export const requestStatus: NonNullable<SubscriptionResolvers['requestStatus']> = {
  subscribe: async (_parent, { requestId }, { core, caller }) =>
    as('requestStatus', await subscribeRequestStatus(core, { requestId, caller: await caller() })),
};

/** `Subscription.requestUpdates` (core `subscribeRequestUpdates`): changes of matching requests from now on. */
export const requestUpdates: NonNullable<SubscriptionResolvers['requestUpdates']> = {
  subscribe: async (_parent, { filter }, { core, caller }) =>
    as(
      'requestUpdates',
      await subscribeRequestUpdates(core, {
        requestIds: filter.requestIds ?? undefined,
        user: filter.user ?? undefined,
        originChainId: filter.originChainId ?? undefined,
        destinationChainId: filter.destinationChainId ?? undefined,
        status: filter.status ?? undefined,
        referrer: filter.referrer ?? undefined,
        mine: filter.mine ?? undefined,
        caller: await caller(),
      }),
    ),
};
