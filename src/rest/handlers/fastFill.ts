import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { fastFill as fastFillCore } from '../../core/solver/fastFill.js';
import type { RestContext } from '../context.js';

/** POST /fast-fill */
export async function fastFill(
  input: OperationInput<'fastFill'>,
  context: RestContext,
): Promise<OperationOutput<'fastFill'>> {
  const { caller } = context;
  const { requestId, solverInputCurrencyAmount, maxFillAmountUsd } = input.body;
  const result = await fastFillCore(
    context.core,
    {
      requestId,
      maxFillAmountUsd,
      solverInputCurrencyAmount:
        solverInputCurrencyAmount === undefined ? undefined : BigInt(solverInputCurrencyAmount),
    },
    caller,
  );
  return { status: 200, body: result };
}
