import type { RequestRecord } from '../../records/request.js';
import type { CoreContext } from '../context.js';
import type { ClaimTogether } from './claims.js';
import type { FillGate } from './fillGate.js';
import type { Lanes } from './lanes.js';
import type { SubmitTogether } from './setStatus.js';
import type { OrderTruth, TransactionSender } from '../ports/solver.js';

/**
 * What the solver's parts (`processDeposit.ts`, `execute.ts`, `fill.ts`, `refund.ts`, `recovery.ts`) share, built
 * once by `createSolver` and passed to each of them: nothing of the solver's is kept in module state.
 */
export interface SolverScope {
  ctx: CoreContext;
  /** The solver's sender on a chain; throws for a chain it has none on. */
  senderOf(chainId: number): TransactionSender;
  /** The last check before a fill: the circuit breaker (`fillGate.ts`). */
  gate: Pick<FillGate, 'check' | 'served'>;
  /** Runs work in the lane of its key, after the work queued before it (`lanes.ts`). */
  enqueue: Lanes['enqueue'];
  /** Waits inside a lane's work; false when the solver stops meanwhile (`lanes.ts`). */
  pause: Lanes['pause'];
  /** The claim of a deposit that is its request's own, with the others asked for meanwhile (`claims.ts`). */
  claimTogether: ClaimTogether;
  /** A fill's move to `submitted`, with the others asked for meanwhile (`setStatus.ts`). */
  submitTogether: SubmitTogether;
  /** `getRequest`, the reads asked for together (a block's deposits) going in one statement. */
  readRequest(this: void, id: string): Promise<RequestRecord | undefined>;
  /** Gas limits from each request's latest fill simulation, used by the fill that follows it. */
  simulatedGas: Map<string, bigint>;
  /** What the chains say of an order, read before a deposit is refunded (`refund.ts`). */
  truth: OrderTruth;
}
