import type { Hex } from 'viem';
import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { authorizeClaimSignature } from '../../core/appFees/claim.js';
import { notImplemented } from '../../core/errors.js';
import type { RestContext } from '../context.js';

/** POST /execute/permits: dispatches on the body's `kind` to the module that owns that kind of signature. */
export async function submitPermit(
  input: OperationInput<'submitPermit'>,
  context: RestContext,
): Promise<OperationOutput<'submitPermit'>> {
  const { kind, requestId } = input.body;
  const signature = input.query.signature as Hex;
  if (kind === 'claim') {
    return { status: 200, body: await authorizeClaimSignature(context.core, { requestId, signature }) };
  }
  throw notImplemented(`submitPermit (kind ${kind})`);
}
