import { notImplemented } from '../../core/errors.js';
import type { MutationResolvers, QueryResolvers } from '../../../generated/graphql/resolvers.js';

/** A resolver for an operation whose core function has not landed yet: fails with `NOT_IMPLEMENTED`. */
const pending = (operationId: string) => (): never => {
  throw notImplemented(operationId);
};

export const pendingQueries = {} satisfies QueryResolvers;

export const pendingMutations = {
  claimAppFees: pending('claimAppFees'),
} satisfies MutationResolvers;
