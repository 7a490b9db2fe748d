import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { indexSingleTransaction as indexSingleTransactionCore } from '../../core/solver/indexTransaction.js';
import type { RestContext } from '../context.js';

/** POST /transactions/single: `tx` is the JSON-encoded transaction, decoded by the core. */
export async function indexSingleTransaction(
  input: OperationInput<'indexSingleTransaction'>,
  context: RestContext,
): Promise<OperationOutput<'indexSingleTransaction'>> {
  const { message } = await indexSingleTransactionCore(context.core, {
    chainId: Number(input.body.chainId),
    requestId: input.body.requestId,
    tx: input.body.tx,
  });
  return { status: 200, body: { message } };
}
