import { notImplemented } from '../../core/errors.js';
import type { MutationResolvers, QueryResolvers, SubscriptionResolvers } from '../../../generated/graphql/resolvers.js';

/** A resolver for an operation whose core function has not landed yet: fails with `NOT_IMPLEMENTED`. */
const pending = (operationId: string) => (): never => {
  throw notImplemented(operationId);
};

/** A subscription whose event source has not landed yet: fails with `NOT_IMPLEMENTED` when subscribed. */
const pendingSubscription = (operationId: string) => ({ subscribe: pending(operationId) });

export const pendingQueries = {
} satisfies QueryResolvers;

export const pendingMutations = {
  executeGasless: pending('executeGasless'),
  submitPermit: pending('submitPermit'),
  fastFill: pending('fastFill'),
  claimAppFees: pending('claimAppFees'),
} satisfies MutationResolvers;

export const pendingSubscriptions = {
  requestStatus: pendingSubscription('subscribeRequestStatus'),
  requestUpdates: pendingSubscription('subscribeRequestUpdates'),
} satisfies SubscriptionResolvers;
