import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { lookupDepositAddress, reindexDepositAddress as reindexCore } from '../../core/depositAddresses/lookup.js';
import type { RestContext } from '../context.js';
import { toWire } from '../wire.js';

/** GET /deposit-addresses/v1 */
export async function getDepositAddress(
  input: OperationInput<'getDepositAddress'>,
  context: RestContext,
): Promise<OperationOutput<'getDepositAddress'>> {
  return { status: 200, body: await lookupDepositAddress(context.core, input.query) };
}

/** POST /transactions/deposit-address/reindex */
export async function reindexDepositAddress(
  input: OperationInput<'reindexDepositAddress'>,
  context: RestContext,
): Promise<OperationOutput<'reindexDepositAddress'>> {
  return { status: 200, body: toWire(await reindexCore(context.core, input.body)) };
}
