import type { Address } from 'viem';
import type { Claim } from './claims.js';
import { judgeDeposit, type DepositVerdict, type StrayReason } from '../deposits/depositMatch.js';
import type { FillBlock } from './fillChecks.js';
import type { FillGateDecision } from './fillGate.js';
import { depositOwner } from './solverCarrier.js';
import type { DepositRecord } from '../../records/deposit.js';
import type { RequestRecord } from '../../records/request.js';
import type { RequestStatus } from '../../records/requestStatus.js';
import type { JsonObject } from '../../records/json.js';
import type { FailReason } from '../vocabulary/statusMachine.js';
import type { SelfRefundDecision } from '../ports/selfRefundDecision.js';

/** The `failReason` of a refund its depositor asked for (`selfRefund.ts`), recorded while the request is pending. */
export const REFUND_REQUESTED = 'MANUAL_ADMIN_REFUND' satisfies FailReason;

/** Why a deposit is refunded on its own: it cannot pay its order, pays one already paid, or names no known request. */
export type StrayRefundReason = StrayReason | 'double-spend' | 'unknown-request';

/**
 * What the solver does with a deposit and its request, decided from what it read (`decide`) and acted on by one
 * executor (`execute.ts`):
 *
 * - `fill`: the request passed its checks and the fill gate: its fill is sent (`fill.ts`).
 * - `refund`: the request's own deposit goes back with `failReason`; the request ends `refund` (or `failure`).
 * - `strayRefund`: a deposit that is not its request's own goes back to `refundTo` on its own, in a lane of its own;
 *   the request is left as it was (its `txHashes` show the refund when `shownOn` names it).
 * - `hold`: nothing now. `gate`: the fill gate holds the paid request and tries it again; `unknown-request`: the
 *   deposit of a request the database does not know waits out its grace in a lane of its own, then is decided again.
 * - `done`: nothing is sent. `taken` (another claim got the deposit), `fast-fill-paid` (it paid a fast fill);
 *   `released`: the depository already released the deposit, and the request ends as the chain says (`filled`);
 *   `kept`: the deposit stays in the depository (its refund would go to a gateway contract, the chain released it
 *   already, or its unknown request was filled on chain `filledOn`).
 */
export type Decision =
  | { kind: 'fill'; request: RequestRecord }
  | {
      kind: 'refund';
      request: RequestRecord;
      failReason: FailReason;
      details?: JsonObject;
      /** A fast fill failed before the deposit that pays for it arrived. */
      fastFillFailed?: true;
    }
  | {
      kind: 'strayRefund';
      why: StrayRefundReason;
      refundTo: Address;
      shownOn: string | null;
      /** The status of the request a double spend came for. */
      status?: RequestStatus;
    }
  | { kind: 'hold'; why: 'gate'; reason: string }
  | { kind: 'hold'; why: 'unknown-request' }
  | { kind: 'done'; why: 'taken' | 'fast-fill-paid' }
  | { kind: 'done'; why: 'released'; request: RequestRecord; filled: boolean }
  | { kind: 'done'; why: 'kept'; keep: 'gateway-depositor' | 'released' | 'filled'; filledOn?: number };

/**
 * What a deposit is to its request before it is claimed: `verdict` (`judgeDeposit`; undefined for a request the
 * database does not know) and whether it came from a sweep of the request's own deposit address.
 */
export interface Standing {
  verdict: DepositVerdict | undefined;
  swept: boolean;
}

/**
 * A deposit's standing. One the solver's own transaction carried is the order user's own only when that transaction
 * is positively theirs: a sweep of the request's own deposit address (`src/core/depositAddresses/processor.ts`), their
 * permit or their gasless batch. Any other (nested in a fill, a call quote's calls, someone else's batch) pays no
 * request and spoils none: it is refunded on its own (`solverCarrier.ts`).
 */
export function standingOf(request: RequestRecord | undefined, deposit: DepositRecord, solver: string): Standing {
  if (request === undefined) return { verdict: undefined, swept: false };
  const owner = depositOwner(request, deposit, solver);
  if (owner === 'in-solver-transaction')
    return { verdict: { kind: 'stray', why: 'in-solver-transaction' }, swept: false };
  return {
    verdict: judgeDeposit(request, owner === 'user' ? { ...deposit, sender: request.user } : deposit),
    swept: owner === 'user' && deposit.carrier !== null && deposit.carrier.startsWith('sweep:'),
  };
}

/**
 * What `decide` may read, each only when the decision needs it (they are reads: nothing is sent or written, but
 * the fill gate keeps its holds and admitted outflow).
 */
