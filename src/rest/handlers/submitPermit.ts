import type { Hex } from 'viem';
import type { OperationInput, OperationOutput } from '../../../generated/openapi/operations.js';
import { submitPermit as submitPermitCore } from '../../core/permits/submitPermit.js';
import type { RestContext } from '../context.js';

/** POST /execute/permits?signature= — a signature step's `post` (dispatched on `kind`, `src/core/permits`). */
export async function submitPermit(
  input: OperationInput<'submitPermit'>,
  context: RestContext,
): Promise<OperationOutput<'submitPermit'>> {
  const result = await submitPermitCore(context.core, {
    kind: input.body.kind,
    requestId: input.body.requestId as Hex,
    signature: input.query.signature as Hex,
    api: input.body.api,
    referrer: input.body.referrer,
    caller: context.caller,
  });
  return { status: 200, body: result };
}
