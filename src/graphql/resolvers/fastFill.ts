import type { MutationResolvers } from '../../../generated/graphql/resolvers.js';
import { GatewayError } from '../../core/errors.js';
import { fastFill as fastFillCore } from '../../core/solver/fastFill.js';

/** `Mutation.fastFill` (operation `fastFill`). */
export const fastFill: MutationResolvers['fastFill'] = async (_parent, { input }, { core, caller }) => {
  const cap = input.maxFillAmountUsd ?? undefined;
  if (cap !== undefined && !/^[0-9]+(\.[0-9]+)?$/.test(cap)) {
    throw new GatewayError('INVALID_INPUT', 'maxFillAmountUsd must be a positive decimal number of USD', {
      data: 'maxFillAmountUsd',
    });
  }
  return fastFillCore(
    core,
    {
      requestId: input.requestId,
      solverInputCurrencyAmount: input.solverInputCurrencyAmount ?? undefined,
      maxFillAmountUsd: cap === undefined ? undefined : Number(cap),
    },
    await caller(),
  );
};
