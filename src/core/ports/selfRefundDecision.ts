import type { RequestRecord } from '../../records/request.js';

/**
 * What the solver made of a depositor's refund request (`solver/selfRefund.ts`), decided in the request's lane (after any
 * fill or refund queued before it): `accepted` (recorded, and the refund sent or under way), or why not, with the
 * request as read. Beside the solver handle (`solverHandle.ts`, which the core context names), which needs the type
 * without the solver's modules.
 */
export type SelfRefundDecision =
  | { kind: 'accepted' }
  /** The request is no longer `pending` (filled, being filled, refunded, failed): nothing to do. */
  | { kind: 'moved'; request: RequestRecord }
  /** `pending` but not held: the solver is deciding or sending its fill. */
  | { kind: 'notHeld'; request: RequestRecord }
  | { kind: 'unknown' };
