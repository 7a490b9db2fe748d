import type { DepositRecord } from '../../records/deposit.js';
import type { OutgoingTxRecord } from '../../records/outgoingTx.js';
import type { RequestRecord } from '../../records/request.js';
import type { FailReason } from '../vocabulary/statusMachine.js';

/**
 * What the solver does with a request it picks up again from its records (a restart, a retry: `recovery.ts`), decided
 * from what is recorded (`decideRecovery`) and acted on by one executor (`actRecovery`, `execute.ts`):
 *
 * - `followFastFill`: a fast fill (no deposit attached) was sent: it is followed to its end.
 * - `sendFastFill`: a pending fast fill (no deposit attached) was never sent: it is sent.
 * - `nothing`: a fast fill neither sent nor to be sent (the request is past `pending`): nothing is owed yet.
 * - `operator`: the request is past `waiting` but no deposit is attached: left for an operator.
 * - `awaitRefund`: a refund was sent: its receipt ends the request, `refund` with `failReason`, or `refundFail`.
 * - `refund`: the deposit goes back with `failReason`. `unrefunded-failure`: the request is `failure` (its fill
 *   reverted) and its refund was never recorded; `rejected-fill`: the node refused the fill before a crash (recorded
 *   `failed` with no nonce), so it never reached the chain.
 * - `followFill`: a fill was sent: it is followed to its end, after moving the request to `submitted` with the
 *   fill's last hash when `submit` names one (the move a crash cut off).
 * - `walk`: nothing was sent for the paid request: it is decided as after its claim (`walkPaidRequest`).
 */
export type RecoveryDecision =
  | { kind: 'followFastFill'; request: RequestRecord; fillTxId: number }
  | { kind: 'sendFastFill'; request: RequestRecord }
  | { kind: 'nothing'; why: 'fast-fill-unsent' }
  | { kind: 'operator'; why: 'deposit-missing'; request: RequestRecord }
  | { kind: 'awaitRefund'; request: RequestRecord; deposit: DepositRecord; refundTxId: number; failReason: string }
  | {
      kind: 'refund';
      why: 'unrefunded-failure' | 'rejected-fill';
      request: RequestRecord;
      deposit: DepositRecord;
      failReason: FailReason;
    }
  | { kind: 'followFill'; request: RequestRecord; deposit: DepositRecord; fillTxId: number; submit: string | null }
  | { kind: 'walk'; request: RequestRecord; deposit: DepositRecord };

/**
 * What `decideRecovery` may read from the records, each only when the decision needs it (so the table states which
 * branch reads what, and a `failure` never reads its fill, nor a fast fill its refund).
 */
export interface RecoveryReads {
  /** The request's own deposit, consumed by its claim (`attachedDeposit`), or null. */
  deposit(): Promise<DepositRecord | null>;
  /** The request's live fill (`getLiveOutgoingTx(…, 'fill')`): sent, or recorded to be sent. */
  fill(): Promise<OutgoingTxRecord | undefined>;
  /** The request's live refund (`getLiveOutgoingTx(…, 'refund')`). */
  refund(): Promise<OutgoingTxRecord | undefined>;
}

/**
 * Decides what a request in flight (`pending`, `submitted`, or `failure` with its refund not done) still owes, from
 * its recorded transactions. Only decides: `actRecovery` acts on it. The order is the rule: a fast fill before the
 * deposit's absence, a sent refund before anything else, a `failure` before its fill (whose reverted receipt would
 * only be found again, leaving the deposit unrefunded), a fill the node refused before a fill to follow.
 */
export async function decideRecovery(request: RequestRecord, reads: RecoveryReads): Promise<RecoveryDecision> {
  const deposit = await reads.deposit();
  if (deposit === null && request.fastFill !== null) {
    const fastFillTx = await reads.fill();
    if (fastFillTx !== undefined) return { kind: 'followFastFill', request, fillTxId: fastFillTx.id };
    if (request.status === 'pending') return { kind: 'sendFastFill', request };
    return { kind: 'nothing', why: 'fast-fill-unsent' };
  }
  if (deposit === null) return { kind: 'operator', why: 'deposit-missing', request };
  const refundTx = await reads.refund();
  if (refundTx !== undefined)
    return {
      kind: 'awaitRefund',
      request,
      deposit,
      refundTxId: refundTx.id,
      failReason: request.failReason ?? 'UNKNOWN',
    };
  if (request.status === 'failure') {
    const failReason = (request.failReason as FailReason | null) ?? 'TRANSACTION_REVERTED';
    return { kind: 'refund', why: 'unrefunded-failure', request, deposit, failReason };
  }
  const fillTx = await reads.fill();
  if (fillTx === undefined) return { kind: 'walk', request, deposit };
  if (fillTx.status === 'failed' && fillTx.nonce === null)
    return { kind: 'refund', why: 'rejected-fill', request, deposit, failReason: 'EXECUTION_REVERTED' };
  const submit = request.status === 'pending' ? (fillTx.hashes.at(-1) ?? null) : null;
  return { kind: 'followFill', request, deposit, fillTxId: fillTx.id, submit };
}
