import type { Address, Hex } from 'viem';
import type { DepositRecord } from '../../store/deposits.repository.js';
import { getLiveOutgoingTx, type OutgoingTxRecord } from '../../store/outgoingTxs.repository.js';
import { recordExecutionRevert } from '../../store/executionReverts.repository.js';
import type { RequestRecord } from '../../store/requestRecord.js';
import type { JsonObject } from '../../store/tables.js';
import { requireChain } from '../chains/requireChain.js';
import { isGatewayError } from '../errors.js';
import { crashPoint } from '../faults.js';
import { callsRevert } from '../fill/callsRevert.js';
import { fillTransaction } from '../fill/fillTransaction.js';
import type { FailReason } from '../requests/statusMachine.js';
import type { SentReceipt } from './ports.js';
import { attachedDeposit, refundOrFail, refundRequest } from './refund.js';
import type { SolverScope } from './scope.js';
import { setStatus } from './setStatus.js';
import { callsOf, gasTopupOf } from './requestCalls.js';
import { dexSwapOf } from './dexFill.js';

/**
 * Fills a request that passed its checks (`decide.ts`); `deposit` is null for a fast fill whose deposit has not
 * arrived (nothing to refund then).
 */
export async function fill(scope: SolverScope, request: RequestRecord, deposit: DepositRecord | null): Promise<void> {
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
      const reason = rejectedFillReason(error);
      if (reason === null) throw error;
      await refundOrFail(
        scope,
        request,
        deposit,
        reason,
        isGatewayError(error) ? { message: error.message, revert: error.data ?? null } : undefined,
      );
      return;
    }
  }
  if (record.status === 'failed' && record.nonce === null) {
    // A fill the node rejected before a crash: it never reached the chain.
    await refundOrFail(scope, request, deposit, 'EXECUTION_REVERTED');
    return;
  }
  const hash = record.hashes.at(-1);
  // Written with the other fills' moves that come while one is being written (`createSubmitTogether`).
  if (hash !== undefined) await scope.submitTogether(request, hash);
  crashPoint(ctx.config.crashAt, 'fill-submitted');
  await finishFill(scope, request, deposit, record.id);
}

/** Waits for a sent fill's receipt: `success` with the actual fees, or `failure` and a refund when it reverted. */
export async function finishFill(
  scope: SolverScope,
  request: RequestRecord,
  deposit: DepositRecord | null,
  outgoingTxId: number,
): Promise<void> {
  const { ctx } = scope;
  const receipt = await scope.senderOf(request.destinationChainId).waitForReceipt(outgoingTxId);
  ctx.market.invalidateSolverBalances(request.destinationChainId);
  if (receipt.status === 'success') {
    const succeeded = await setStatus(ctx, request, 'succeed', {
      txHash: receipt.hash,
      feesActual: actualFees(request, receipt),
    });
    if (succeeded !== null && deposit !== null) ctx.metrics?.depositSucceeded((ctx.now() - deposit.createdAt) / 1000);
    return;
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
  const paid = deposit ?? (failed === null ? null : await attachedDeposit(ctx.db, failed));
  if (failed !== null && paid !== null) await refundRequest(scope, failed, paid, 'TRANSACTION_REVERTED');
}

/** The fill transaction of a request: the solver's fill contract delivers the output and runs the user's calls. */
export function fillOf(scope: SolverScope, request: RequestRecord) {
  const destination = requireChain(scope.ctx, request.destinationChainId);
  const calls = callsOf(request);
  return fillTransaction({
    requestId: request.id as Hex,
    contracts: destination.contracts,
    solver: scope.ctx.solver.address,
    recipient: request.recipient as Address,
    currency: request.destinationCurrency as Address,
    amount: request.amountOut,
    calls,
    gasTopup: gasTopupOf(request),
    dexSwap: dexSwapOf(request),
  });
}

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
