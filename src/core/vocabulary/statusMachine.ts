import type { RequestStatus } from '../../records/requestStatus.js';

/**
 * The request lifecycle as the solver drives it: each move names the status it sets and the statuses it may start
 * from. A move from any other status is skipped (the request moved on: another instance, or a recovery, got there
 * first), so a stale decision never overwrites a newer one. See docs/architecture.md ("Statuses").
 *
 *   waiting --claim--> pending --submit--> submitted --succeed--> success
 *                         |                    |
 *                         +------- fail -------+--> failure --refund--> refund
 *                         +------ refund (before or after a fill was sent) ----^
 *   refundFail: a refund that cannot be made leaves (or keeps) `failure`, with its `refundFailReason`.
 *
 *   waiting --startDeposit--> depositing --claim--> pending ...   (the gateway sends the user's deposit itself)
 *   waiting --fastFill--> pending ...                             (an API key has it filled before its deposit)
 *   depositing --abandonDeposit--> waiting                        (that deposit reverted, or was never sent)
 *
 *   waiting --swapSucceed--> success, waiting --swapFail--> failure  (a same-chain DEX swap the user sends itself)
 */
export const statusMoves = {
  /** The gateway accepted a signed permit or gasless batch and will send the user's deposit itself. */
  startDeposit: { from: ['waiting'], to: 'depositing' },
  /** The deposit the gateway sent reverted, or was never sent: the request can be paid again. */
  abandonDeposit: { from: ['depositing'], to: 'waiting' },
  /**
   * A matching deposit pays for the request (claimed with the deposit, in one transaction); from `depositing` when
   * the gateway sent the deposit itself (a permit, a gasless batch).
   */
  claim: { from: ['waiting', 'depositing'], to: 'pending' },
  /** An API key has the request filled before its deposit (`POST /fast-fill`), holding its value against the key. */
  fastFill: { from: ['waiting'], to: 'pending' },
  /** The fill transaction was broadcast. */
  submit: { from: ['pending'], to: 'submitted' },
  /** The fill was mined and succeeded. */
  succeed: { from: ['pending', 'submitted'], to: 'success' },
  /** The fill reverted, or could not be made. */
  fail: { from: ['pending', 'submitted'], to: 'failure' },
  /** The deposit was paid back. */
  refund: { from: ['pending', 'submitted', 'failure'], to: 'refund' },
  /** The deposit could not be paid back (e.g. the refund's gas exceeds it). */
  refundFail: { from: ['pending', 'submitted', 'failure'], to: 'failure' },
  /** The user's own same-chain DEX swap of the request (no deposit, no fill) was mined and paid the recipient. */
  swapSucceed: { from: ['waiting'], to: 'success' },
  /** The user's own same-chain DEX swap reverted: the user's funds never left, nothing is refunded. */
  swapFail: { from: ['waiting'], to: 'failure' },
} as const satisfies Record<string, { from: readonly RequestStatus[]; to: RequestStatus }>;

export type StatusMove = keyof typeof statusMoves;

/** Why a request was refunded or failed: the reference's `failReason` codes this solver produces. */
export type FailReason =
  | 'DOUBLE_SPEND'
  | 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL'
  | 'ORDER_EXPIRED'
  | 'SOLVER_BALANCE_TOO_LOW'
  | 'EXECUTION_REVERTED'
  | 'TRANSACTION_REVERTED'
  | 'ORIGIN_CURRENCY_MISMATCH'
  | 'ORPHANED_DEPOSIT_REFUND'
  | 'SLIPPAGE'
  /** Held by the fill gate longer than the maximum hold (`fillGate.ts`). */
  | 'TTL_EXPIRED'
  /** Refunded out of the solver's own decisions: its depositor asked for it (`requestRefund.ts`). */
  | 'MANUAL_ADMIN_REFUND';

/** Whether some move takes a request from `from` to `to`. */
export function canMove(from: RequestStatus, to: RequestStatus): boolean {
  return Object.values(statusMoves).some(
    (move) => move.to === to && (move.from as readonly RequestStatus[]).includes(from),
  );
}

/** The status a move sets and the statuses it may start from, as `updateRequestStatus` takes them. */
export function moveOf(move: StatusMove): { status: RequestStatus; fromStatus: readonly RequestStatus[] } {
  const { to, from } = statusMoves[move];
  return { status: to, fromStatus: from };
}
