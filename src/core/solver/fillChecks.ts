import { zeroAddress } from 'viem';
import { fillOutflow, gasTopupOf } from '../fill/fillOutflow.js';
import { dexLegsOf } from '../dex/legRecord.js';
import { repriceDexLeg } from './repriceDexLeg.js';
import { isGatewayError } from '../errors.js';
import { withGasMargin } from '../gasMargin.js';
import { requireChain } from '../chains/requireChain.js';
import { callsGasCap } from '../limits/gasCaps.js';
import { judgeDeposit } from '../deposits/depositMatch.js';
import { fillOf, fillRevert } from './fill.js';
import type { SolverScope } from './scope.js';
import type { DepositRecord } from '../../records/deposit.js';
import type { RequestRecord } from '../../records/request.js';
import type { JsonObject } from '../../records/json.js';
import type { FailReason } from '../vocabulary/statusMachine.js';

/** Why a request cannot be filled, as its status will say. */
export interface FillBlock {
  failReason: FailReason;
  details?: JsonObject;
}

/** Whether the depository released `deposit` (false for a deposit the receiver forwarded: it has no index). */
export const isReleased = async (scope: SolverScope, deposit: DepositRecord): Promise<boolean> =>
  deposit.depositIndex !== null && scope.truth.released(deposit.chainId, deposit.depositIndex);

/** Starts the destination sender's read ahead of a fill (`TransactionSender.readAhead`); none without a sender. */
export function readAheadFill(scope: SolverScope, request: RequestRecord): void {
  let sender;
  try {
    sender = scope.senderOf(request.destinationChainId);
  } catch {
    return; // The fill finds out, if the request gets that far (it may be refunded before).
  }
  sender.readAhead();
}

/** The chain reads of a fill's checks, under way: the solver's balance of the output and the fill's simulation. */
export interface FillReads {
  chainId: number;
  currency: string;
  /** The fill simulated: what the claimed request's fill must be for these reads to be its own. */
  tx: { to: string; data: string; value: bigint };
  balance: Promise<bigint>;
  simulation: Promise<{ gas: bigint } | { error: unknown }>;
}

/** Starts a fill's check reads for `request` (and the sender's fee caps), without waiting for them. */
function readFillChecks(scope: SolverScope, request: RequestRecord): FillReads {
  const { ctx } = scope;
  const tx = fillOf(scope, request);
  // What leaves the solver: the output, or the currency a DEX leg spends to buy it.
  const currency = fillOutflow(request).currency;
  const balance = ctx.market.balanceOf(request.destinationChainId, ctx.solver.address, currency);
  // Awaited later, or never (a claim that does not go through): not an unhandled rejection meanwhile.
  balance.catch(() => undefined);
  const simulation = ctx.market.estimateGas(request.destinationChainId, { from: ctx.solver.address, ...tx }).then(
    (gas) => ({ gas }),
    (error: unknown) => ({ error: fillRevert(scope, request, error) }),
  );
  return { chainId: request.destinationChainId, currency: currency.toLowerCase(), tx, balance, simulation };
}

/**
 * The check reads of a deposit's fill started before its claim, from the request record it was handed on with,
 * so that they overlap the claim's transaction (they are reads: nothing is sent or written). Undefined when they
 * cannot start (the fill's chain is not configured: the decision finds out).
 */
export function startFillReads(scope: SolverScope, request: RequestRecord): FillReads | undefined {
  try {
    readAheadFill(scope, request);
    return readFillChecks(scope, request);
  } catch {
    return undefined;
  }
}

/** What a fill needs whatever paid for it: the order is live, the solver holds the output, the fill simulates. */
export async function validateFill(
  scope: SolverScope,
  request: RequestRecord,
  early?: FillReads,
): Promise<FillBlock | null> {
  const { ctx } = scope;
  if (ctx.now() > request.expiresAt) return { failReason: 'ORDER_EXPIRED' };
  // The balance read and the simulation are independent: both at once (a fill waits on the slower one only). Reads
  // started early serve only the same fill of the same output (a request's amount out can change: a gasless batch).
  const reads = early !== undefined && sameFill(scope, early, request) ? early : readFillChecks(scope, request);
  const [balance, simulation] = await Promise.all([reads.balance, reads.simulation]);
  if (balance < fillOutflow(request).amount) return { failReason: 'SOLVER_BALANCE_TOO_LOW' };
  // A gas top-up is paid from the solver's native balance besides the output: without it the fill cannot be sent.
  const gasTopup = gasTopupOf(request);
  if (
    gasTopup > 0n &&
    (await ctx.market.balanceOf(request.destinationChainId, ctx.solver.address, zeroAddress)) < gasTopup
  )
    return { failReason: 'SOLVER_BALANCE_TOO_LOW' };
  if ('error' in simulation) {
    const { error } = simulation;
    // A fill buying its output through the pools reverts when they moved below the order's minimum: that is
    // slippage, refunded as such, not a failed execution.
    const leg = dexLegsOf(request.quote).destination;
    const moved = leg === undefined ? null : await repriceDexLeg(ctx, request, leg);
    if (moved !== null && !moved.ok) return { failReason: 'SLIPPAGE', details: { message: moved.why } };
    if (isGatewayError(error) && error.code === 'DESTINATION_TX_FAILED') {
      return { failReason: 'EXECUTION_REVERTED', details: { message: error.message, revert: error.data ?? null } };
    }
    throw error;
  }
  // The simulation's estimate is the fill's gas limit (plus a margin): no second estimate before sending.
  const gas = withGasMargin(simulation.gas);
  const cap = callsGasCap(requireChain(ctx, request.destinationChainId));
  if (Array.isArray(request.quote.calls) && request.quote.calls.length > 0 && gas > cap) {
    // The calls need more now than when they were quoted: more than the solver risks on calls (the quote's cap).
    const message = `The calls need ${gas} gas with the fill (margin included), more than the cap of ${cap}`;
    return { failReason: 'EXECUTION_REVERTED', details: { message, revert: null } };
  }
  scope.simulatedGas.set(request.id, gas);
  return null;
}

/** Whether reads started for one record are the checks of `request`'s fill: the same output, the same transaction. */
function sameFill(scope: SolverScope, early: FillReads, request: RequestRecord): boolean {
  const tx = fillOf(scope, request);
  return (
    early.chainId === request.destinationChainId &&
    early.currency === fillOutflow(request).currency.toLowerCase() &&
    early.tx.to.toLowerCase() === tx.to.toLowerCase() &&
    early.tx.data === tx.data &&
    early.tx.value === tx.value
  );
}

/**
 * The checks of a fill its request's own deposit paid for: the deposit matches the order (`judgeDeposit`: a stray
 * deposit never gets here, but a request claimed before that rule existed may), then `validateFill`.
 */
export async function validateOwnFill(
  scope: SolverScope,
  request: RequestRecord,
  deposit: DepositRecord,
  early: FillReads | undefined,
): Promise<FillBlock | null> {
  const verdict = judgeDeposit(request, deposit);
  if (verdict.kind === 'stray' && (verdict.why === 'other-chain' || verdict.why === 'other-currency'))
    return { failReason: 'ORIGIN_CURRENCY_MISMATCH' };
  if (verdict.kind !== 'pays') return { failReason: 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL' };
  return validateFill(scope, request, early);
}
