import type { DepositRecord } from '../../records/deposit.js';
import type { RequestRecord } from '../../records/request.js';

/**
 * What a confirmed deposit is to the request whose id it carries (`docs/security.md`, "The solver's decision"):
 *
 * - `pays`: it matches the order: it landed on the order's origin chain (the watcher records only that chain's
 *   depository and receiver), in the origin currency, for at least the quoted input. Only such a deposit pays for
 *   the request, and only such a deposit releases a fast fill's hold on its API key.
 * - `own-short`: on the origin chain, in the origin currency, short of the quoted input, and sent by the order's
 *   own user (the transaction's `from`). It is the order's deposit, paid short: the order is refunded
 *   (`DEPOSITED_AMOUNT_TOO_LOW_TO_FILL`), as the reference does.
 * - `stray`: anything else: another chain, another currency, or short and sent by someone else. It cannot pay
 *   and must not spoil the order (a 1-wei front-run under a victim's id): it is refunded on its own, where it
 *   landed, and the request is left as it was.
 *
 * Who sent a deposit is the transaction's sender as the chain reports it, never the `depositor` argument, which
 * the depository's caller chooses freely. A deposit recorded before senders were stored (`sender` null) counts
 * as someone else's: at worst the user's own short deposit is refunded on its own and the order stays payable.
 */
export type DepositVerdict = { kind: 'pays' } | { kind: 'own-short' } | { kind: 'stray'; why: StrayReason };

/**
 * Why a deposit cannot pay for the request whose id it carries. `in-solver-transaction`: the solver's own
 * transaction carried it and it is not positively the order user's (`solverCarrier.ts`): nested in a fill, a call
 * quote's calls or another user's gasless batch, it is matched to no request, whatever its amount.
 */
export type StrayReason = 'other-chain' | 'other-currency' | 'short-not-from-user' | 'in-solver-transaction';

/** The fields of an order the match reads. */
type Order = Pick<RequestRecord, 'originChainId' | 'originCurrency' | 'amountIn' | 'user'>;

/**
 * The one rule of what a deposit is to an order: the solver's claim (`processDeposit.ts`), its checks before a fill
 * (`fillChecks.ts`) and a gasless batch's deposit before it is sent (`executeGasless.ts`) all ask it.
 */
export function judgeDeposit(
  request: Order,
  deposit: Pick<DepositRecord, 'chainId' | 'token' | 'amount' | 'sender'>,
): DepositVerdict {
  if (deposit.chainId !== request.originChainId) return { kind: 'stray', why: 'other-chain' };
  if (deposit.token.toLowerCase() !== request.originCurrency.toLowerCase())
    return { kind: 'stray', why: 'other-currency' };
  if (deposit.amount >= request.amountIn) return { kind: 'pays' };
  return sentByUser(request, deposit) ? { kind: 'own-short' } : { kind: 'stray', why: 'short-not-from-user' };
}

/** Whether the order's user sent the deposit's transaction (the chain's `from`, not the caller-chosen depositor). */
function sentByUser(request: Order, deposit: Pick<DepositRecord, 'sender'>): boolean {
  return deposit.sender !== null && deposit.sender.toLowerCase() === request.user.toLowerCase();
}
