import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { GatewayError } from '../../core/errors.js';
import { executeGasless as executeGaslessCore } from '../../core/gasless/executeGasless.js';
import type { SignedAuthorizationInput } from '../../core/ports/solver.js';
import type { RestContext } from '../context.js';

/** POST /execute: a gasless batch (`executionKind: "rawCalls"`); the key is optional unless it sponsors the gas. */
export async function executeGasless(
  input: OperationInput<'executeGasless'>,
  context: RestContext,
): Promise<OperationOutput<'executeGasless'>> {
  const caller = context.caller;
  const { executionKind, data, executionOptions, requestId, originGasOverhead } = input.body;
  if (executionOptions.destinationChainExecutionData !== undefined) {
    throw new GatewayError('INVALID_INPUT', 'destinationChainExecutionData is not supported with gasless execution', {
      data: 'executionOptions.destinationChainExecutionData',
    });
  }
  const result = await executeGaslessCore(
    context.core,
    {
      executionKind,
      data: {
        chainId: data.chainId,
        to: data.to,
        data: data.data,
        value: data.value,
        authorizationList: data.authorizationList as SignedAuthorizationInput[] | undefined,
      },
      executionOptions: { referrer: executionOptions.referrer, subsidizeFees: executionOptions.subsidizeFees },
      requestId,
      originGasOverhead,
    },
    caller,
  );
  return { status: 200, body: result };
}
