import { zeroAddress, type Hex } from 'viem';
import type { DepositRecord } from '../../store/deposits.repository.js';
import type { RequestRecord } from '../../store/requestRecord.js';
import type { JsonObject } from '../../store/tables.js';
import { isGatewayError } from '../errors.js';
import { withGasMargin } from '../gasMargin.js';
import { requireChain } from '../chains/requireChain.js';
import { callsGasCap } from '../limits/gasCaps.js';
import type { FailReason } from '../requests/statusMachine.js';
import { fill, fillOf, fillRevert } from './fill.js';
import { refundRequest } from './refund.js';
import type { SolverScope } from './scope.js';
import { setStatus } from './setStatus.js';
import { gasTopupOf } from './requestCalls.js';
import { fillOutflow } from './dexFill.js';
import { destinationLegOf } from '../dex/legRecord.js';
import { repriceDexLeg } from './repriceDexLeg.js';

/** The `failReason` of a refund its depositor asked for (`selfRefund.ts`), recorded while the request is pending. */
export const REFUND_REQUESTED = 'MANUAL_ADMIN_REFUND' satisfies FailReason;

/** Why a request cannot be filled, as its status will say. */
export interface FillBlock {
  failReason: FailReason;
  details?: JsonObject;
}

/**
 * Decides a request its deposit paid for: re-validated (the deposit, the expiry, the solver's balance, a
 * simulation of the fill), then the fill gate; filled, refunded with its `failReason`, or held by the gate.
 * `early`: the chain reads of the checks, started before the claim from the record the deposit was handed on with
 * (`startFillReads`); used only when the claimed row asks for the very same fill.
 */
export async function decideAndFill(
  scope: SolverScope,
  request: RequestRecord,
  deposit: DepositRecord,
  early?: FillReads,
): Promise<void> {
  // Its depositor asked for the refund (recorded in the request's lane before it was sent: a restart lands here).
  if (request.status === 'pending' && request.failReason === REFUND_REQUESTED) {
    await refundRequest(scope, request, deposit, REFUND_REQUESTED, (request.details as JsonObject | null) ?? undefined);
    return;
  }
  const served = scope.gate.served(request);
  if (served.kind === 'refund') await refundRequest(scope, request, deposit, served.failReason, served.details);
  if (served.kind !== 'fill') return;
  if (early === undefined) readAheadFill(scope, request);
  // Read while the checks run (both only read): a fill waits for the slower of the two.
  const released = isReleased(scope, deposit);
  released.catch(() => undefined);
  const reason = await validate(scope, request, deposit, early);
  if (await released) {
    scope.simulatedGas.delete(request.id);
    await endReleased(scope, request, deposit);
    return;
  }
  if (reason !== null) {
    await refundRequest(scope, request, deposit, reason.failReason, reason.details);
    return;
  }
  const gate = await scope.gate.check(request);
  if (gate.kind === 'refund') await refundRequest(scope, request, deposit, gate.failReason, gate.details);
  if (gate.kind !== 'fill') return;
  await fill(scope, request, deposit);
}

/**
 * The chain decides before money leaves: a deposit the depository already released was refunded or settled by this
 * key with a database that is not this one (lost, older, another gateway's), so its request is not filled (nor
 * refunded) again. The request ends as the chain says: `success` when its order is filled, else `refund`.
 */
async function endReleased(scope: SolverScope, request: RequestRecord, deposit: DepositRecord): Promise<void> {
  const filled = await scope.truth.filled(request.destinationChainId, request.id as Hex);
  scope.ctx.log.error(
    { requestId: request.id, txHash: deposit.txHash, chainId: deposit.chainId, filled },
    'not filling: the deposit was already released on chain (the database did not know)',
  );
  if (filled) await setStatus(scope.ctx, request, 'succeed');
  else
    await setStatus(scope.ctx, request, 'refund', {
      details: { message: 'The deposit was already released on chain, by an earlier run of this solver' },
    });
}

/** Whether the depository released `deposit` (false for a deposit the receiver forwarded: it has no index). */
const isReleased = async (scope: SolverScope, deposit: DepositRecord): Promise<boolean> =>
  deposit.depositIndex !== null && scope.truth.released(deposit.chainId, deposit.depositIndex);

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
    const leg = destinationLegOf(request.quote);
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

async function validate(
  scope: SolverScope,
  request: RequestRecord,
  deposit: DepositRecord,
  early: FillReads | undefined,
): Promise<FillBlock | null> {
  // Stray deposits never get here (`judgeDeposit`); kept for requests claimed before that rule existed.
  if (
    deposit.chainId !== request.originChainId ||
    deposit.token.toLowerCase() !== request.originCurrency.toLowerCase()
  ) {
    return { failReason: 'ORIGIN_CURRENCY_MISMATCH' };
  }
  if (deposit.amount < request.amountIn) return { failReason: 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL' };
  return validateFill(scope, request, early);
}
