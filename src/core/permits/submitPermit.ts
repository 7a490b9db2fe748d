import { GatewayError } from '../errors.js';
import { parseRequestId } from '../vocabulary/requestId.js';
import type { CoreContext } from '../context.js';
import { authorizeClaimSignature } from '../appFees/claim.js';
import { depositPermitKind } from './depositPermit.js';
import type { PermitKind, SubmitPermitInput, SubmitPermitResult } from './types.js';

/**
 * The kinds of signature `POST /execute/permits` accepts, by the `kind` of the step's `post.body`. A new kind
 * is one module implementing `PermitKind` and one line here.
 */
const permitKinds: Readonly<Record<string, PermitKind>> = {
  /** EIP-3009 `ReceiveWithAuthorization` to the approval proxy: the gateway deposits for the user. */
  eip3009: depositPermitKind('eip3009'),
  /** EIP-2612 `permit` for the approval proxy (tokens without EIP-3009). */
  eip2612: depositPermitKind('eip2612'),
  /** An app-fee claim's eip191 authorization by the wallet (`src/core/appFees/claim.ts`). */
  claim: { submit: (ctx, input) => authorizeClaimSignature(ctx, input) },
};

/** Handles a posted signature by its kind; an unknown kind is `INVALID_INPUT`. */
export async function submitPermit(ctx: CoreContext, input: SubmitPermitInput): Promise<SubmitPermitResult> {
  const handler = Object.hasOwn(permitKinds, input.kind) ? permitKinds[input.kind] : undefined;
  if (handler === undefined) {
    throw new GatewayError(
      'INVALID_INPUT',
      `Unknown permit kind '${input.kind}'; this gateway accepts ${Object.keys(permitKinds).join(', ')}`,
      { data: 'kind' },
    );
  }
  // The id's shape is bad input on every transport (REST's schema checks it first; a GraphQL ID is any string).
  parseRequestId(input.requestId);
  return handler.submit(ctx, input);
}