export interface DecisionReads {
  /** What the deposit's claim found (`claims.ts`); a request picked up again with its deposit is `claimed`. */
  claim: Claim;
  /** The deposit's standing before its claim: read for a deposit that is not its request's own. */
  standing?: Standing;
  /** A deposit of an unknown request: it has waited out its grace. */
  graceOver?: boolean;
  /** The request as it is now (a record handed on with the deposit may be old). */
  latest(): Promise<RequestRecord>;
  /** The request read again, whatever record the walk holds (a fast fill's outcome). */
  fresh(): Promise<RequestRecord | undefined>;
  /** Where a deposit the solver's own transaction carried goes back to; null when only a gateway contract is named. */
  carriedRefundTarget(): Promise<Address | null>;
  /** Whether the depository released the deposit already (refunded or settled). */
  released(): Promise<boolean>;
  /** Whether the destination's fill contract filled the request's order. */
  filled(request: RequestRecord): Promise<boolean>;
  /** The chain whose fill contract filled the deposit's request id, if any (the request is unknown). */
  filledAnywhere(): Promise<number | undefined>;
  /** Whether the destination is served now (`FillGate.served`). */
  served(request: RequestRecord): FillGateDecision;
  /** The checks of a fill the deposit paid for: the deposit, the expiry, the balance, the simulation. */
  checks(request: RequestRecord): Promise<FillBlock | null>;
  /** The last check before a fill: prices and the outflow limit (`FillGate.check`). */
  gate(request: RequestRecord): Promise<FillGateDecision>;
}

/**
 * Decides what happens to a claimed deposit (`reads.claim`) and its request (undefined when the database does not
 * know it). Only decides: what it decides is acted on by `act` (`execute.ts`).
 */
export async function decide(
  request: RequestRecord | undefined,
  deposit: DepositRecord,
  reads: DecisionReads,
): Promise<Decision> {
  const { claim } = reads;
  switch (claim.kind) {
    case 'taken':
      return { kind: 'done', why: 'taken' };
    case 'fastFill':
      return decideFastFillDeposit(reads);
    case 'claimed':
      return decideRequest(claim.request, reads);
    case 'notOwn':
      if (request === undefined || claim.why === 'orphan') return decideUnknownRequest(deposit, reads);
      return decideNotOwn(request, deposit, claim.why, reads);
  }
}

/** A deposit recorded on a fast-filled request: refunded when the fast fill failed (and no refund was decided yet). */
async function decideFastFillDeposit(reads: DecisionReads): Promise<Decision> {
  const paid = await reads.fresh();
  if (paid === undefined || paid.status !== 'failure' || paid.refundFailReason !== null)
    return { kind: 'done', why: 'fast-fill-paid' };
  const failReason = (paid.failReason as FailReason | null) ?? 'EXECUTION_REVERTED';
  return { kind: 'refund', request: paid, failReason, fastFillFailed: true };
}

/**
 * The deposit of a request the database does not know. The database may have lost the request (deleted, restored
 * from an older backup, another database used with the same key): when any chain's fill contract filled its request
 * id, the deposit paid for that fill and is not refunded. The chains are read after the grace
 * (`unknownDepositGraceSeconds`): a request of another gateway with the same key is filled within it, and a fill still
 * in flight when the chains were read would be paid twice by the refund.
 */
async function decideUnknownRequest(deposit: DepositRecord, reads: DecisionReads): Promise<Decision> {
  if (reads.graceOver !== true) return { kind: 'hold', why: 'unknown-request' };
  // Refunded or settled already (a rebuild from chain events reads old deposits again): nothing is owed.
  if (await reads.released()) return { kind: 'done', why: 'kept', keep: 'released' };
  const filledOn = await reads.filledAnywhere();
  if (filledOn !== undefined) return { kind: 'done', why: 'kept', keep: 'filled', filledOn };
  return { kind: 'strayRefund', why: 'unknown-request', refundTo: deposit.depositor as Address, shownOn: null };
}

