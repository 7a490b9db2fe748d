import type { Hex } from 'viem';
import { getLiveOutgoingTx } from '../../store/outgoingTxs.repository.js';
import { recordExecutionRevert } from '../../store/executionReverts.repository.js';
import { requireChain } from '../chains/requireChain.js';
import { isGatewayError } from '../errors.js';
import { crashPoint } from '../faults.js';
import { callsRevert } from '../fill/callsRevert.js';
import { fillTransaction } from '../fill/fillTransaction.js';
import type { SolverScope } from './scope.js';
import { setStatus } from './setStatus.js';
import { fillFactsOf, fillParametersOf } from './fillFacts.js';
import { callsOf } from './requestCalls.js';
import type { DepositRecord } from '../../records/deposit.js';
import type { RequestRecord } from '../../records/request.js';
import type { JsonObject } from '../../records/json.js';
import type { FailReason } from '../vocabulary/statusMachine.js';
import type { SentReceipt } from '../ports/solver.js';
import { type OutgoingTxRecord } from '../../records/outgoingTx.js';

/**
 * How a fill ended, for the executor (`execute.ts`), which refunds what is owed: `sent` (mined and recorded, or
 * moved on meanwhile), `rejected` (the node refused it or it never reached the chain: nothing was sent, the deposit
 * goes back or a fast fill fails), `reverted` (mined and reverted: the request is `failure`, its deposit goes back).
 */
export type FillEnd =
  | { kind: 'sent' }
  | { kind: 'rejected'; failReason: FailReason; details?: JsonObject }
  | { kind: 'reverted'; request: RequestRecord };

/**
 * Fills a request that passed its checks (`decide.ts`): builds and sends its fill transaction, then follows it
 * (`finishFill`); `deposit` is null for a fast fill whose deposit has not arrived.
 */
export async function fill(
  scope: SolverScope,
  request: RequestRecord,
  deposit: DepositRecord | null,
): Promise<FillEnd> {
  const { ctx } = scope;
  const sender = scope.senderOf(request.destinationChainId);
  const tx = fillOf(scope, request);
  // No read of the live fill first: the sender checks for one (its unique index decides) and answers CONFLICT,
  // sending nothing; only then is the live fill read (a retry, a restart's recovery). A fill right after its claim
  // saves that round trip.
  let record: OutgoingTxRecord | undefined;
  const gas = scope.simulatedGas.get(request.id);
  scope.simulatedGas.delete(request.id);
  try {
    record = await sender.send({
      requestId: request.id as Hex,
      kind: 'fill',
      ...tx,
      ...(gas === undefined ? {} : { gas }),
    });
    if (deposit !== null) ctx.metrics?.fillBroadcast((ctx.now() - deposit.createdAt) / 1000);
  } catch (sendError) {
    if (isGatewayError(sendError) && sendError.code === 'CONFLICT')
      record = await getLiveOutgoingTx(ctx.db, request.id, 'fill');
    if (record === undefined) {
      // The node refused the fill outright (nothing was broadcast, the nonce was released): refund.
      const error = fillRevert(scope, request, sendError);
      const failReason = rejectedFillReason(error);
      if (failReason === null) throw error;
      if (!isGatewayError(error)) return { kind: 'rejected', failReason };
      return { kind: 'rejected', failReason, details: { message: error.message, revert: error.data ?? null } };
    }
  }
  // A fill the node rejected before a crash: it never reached the chain.
  if (record.status === 'failed' && record.nonce === null)
    return { kind: 'rejected', failReason: 'EXECUTION_REVERTED' };
  const hash = record.hashes.at(-1);
  // Written with the other fills' moves that come while one is being written (`createSubmitTogether`); the fill's
  // end is then written from the row as that move left it, so its event is built in its own statement.
  const submitted = hash === undefined ? null : await scope.submitTogether(request, hash);
  crashPoint(ctx.config.crashAt, 'fill-submitted');
  return finishFill(scope, submitted ?? request, deposit, record.id);
}

/** Waits for a sent fill's receipt: `success` with the actual fees, or `failure` (`reverted`, to refund). */
export async function finishFill(
  scope: SolverScope,
  request: RequestRecord,
  deposit: DepositRecord | null,
  outgoingTxId: number,
): Promise<FillEnd> {
  const { ctx } = scope;
  const receipt = await scope.senderOf(request.destinationChainId).waitForReceipt(outgoingTxId);
  ctx.market.invalidateSolverBalances(request.destinationChainId);
  if (receipt.status === 'success') {
    const succeeded = await setStatus(ctx, request, 'succeed', {
      txHash: receipt.hash,
      feesActual: actualFees(request, receipt),
      fill: fillFactsOf(ctx, request),
    });
    if (succeeded !== null && deposit !== null) ctx.metrics?.depositSucceeded((ctx.now() - deposit.createdAt) / 1000);
    return { kind: 'sent' };
  }
  // The fill's gas is recorded with the failure: a fill with calls that reverts is paid from its deposit (`refund.ts`).
  const failed = await setStatus(ctx, request, 'fail', {
    txHash: receipt.hash,
    failReason: 'TRANSACTION_REVERTED',
    feesActual: actualFees(request, receipt),
  });
  if (callsOf(request).length > 0) {
    // The calls passed their simulation and reverted once mined: their requester is refused for a while.
    await recordExecutionRevert(ctx.db, {
      chainId: request.destinationChainId,
      txHash: receipt.hash,
      kind: 'fill',
      requestId: request.id,
      user: request.user,
      apiKeyId: request.apiKeyId,
      createdAt: ctx.now(),
    });
  }
  crashPoint(ctx.config.crashAt, 'fill-reverted');
  return failed === null ? { kind: 'sent' } : { kind: 'reverted', request: failed };
}

/** The fill transaction of a request: the solver's fill contract delivers the output and runs the user's calls. */
export const fillOf = (scope: SolverScope, request: RequestRecord) =>
  fillTransaction(fillParametersOf(scope.ctx, request));

/**
 * A fill's revert as the user needs it: when the request has calls, the message names the calls' target
 * and the call's decoded revert (as the quote's simulation does), not the solver's fill contract.
 */
export const fillRevert = (scope: SolverScope, request: RequestRecord, error: unknown): unknown =>
  callsRevert(callsOf(request), requireChain(scope.ctx, request.destinationChainId).displayName, error);

/** The failReason of a fill the node refused to accept, or null for an error that is not a refusal. */
function rejectedFillReason(error: unknown): FailReason | null {
  if (!isGatewayError(error)) return null;
  if (error.code === 'INSUFFICIENT_LIQUIDITY') return 'SOLVER_BALANCE_TOO_LOW';
  if (error.code === 'DESTINATION_TX_FAILED') return 'EXECUTION_REVERTED';
  return null;
}

function actualFees(request: RequestRecord, receipt: SentReceipt): JsonObject {
  return {
    // A gasless batch recorded its origin gas in the actual fees when it was accepted.
    ...(request.feesActual ?? request.feesQuoted),
    fillGasUsed: receipt.gasUsed.toString(),
    fillGasPrice: receipt.effectiveGasPrice.toString(),
    ...(receipt.l1Fee === undefined ? {} : { fillL1Fee: receipt.l1Fee.toString() }),
  };
}
