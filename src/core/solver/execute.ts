import type { Hex } from 'viem';
import { getDeposit, updateDepositStatus } from '../../store/deposits.repository.js';
import { getRequest } from '../../store/requests.repository.js';
import { requireChain } from '../chains/requireChain.js';
import { DEFAULT_UNKNOWN_DEPOSIT_GRACE_SECONDS } from '../chains/types.js';
import type { Claim } from './claims.js';
import { decide, type Decision, type DecisionReads, type Standing } from './decide.js';
import type { RecoveryDecision } from './decideRecovery.js';
import { fill, finishFill, type FillEnd } from './fill.js';
import { fillFactsOf } from './fillFacts.js';
import { isReleased, readAheadFill, validateOwnFill, type FillReads } from './fillChecks.js';
import { attachedDeposit, queueStrayRefund, refundRequest } from './refund.js';
import type { SolverScope } from './scope.js';
import { setStatus } from './setStatus.js';
import { solverCarriedRefundTarget } from './solverCarrier.js';
import { type DepositRecord } from '../../records/deposit.js';
import type { RequestRecord } from '../../records/request.js';

/**
 * The one executor of the solver's decisions (`decide.ts`): sends the fill, refunds the request's own deposit,
 * queues a deposit's refund on its own, waits out an unknown request's grace, or writes how the deposit or the
 * request ends when nothing is sent.
 */
export async function act(scope: SolverScope, deposit: DepositRecord, decision: Decision): Promise<void> {
  const { log } = scope.ctx;
  switch (decision.kind) {
    case 'fill':
      await sendFill(scope, decision.request, deposit);
      return;
    case 'refund':
      if (decision.fastFillFailed === true)
        log.warn(
          { requestId: decision.request.id, txHash: deposit.txHash },
          'deposit for a fast fill that failed: refunding it',
        );
      await refundRequest(scope, decision.request, deposit, decision.failReason, decision.details);
      return;
    case 'strayRefund':
      logStrayRefund(scope, deposit, decision);
      // In a lane of its own, so refunding it does not hold up the request's work (its proper deposit may be right
      // behind).
      queueStrayRefund(scope, deposit, decision.refundTo, decision.shownOn);
      return;
    case 'hold':
      // A request the gate holds is tried again by the gate; an unknown request's deposit waits in its own lane.
      if (decision.why === 'unknown-request') holdUnknownDeposit(scope, deposit);
      return;
    case 'done':
      await end(scope, deposit, decision);
  }
}

/**
 * The executor of a request picked up again from its records (`decideRecovery.ts`): follows or sends a fast fill,
 * leaves a request with no deposit to an operator, ends a sent refund by its receipt, refunds, follows a sent fill
 * (recording its `submitted` first when a crash cut that off), or walks the paid request as after its claim.
 */
export async function actRecovery(scope: SolverScope, decision: RecoveryDecision): Promise<void> {
  const { ctx } = scope;
  switch (decision.kind) {
    case 'followFastFill':
      await followFill(scope, decision.request, null, decision.fillTxId);
      return;
    case 'sendFastFill':
      await sendFill(scope, decision.request, null);
      return;
    case 'nothing':
      return;
    case 'operator':
      ctx.log.error(
        { requestId: decision.request.id },
        'request is past waiting but its deposit is not recorded; leaving it for an operator',
      );
      return;
    case 'awaitRefund': {
      const { request, deposit, failReason } = decision;
      const receipt = await scope.senderOf(deposit.chainId).waitForReceipt(decision.refundTxId);
      if (receipt.status === 'success') await setStatus(ctx, request, 'refund', { failReason, txHash: receipt.hash });
      else await setStatus(ctx, request, 'refundFail', { failReason, refundFailReason: 'MANUAL_REFUND_REQUIRED' });
      return;
    }
    case 'refund':
      await act(scope, decision.deposit, {
        kind: 'refund',
        request: decision.request,
        failReason: decision.failReason,
      });
      return;
    case 'followFill': {
      const { request, deposit, submit } = decision;
      if (submit !== null) await setStatus(ctx, request, 'submit', { txHash: submit });
      await followFill(scope, request, deposit, decision.fillTxId);
      return;
    }
    case 'walk':
      await walkPaidRequest(scope, decision.request, decision.deposit);
  }
}

/** Sends a request's fill and refunds what its end owes; `deposit` is null for a fast fill whose deposit is not in. */
export async function sendFill(
  scope: SolverScope,
  request: RequestRecord,
  deposit: DepositRecord | null,
): Promise<void> {
  await afterFill(scope, request, deposit, await fill(scope, request, deposit));
}