/** A deposit that cannot pay its order (`stray`) or pays one already paid (`extra`, a double spend). */
async function decideNotOwn(
  request: RequestRecord,
  deposit: DepositRecord,
  why: 'stray' | 'extra',
  reads: DecisionReads,
): Promise<Decision> {
  const swept = reads.standing?.swept ?? false;
  const latest = await reads.latest();
  // A swept deposit refunded on its own beside a request already paid is a leg of the address's transfer (a strict
  // over-payment's excess, a second transfer): its refund is shown in the request's `txHashes` beside the fill.
  const shownOn = swept && latest.status !== 'waiting' ? latest.id : null;
  if (why === 'extra') {
    // A swept deposit names its refund target as depositor (the transfer's own sender, or the address's refundTo):
    // a second transfer to a strict address goes back to whoever sent it, not to the first sender.
    const refundTo = (swept ? deposit.depositor : request.refundTo) as Address;
    return { kind: 'strayRefund', why: 'double-spend', refundTo, shownOn, status: latest.status };
  }
  const verdict = reads.standing?.verdict;
  const stray = verdict?.kind === 'stray' ? verdict.why : 'short-not-from-user';
  const refundTo =
    stray === 'in-solver-transaction' ? await reads.carriedRefundTarget() : (deposit.depositor as Address);
  // Refunded to a gateway contract, it would be anyone's to sweep: it stays in the depository.
  if (refundTo === null) return { kind: 'done', why: 'kept', keep: 'gateway-depositor' };
  return { kind: 'strayRefund', why: stray, refundTo, shownOn };
}

/**
 * A request its own deposit paid for (`pending`): refunded at its depositor's request, held or refunded by the fill
 * gate, ended as the chain says when the deposit was already released, refunded when a check fails, or filled.
 */
async function decideRequest(request: RequestRecord, reads: DecisionReads): Promise<Decision> {
  // Its depositor asked for the refund (recorded in the request's lane before it was sent: a restart lands here).
  if (request.status === 'pending' && request.failReason === REFUND_REQUESTED) {
    const details = (request.details as JsonObject | null) ?? undefined;
    return { kind: 'refund', request, failReason: REFUND_REQUESTED, ...(details === undefined ? {} : { details }) };
  }
  // Before the checks: a fill simulated without the destination's approval reverts, and a revert is refunded.
  const served = reads.served(request);
  if (served.kind !== 'fill') return fromGate(request, served);
  // The chain decides before money leaves: a deposit the depository already released was refunded or settled by
  // this key with a database that is not this one (lost, older, another gateway's), so its request is not filled
  // (nor refunded) again. Read while the checks run (both only read): a fill waits for the slower of the two.
  const [released, block] = await Promise.all([reads.released(), reads.checks(request)]);
  if (released) return { kind: 'done', why: 'released', request, filled: await reads.filled(request) };
  if (block !== null) return { kind: 'refund', request, ...block };
  const gate = await reads.gate(request);
  if (gate.kind !== 'fill') return fromGate(request, gate);
  return { kind: 'fill', request };
}

function fromGate(request: RequestRecord, gate: Exclude<FillGateDecision, { kind: 'fill' }>): Decision {
  switch (gate.kind) {
    case 'refund':
      return { kind: 'refund', request, failReason: gate.failReason, details: gate.details };
    case 'hold':
      return { kind: 'hold', why: 'gate', reason: gate.reason };
  }
}

/** What a depositor's refund request (`selfRefund.ts`) may read, each only when needed. */
export interface SelfRefundReads {
  /** Why the fill gate holds the request now, or null. */
  heldReason(): string | null;
  /** The request's own deposit, consumed by its claim (`attachedDeposit`). */
  deposit(): Promise<DepositRecord | null>;
  /** Whether a fill of the request is recorded (sent, or about to be). */
  liveFill(): Promise<boolean>;
}

/**
 * What the solver does with its depositor's refund request: `answer` (nothing to do: unknown, moved on, not held),
 * `resume` (asked for before: finished from the records, then `accepted`), or `refund` (recorded, then the refund
 * `decision` executed with the request's deposit). Only a request the fill gate holds, paid and with no fill sent,
 * is refunded so.
 */
export type SelfRefundStep =
  | { kind: 'answer'; answer: SelfRefundDecision }
  | { kind: 'resume' }
  | { kind: 'refund'; decision: Extract<Decision, { kind: 'refund' }>; deposit: DepositRecord };

export async function decideSelfRefund(
  request: RequestRecord | undefined,
  reads: SelfRefundReads,
): Promise<SelfRefundStep> {
  if (request === undefined) return { kind: 'answer', answer: { kind: 'unknown' } };
  if (request.status !== 'pending') return { kind: 'answer', answer: { kind: 'moved', request } };
  if (request.failReason === REFUND_REQUESTED) return { kind: 'resume' };
  const held = reads.heldReason();
  const deposit = held === null ? null : await reads.deposit();
  if (held === null || deposit === null || (await reads.liveFill()))
    return { kind: 'answer', answer: { kind: 'notHeld', request } };
  const details = { message: `Refunded at its depositor's request while held: ${held}` };
  return { kind: 'refund', decision: { kind: 'refund', request, failReason: REFUND_REQUESTED, details }, deposit };
}
