import type { MutationResolvers } from '../../../generated/graphql/resolvers.js';
import { GatewayError } from '../../core/errors.js';
import { executeGasless as executeGaslessCore } from '../../core/gasless/executeGasless.js';

/** `Mutation.executeGasless` (operation `executeGasless`, `POST /execute`). */
export const executeGasless: MutationResolvers['executeGasless'] = async (_parent, { input }, { core, caller }) => {
  if (input.executionOptions.destinationCalls != null) {
    throw new GatewayError('INVALID_INPUT', 'destinationCalls are not supported with gasless execution', {
      data: 'executionOptions.destinationCalls',
    });
  }
  return executeGaslessCore(
    core,
    {
      executionKind: 'rawCalls',
      data: {
        chainId: input.data.chainId,
        to: input.data.to,
        data: input.data.data,
        value: input.data.value.toString(),
        authorizationList: input.data.authorizationList?.map((a) => ({
          chainId: a.chainId,
          address: a.address,
          nonce: a.nonce,
          yParity: a.yParity,
          r: a.r,
          s: a.s,
        })),
      },
      executionOptions: {
        referrer: input.executionOptions.referrer ?? undefined,
        subsidizeFees: input.executionOptions.subsidizeFees,
      },
      requestId: input.requestId ?? undefined,
      originGasOverhead: input.originGasOverhead == null ? undefined : input.originGasOverhead.toString(),
    },
    await caller(),
  );
};
