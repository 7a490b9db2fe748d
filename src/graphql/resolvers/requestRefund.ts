import type { MutationResolvers } from '../../../generated/graphql/resolvers.js';
import { requestRefund as requestRefundCore } from '../../core/requests/requestRefund.js';

/** `Mutation.requestRefund` (operation `requestRefund`, `POST /requests/refund`). */
export const requestRefund: MutationResolvers['requestRefund'] = (_parent, { input }, { core }) =>
  // A deadline past the safe integers becomes an unsafe number, which the core refuses as REST's would be.
  requestRefundCore(core, { requestId: input.requestId, deadline: Number(input.deadline), signature: input.signature });
