import type { DepositRecord } from '../../records/deposit.js';
import { groupedCalls } from '../../store/groupedCalls.js';
import type { RequestRecord } from '../../records/request.js';
import { claimDepositsForRequests } from '../../store/requests.repository.js';
import type { CoreContext } from '../context.js';
import { statusMoves } from '../vocabulary/statusMachine.js';

/** Most claims one transaction takes. */
const CLAIM_GROUP = 16;

/**
 * How a deposit that is its request's own claims it: `taken` (another claim consumed it first), the request as moved
 * to `pending`, or `unmoved` (the request was not waiting: nothing of this claim stands, claim it on its own).
 */
export type ClaimTogether = (deposit: DepositRecord) => Promise<RequestRecord | 'taken' | 'unmoved'>;

/**
 * The claims of the deposits handed on together (a block's): those asked for in one turn of the event loop go
 * together in one transaction (a block's deposits, handed on with their requests, all ask in the turn they are
 * handed on in), and those asked for while a claim's transaction is under way go together in the next one, one
 * statement for all of them (`groupedCalls` with `gatherTurn`, `claimDepositsForRequests`): on PGlite a transaction
 * holds every other statement, so five claims one after the other held the status polls and the fills behind them
 * five times, and the first going alone held the rest behind it. Each deposit's conditional
 * move is still the one decision that it is claimed; a second deposit of a request already in the group (not seen
 * today: a request's deposits are handled one after another in its lane) waits for the next group. `pending`'s
 * `updatedAt` is read once the group's transaction has begun.
 */
export function createClaimTogether(ctx: CoreContext): ClaimTogether {
  return groupedCalls(
    (deposits: readonly DepositRecord[]) =>
      ctx.db.transaction().execute((trx) =>
        claimDepositsForRequests(
          trx,
          deposits.map((deposit) => ({
            depositId: deposit.id,
            requestId: deposit.requestId,
            confirmedAt: deposit.updatedAt,
          })),
          { status: statusMoves.claim.to, fromStatus: statusMoves.claim.from, now: ctx.now() },
        ),
      ),
    (group, deposit) =>
      group.length < CLAIM_GROUP &&
      !group.some((claimed) => claimed.requestId.toLowerCase() === deposit.requestId.toLowerCase()),
    { gatherTurn: true },
  );
}
