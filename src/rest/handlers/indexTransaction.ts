import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { indexTransaction as indexTransactionCore } from '../../core/solver/indexTransaction.js';
import type { RestContext } from '../context.js';

/** POST /transactions/index: the chain id arrives as a number or a decimal string (the reference SDK sends a string). */
export async function indexTransaction(
  input: OperationInput<'indexTransaction'>,
  context: RestContext,
): Promise<OperationOutput<'indexTransaction'>> {
  const { message } = await indexTransactionCore(context.core, {
    chainId: Number(input.body.chainId),
    txHash: input.body.txHash,
    requestId: input.body.requestId,
  });
  return { status: 200, body: { message } };
}
