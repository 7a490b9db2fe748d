import type { Hex } from 'viem';
import type { DepositRecord } from '../../records/deposit.js';
import type { RequestRecord } from '../../records/request.js';
import { coalescedRequestReads, getRequest } from '../../store/requests.repository.js';
import type { CoreContext } from '../context.js';
import { createClaimTogether } from './claims.js';
import { validateFill } from './fillChecks.js';
import { sendFill } from './execute.js';
import { createFillGate, type FillPause } from './fillGate.js';
import { createLanes } from './lanes.js';
import type { OrderTruth, TransactionSender } from '../ports/solver.js';
import { processDeposit } from './processDeposit.js';
import { createSubmitTogether } from './setStatus.js';
import { recoverAll, recoverIfStill, resumeRequest } from './recovery.js';
import { defaultRetryPolicy, type RetryPolicy } from './retry.js';
import { refundOnRequest } from './selfRefund.js';
import type { SelfRefundDecision } from '../ports/selfRefundDecision.js';
import type { SolverScope } from './scope.js';

export interface Solver {
  /**
   * Takes a confirmed deposit (from a watcher), with its request as the confirmation read it when there is one
   * (`DepositWatcherOptions.onConfirmed`). Work for one request is serialized; never throws.
   */
  handleDeposit(deposit: DepositRecord, request?: RequestRecord): void;
  /** After a restart: finishes fills and refunds in flight and re-decides requests left `pending`. */
  recover(): Promise<void>;
  /** Resolves when no work is queued or running (tests, shutdown). */
  idle(): Promise<void>;
  /** Fast fill: whether the request could be filled now, and why not. */
  checkFill(requestId: Hex): Promise<{ failReason: string; message: string } | null>;
  /** Fast fill: fills a request a fast fill moved to `pending`. */
  fillNow(requestId: Hex): void;
  /** Destination chains whose fills are paused (circuit breaker, `fillGate.ts`), and why. */
  fillPauses(): FillPause[];
  /**
   * A depositor's signed refund request (`requestRefund`): refunds the request when the fill gate holds it, in its
   * lane (`selfRefund.ts`). Resolves once the lane's work ends (the refund mined, or the work left to a retry);
   * undefined when the work failed before it decided.
   */
  refundOnRequest(requestId: string): Promise<SelfRefundDecision | undefined>;
  stop(): Promise<void>;
}

export interface CreateSolverParameters {
  ctx: CoreContext;
  /** The solver's sender per chain id. */
  senders: ReadonlyMap<number, TransactionSender>;
  /** What the chains say of an order: a deposit whose order was filled is never refunded (`refund.ts`). */
  truth: OrderTruth;
  /** How work that failed (an RPC error) is retried; `defaultRetryPolicy` when absent. */
  retry?: RetryPolicy;
}

/**
 * The request lifecycle after the deposit: decide, fill or refund, and record every status change.
 *
 * - A confirmed deposit pays for its request only when it matches the order (`depositMatch.ts`); it is then
 *   claimed in one transaction with the request's move `waiting -> pending`. A deposit on another chain or in
 *   another currency, or short and not sent by the order's user, is stray: refunded on its own, the request
 *   untouched. A matching deposit for a request that is no longer waiting is a double spend, refunded on its own.
 * - Before filling it re-validates: the currency and amount deposited, the expiry, the solver's balance on the
 *   destination and a simulation of the fill. Any failure refunds the deposit with its `failReason`.
 * - The fill goes through the destination's sender (recorded before broadcast, one live fill per request, and
 *   the fill contract refuses a second fill on chain): `pending -> submitted -> success`, or `failure` and a
 *   refund when it reverts.
 * - A refund releases the deposit from the depository to `refundTo` less the refund's gas (or, for a deposit
 *   forwarded through the receiver, pays it back from the solver), then `refund`.
 *
 * Each job has a file, and all of them share one `SolverScope` (`scope.ts`): the lanes that serialize and retry
 * a request's work (`lanes.ts`), a deposit's walk (`processDeposit.ts`: its claim, `claims.ts`, the decision,
 * `decide.ts`, and the one executor of decisions, `execute.ts`), the checks before a fill (`fillChecks.ts`), the fill
 * (`fill.ts`), refunds (`refund.ts`) and restart recovery (`recovery.ts`).
 */
export function createSolver({ ctx, senders, truth, retry = defaultRetryPolicy }: CreateSolverParameters): Solver {
  const lanes = createLanes({ log: ctx.log, retry });
  // Re-decides a request the fill gate held (still `pending`, its deposit consumed) as a restart would.
  const gate = createFillGate({
    ctx,
    retry: (requestId) => void lanes.enqueue(requestId, () => recoverIfStill(scope, requestId, 'pending')),
  });
  const scope: SolverScope = {
    ctx,
    senderOf(chainId) {
      const sender = senders.get(chainId);
      if (sender === undefined) throw new Error(`no sender for chain ${chainId}`);
      return sender;
    },
    gate,
    enqueue: lanes.enqueue,
    pause: lanes.pause,
    claimTogether: createClaimTogether(ctx),
    submitTogether: createSubmitTogether(ctx),
    readRequest: coalescedRequestReads(ctx.db),
    simulatedGas: new Map(),
    truth,
  };

  return {
    handleDeposit(deposit, request) {
      void lanes.enqueue(
        deposit.requestId,
        () => processDeposit(scope, deposit, request),
        async () => {
          // Claims it if the failed attempt did not get that far (a no-op otherwise), then resumes the request.
          // The request is read again: the handed-on record is older by then.
          await processDeposit(scope, deposit);
          await resumeRequest(scope, deposit.requestId, deposit.txHash);
        },
      );
    },
    recover: () => recoverAll(scope),
    async checkFill(requestId) {
      const request = await getRequest(ctx.db, requestId);
      if (request === undefined) return { failReason: 'UNKNOWN', message: 'no such request' };
      const blocked = await validateFill(scope, request);
      return blocked === null
        ? null
        : {
            failReason: blocked.failReason,
            message: typeof blocked.details?.message === 'string' ? blocked.details.message : blocked.failReason,
          };
    },
    fillNow(requestId) {
      void lanes.enqueue(
        requestId,
        async () => {
          const request = await getRequest(ctx.db, requestId);
          if (request !== undefined && request.status === 'pending' && request.fastFill !== null)
            await sendFill(scope, request, null);
        },
        () => resumeRequest(scope, requestId),
      );
    },
    idle: () => lanes.idle(),
    fillPauses: () => gate.pauses(),
    async refundOnRequest(requestId) {
      let decision: SelfRefundDecision | undefined;
      await lanes.enqueue(
        requestId,
        async () => {
          decision = await refundOnRequest(scope, gate, requestId);
        },
        () => resumeRequest(scope, requestId),
      );
      return decision;
    },
    async stop() {
      gate.stop();
      await lanes.stop();
    },
  };
}
