import type { MutationResolvers } from '../../../generated/graphql/resolvers.js';
import {
  indexSingleTransaction as indexSingleTransactionCore,
  indexTransaction as indexTransactionCore,
} from '../../core/solver/indexTransaction.js';

/** `Mutation.indexTransaction` (operation `indexTransaction`, `POST /transactions/index`). */
export const indexTransaction: MutationResolvers['indexTransaction'] = async (_parent, { input }, { core }) => {
  const { message } = await indexTransactionCore(core, {
    chainId: input.chainId,
    txHash: input.txHash,
    requestId: input.requestId ?? undefined,
  });
  return { message };
};

/** `Mutation.indexSingleTransaction` (operation `indexSingleTransaction`, `POST /transactions/single`). */
export const indexSingleTransaction: MutationResolvers['indexSingleTransaction'] = async (
  _parent,
  { input },
  { core },
) => {
  const { message } = await indexSingleTransactionCore(core, {
    chainId: input.chainId,
    requestId: input.requestId,
    txHash: input.txHash,
  });
  return { message };
};