/** Follows a fill sent before (a restart, a retry) to its end, and refunds what that end owes. */
export async function followFill(
  scope: SolverScope,
  request: RequestRecord,
  deposit: DepositRecord | null,
  outgoingTxId: number,
): Promise<void> {
  await afterFill(scope, request, deposit, await finishFill(scope, request, deposit, outgoingTxId));
}

/**
 * What a fill's end owes: a fill that never reached the chain refunds the deposit with its reason, or fails a fast
 * fill whose deposit is not in; a reverted fill refunds the deposit (`TRANSACTION_REVERTED`, less what its calls
 * cost: `refund.ts`).
 */
async function afterFill(
  scope: SolverScope,
  request: RequestRecord,
  deposit: DepositRecord | null,
  end: FillEnd,
): Promise<void> {
  const { ctx } = scope;
  switch (end.kind) {
    case 'sent':
      return;
    case 'rejected': {
      const { failReason, details } = end;
      // A fast fill's deposit may have arrived meanwhile (attached to the request): it is refunded, never kept.
      const fresh = deposit === null ? await getRequest(ctx.db, request.id) : undefined;
      const paid = deposit ?? (fresh === undefined ? null : await attachedDeposit(ctx.db, fresh));
      if (paid === null) await setStatus(ctx, request, 'fail', { failReason, details: details ?? null });
      else
        await act(scope, paid, {
          kind: 'refund',
          request: fresh ?? request,
          failReason,
          ...(details === undefined ? {} : { details }),
        });
      return;
    }
    case 'reverted': {
      const paid = deposit ?? (await attachedDeposit(ctx.db, end.request));
      if (paid !== null)
        await act(scope, paid, { kind: 'refund', request: end.request, failReason: 'TRANSACTION_REVERTED' });
    }
  }
}

/** A decision that sends nothing: the request ends as the chain says, or the deposit is kept in the depository. */
async function end(
  scope: SolverScope,
  deposit: DepositRecord,
  decision: Extract<Decision, { kind: 'done' }>,
): Promise<void> {
  const { ctx } = scope;
  switch (decision.why) {
    case 'taken':
    case 'fast-fill-paid':
      return;
    case 'released': {
      const { request, filled } = decision;
      scope.simulatedGas.delete(request.id);
      ctx.log.error(
        { requestId: request.id, txHash: deposit.txHash, chainId: deposit.chainId, filled },
        'not filling: the deposit was already released on chain (the database did not know)',
      );
      if (filled) await setStatus(ctx, request, 'succeed', { fill: fillFactsOf(ctx, request) });
      else
        await setStatus(ctx, request, 'refund', {
          details: { message: 'The deposit was already released on chain, by an earlier run of this solver' },
        });
      return;
    }
    case 'kept':
      logKept(scope, deposit, decision);
      await updateDepositStatus(ctx.db, deposit.id, { status: 'consumed', fromStatus: 'confirmed', now: ctx.now() });
  }
}

function logKept(
  scope: SolverScope,
  deposit: DepositRecord,
  decision: Extract<Decision, { kind: 'done'; why: 'kept' }>,
): void {
  const { ctx } = scope;
  const at = { requestId: deposit.requestId, txHash: deposit.txHash, chainId: deposit.chainId };
  switch (decision.keep) {
    case 'gateway-depositor':
      ctx.metrics?.strayDepositHeld(deposit.chainId);
      ctx.log.error(
        { ...at, depositor: deposit.depositor, amount: deposit.amount.toString() },
        "deposit in the solver's own transaction names a gateway contract and no requester: held in the depository for the operator",
      );
      return;
    case 'released':
      ctx.log.warn(at, 'deposit for a request this database does not know, already released on chain: nothing to do');
      return;
    case 'filled':
      ctx.log.error(
        { ...at, filledOn: decision.filledOn },
        'deposit for a request this database does not know, filled on chain: not refunded; left in the depository',
      );
  }
}

function logStrayRefund(
  scope: SolverScope,
  deposit: DepositRecord,
  decision: Extract<Decision, { kind: 'strayRefund' }>,
): void {
  const { log } = scope.ctx;
  const { why } = decision;
  if (why === 'unknown-request') return;
  if (why === 'double-spend')
    log.warn(
      { requestId: deposit.requestId, txHash: deposit.txHash, status: decision.status },
      'second deposit for a paid request: refunding it (DOUBLE_SPEND)',
    );
  else
    log.warn(
      { requestId: deposit.requestId, txHash: deposit.txHash, chainId: deposit.chainId, why },
      'deposit that cannot pay for its order: refunding it on its own; the request is left as it was',
    );
}

/**
 * The deposit of a request the database does not know waits out its grace (`unknownDepositGraceSeconds`, counted
 * from the deposit's block) in a lane of its own, keyed by the deposit, and is then decided again. Nothing else
 * waits meanwhile; a solver stopping leaves the deposit `confirmed`, and the watcher hands it on again at the next
 * start.
 */
