import type { Hex } from 'viem';
import type { CoreContext } from '../context.js';
import type { Caller } from '../vocabulary/caller.js';

/** A signature posted to `POST /execute/permits` (or GraphQL `submitPermit`): the step's `post.body` and the signature. */
export interface SubmitPermitInput {
  /** What the signature authorizes: selects the module that handles it. */
  kind: string;
  requestId: Hex;
  signature: Hex;
  api?: string | undefined;
  referrer?: string | undefined;
  caller: Caller;
}

export interface SubmitPermitResult {
  message: string;
}

/** One kind of signature `POST /execute/permits` accepts: one module each, registered in `submitPermit.ts`. */
export interface PermitKind {
  submit(ctx: CoreContext, input: SubmitPermitInput): Promise<SubmitPermitResult>;
}
