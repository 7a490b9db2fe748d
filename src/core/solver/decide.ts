import type { Address } from 'viem';
import type { DepositRecord } from '../../store/deposits.repository.js';
import type { RequestRecord } from '../../store/requestRecord.js';
import type { JsonObject } from '../../store/tables.js';
import { isGatewayError } from '../errors.js';
import { withGasMargin } from '../gasMargin.js';
import type { FailReason } from '../requests/statusMachine.js';
import { fill, fillOf, fillRevert } from './fill.js';
import { refundRequest } from './refund.js';
import type { SolverScope } from './scope.js';

/** Why a request cannot be filled, as its status will say. */
export interface FillBlock {
  failReason: FailReason;
  details?: JsonObject;
}

/**
 * Decides a request its deposit paid for: re-validated (the deposit, the expiry, the solver's balance, a
 * simulation of the fill), then the fill gate; filled, refunded with its `failReason`, or held by the gate.
 */
export async function decideAndFill(scope: SolverScope, request: RequestRecord, deposit: DepositRecord): Promise<void> {
  // The fill's fee caps are read while it is validated and re-priced (the sender keeps them for the head).
  readAheadFill(scope, request);
  const reason = await validate(scope, request, deposit);
  if (reason !== null) {
    await refundRequest(scope, request, deposit, reason.failReason, reason.details);
    return;
  }
  const gate = await scope.gate.check(request);
  if (gate.kind === 'refund') await refundRequest(scope, request, deposit, gate.failReason, gate.details);
  if (gate.kind !== 'fill') return;
  await fill(scope, request, deposit);
}

/** Starts the destination sender's read ahead of a fill (`TransactionSender.readAhead`); none without a sender. */
function readAheadFill(scope: SolverScope, request: RequestRecord): void {
  let sender;
  try {
    sender = scope.senderOf(request.destinationChainId);
  } catch {
    return; // The fill finds out, if the request gets that far (it may be refunded before).
  }
  sender.readAhead();
}

/** What a fill needs whatever paid for it: the order is live, the solver holds the output, the fill simulates. */
export async function validateFill(scope: SolverScope, request: RequestRecord): Promise<FillBlock | null> {
  const { ctx } = scope;
  if (ctx.now() > request.expiresAt) return { failReason: 'ORDER_EXPIRED' };
  // The balance read and the simulation are independent: both at once (a fill waits on the slower one only).
  const [balance, simulation] = await Promise.all([
    ctx.market.balanceOf(request.destinationChainId, ctx.solver.address, request.destinationCurrency as Address),
    ctx.market.estimateGas(request.destinationChainId, { from: ctx.solver.address, ...fillOf(scope, request) }).then(
      (gas) => ({ gas }),
      (error: unknown) => ({ error: fillRevert(scope, request, error) }),
    ),
  ]);
  if (balance < request.amountOut) return { failReason: 'SOLVER_BALANCE_TOO_LOW' };
  if ('error' in simulation) {
    const { error } = simulation;
    if (isGatewayError(error) && error.code === 'DESTINATION_TX_FAILED') {
      return { failReason: 'EXECUTION_REVERTED', details: { message: error.message, revert: error.data ?? null } };
    }
    throw error;
  }
  // The simulation's estimate is the fill's gas limit (plus a margin): no second estimate before sending.
  scope.simulatedGas.set(request.id, withGasMargin(simulation.gas));
  return null;
}

async function validate(scope: SolverScope, request: RequestRecord, deposit: DepositRecord): Promise<FillBlock | null> {
  // Stray deposits never get here (`judgeDeposit`); kept for requests claimed before that rule existed.
  if (
    deposit.chainId !== request.originChainId ||
    deposit.token.toLowerCase() !== request.originCurrency.toLowerCase()
  ) {
    return { failReason: 'ORIGIN_CURRENCY_MISMATCH' };
  }
  if (deposit.amount < request.amountIn) return { failReason: 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL' };
  return validateFill(scope, request);
}