function holdUnknownDeposit(scope: SolverScope, deposit: DepositRecord): void {
  scope.ctx.log.warn(
    { requestId: deposit.requestId, txHash: deposit.txHash },
    'deposit for an unknown request: refunding the depositor unless a chain says its order was filled',
  );
  void scope.enqueue(`deposit:${deposit.id}`, async () => {
    if ((await getDeposit(scope.ctx.db, deposit.id))?.status !== 'confirmed') return;
    if (!(await scope.pause(await unknownDepositGraceLeftMs(scope, deposit)))) return;
    const claim: Claim = { kind: 'notOwn', why: 'orphan' };
    await act(scope, deposit, await decide(undefined, deposit, readsOf(scope, deposit, claim, { graceOver: true })));
  });
}

/**
 * What is left of the grace of a deposit for an unknown request: the grace less the deposit's age, the larger of the
 * time since the watcher recorded it and its depth in blocks times the block time (a rebuild reads old deposits
 * again: their grace is long over).
 */
async function unknownDepositGraceLeftMs(scope: SolverScope, deposit: DepositRecord): Promise<number> {
  const { ctx } = scope;
  const graceMs = (ctx.config.unknownDepositGraceSeconds ?? DEFAULT_UNKNOWN_DEPOSIT_GRACE_SECONDS) * 1_000;
  if (graceMs === 0) return 0;
  const seenMs = ctx.now() - deposit.createdAt;
  if (seenMs >= graceMs) return 0;
  const blockTimeMs = requireChain(ctx, deposit.chainId).blockTime * 1_000;
  const depth = (await scope.truth.head(deposit.chainId)) - deposit.blockNumber;
  const depthMs = depth > 0n ? Number(depth) * blockTimeMs : 0;
  return Math.max(0, graceMs - Math.max(seenMs, depthMs));
}

/** What a deposit's walk knows besides its claim. */
export interface WalkFacts {
  /** The request the walk started from (undefined: the database does not know it). */
  request?: RequestRecord | undefined;
  /** The request was handed on with the deposit (read by the confirmation): `latest` reads it again. */
  handed?: boolean;
  standing?: Standing;
  graceOver?: boolean;
  /** The fill's check reads, started before the claim (`startFillReads`). */
  early?: FillReads | undefined;
}

/** The reads `decide` may ask for a deposit's walk. */
export function readsOf(
  scope: SolverScope,
  deposit: DepositRecord,
  claim: Claim,
  facts: WalkFacts = {},
): DecisionReads {
  const { ctx } = scope;
  const { request, early } = facts;
  return {
    claim,
    ...(facts.standing === undefined ? {} : { standing: facts.standing }),
    ...(facts.graceOver === undefined ? {} : { graceOver: facts.graceOver }),
    async latest() {
      if (request === undefined) throw new Error('no request to read again');
      // Never deleted once a deposit carried its id.
      return facts.handed === true ? ((await getRequest(ctx.db, request.id)) ?? request) : request;
    },
    fresh: () => getRequest(ctx.db, deposit.requestId),
    carriedRefundTarget: () =>
      solverCarriedRefundTarget(ctx.db, requireChain(ctx, deposit.chainId), ctx.solver.address, deposit),
    released: () => isReleased(scope, deposit),
    filled: (paid) => scope.truth.filled(paid.destinationChainId, paid.id as Hex),
    filledAnywhere: () => filledAnywhere(scope, deposit.requestId as Hex),
    served: (paid) => scope.gate.served(paid),
    checks(paid) {
      if (early === undefined) readAheadFill(scope, paid);
      return validateOwnFill(scope, paid, deposit, early);
    },
    gate: (paid) => scope.gate.check(paid),
  };
}

/**
 * Whether any configured chain's fill contract filled request `requestId`: for a deposit whose request the database
 * does not know, and so whose destination it cannot tell. One indexed read per chain, all at once.
 */
async function filledAnywhere(scope: SolverScope, requestId: Hex): Promise<number | undefined> {
  const chains = scope.ctx.config.chains.map((chain) => chain.id);
  const filled = await Promise.all(chains.map((chainId) => scope.truth.filled(chainId, requestId)));
  return chains.find((_, i) => filled[i]);
}

/**
 * Decides a request its own deposit paid for (`pending`) and acts on it: after its claim, at a restart or a retry.
 * `early`: the fill's check reads started before the claim, used only when the claimed row asks for the same fill.
 */
export async function walkPaidRequest(
  scope: SolverScope,
  request: RequestRecord,
  deposit: DepositRecord,
  early?: FillReads,
): Promise<void> {
  const claim: Claim = { kind: 'claimed', request };
  await act(scope, deposit, await decide(request, deposit, readsOf(scope, deposit, claim, { request, early })));
}
