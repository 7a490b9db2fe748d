import type { Hex } from 'viem';
import type { MutationResolvers } from '../../../generated/graphql/resolvers.js';
import { submitPermit as submitPermitCore } from '../../core/permits/submitPermit.js';

/** `Mutation.submitPermit` (operation `submitPermit`): the same core as `POST /execute/permits`. */
export const submitPermit: MutationResolvers['submitPermit'] = async (_parent, { input }, { core, caller }) => {
  const result = await submitPermitCore(core, {
    kind: input.kind,
    requestId: input.requestId as Hex,
    signature: input.signature,
    api: input.api ?? undefined,
    caller: await caller(),
  });
  return { message: result.message, steps: [] };
};
