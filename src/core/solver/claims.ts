import type { Kysely } from 'kysely';
import { updateDepositStatus } from '../../store/deposits.repository.js';
import { attachDepositToFastFill } from '../../store/fastFills.repository.js';
import { groupedCalls } from '../../store/groupedCalls.js';
import { claimDepositForRequest, claimDepositsForRequests } from '../../store/requests.repository.js';
import type { Tables } from '../../store/tables.js';
import type { CoreContext } from '../context.js';
import type { DepositVerdict } from '../deposits/depositMatch.js';
import { type DepositRecord } from '../../records/deposit.js';
import type { RequestRecord } from '../../records/request.js';
import { expectedEventOf, type RowMove } from '../status/statusChange.js';
import { moveOf } from '../vocabulary/statusMachine.js';

/** Most claims one transaction takes. */
const CLAIM_GROUP = 16;

/** What the claim of a confirmed deposit found. */
export type Claim =
  /** Another claim consumed the deposit first: nothing of this one stands, nothing is left to do. */
  | { kind: 'taken' }
  /** The deposit is its request's own and paid for it: the request as its move left it (`pending`). */
  | { kind: 'claimed'; request: RequestRecord }
  /** The first matching deposit of a fast-filled request: recorded on it (and the key's hold released). */
  | { kind: 'fastFill' }
  /**
   * Not the request's own, rolled back: the deposit stays `confirmed` until its refund is done. `orphan`: the
   * database does not know the request; `stray`: it cannot pay the order; `extra`: it pays an order already paid.
   */
  | { kind: 'notOwn'; why: 'orphan' | 'stray' | 'extra' };

/**
 * How a deposit that is its request's own claims it together with the others asked for meanwhile: a `Claim`, or
 * `unmoved` (the request was not waiting: nothing of this claim stands, claim it on its own).
 */
export type ClaimTogether = (deposit: DepositRecord, request: RequestRecord) => Promise<Claim | { kind: 'unmoved' }>;

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
  const claimGrouped = groupedCalls(
    (claims: readonly OwnClaim[]) =>
      ctx.db.transaction().execute((trx) => {
        const now = ctx.now();
        return claimDepositsForRequests(
          trx,
          claims.map(({ deposit }) => ({
            depositId: deposit.id,
            requestId: deposit.requestId,
            confirmedAt: deposit.updatedAt,
          })),
          {
            ...moveOf('claim'),
            now,
            expected: claims.flatMap(({ deposit, request }) => {
              const expected = expectedEventOf(request, claimMove(deposit), now);
              return expected === undefined ? [] : [expected];
            }),
          },
        );
      }),
    (group, { deposit }) =>
      group.length < CLAIM_GROUP &&
      !group.some(({ deposit: claimed }) => claimed.requestId.toLowerCase() === deposit.requestId.toLowerCase()),
    { gatherTurn: true },
  );
  return async (deposit, request) => {
    const claimed = await claimGrouped({ deposit, request });
    if (claimed === 'taken' || claimed === 'unmoved') return { kind: claimed };
    return { kind: 'claimed', request: claimed };
  };
}

/**
 * Claims a confirmed deposit. The request's own deposit (`verdict` `pays` or `own-short`) is consumed together with
 * the request's move to `pending`, with the other deposits handed on with it (`ClaimTogether`). Any other deposit
 * (a double spend, a stray one, an unknown request's) is consumed only once its refund is done: the claim consumes
 * it and rolls back, so that the conditional update of the deposit stays the one decision between two instances,
 * and a crash before the refund leaves it `confirmed` for the watcher to hand on again at start.
 */
export async function claimDeposit(
  { ctx, claimTogether }: { ctx: CoreContext; claimTogether: ClaimTogether },
  request: RequestRecord | undefined,
  deposit: DepositRecord,
  verdict: DepositVerdict | undefined,
): Promise<Claim> {
  const own = request !== undefined && verdict !== undefined && verdict.kind !== 'stray';
  if (own) {
    const together = await claimTogether(deposit, request);
    if (together.kind !== 'unmoved') return together;
  }
  return inTransactionKept(ctx.db, async (trx): Promise<Claim> => {
    const now = ctx.now();
    if (own) {
      // `depositing`: the gateway sent this deposit itself for the user's permit (`src/core/permits`) or gasless
      // batch (`POST /execute`). The deposit's consumption and the request's move are one statement.
      const move = claimMove(deposit);
      const expected = expectedEventOf(request, move, now);
      const { consumed, moved } = await claimDepositForRequest(trx, deposit.id, request.id, {
        ...move,
        now,
        ...(expected === undefined ? {} : { expected }),
      });
      if (!consumed) return { kind: 'taken' };
      if (moved !== null) return { kind: 'claimed', request: moved };
      // The first matching deposit of a fast-filled request pays for the fill (and releases the key's hold).
      if (verdict.kind === 'pays' && (await attachDepositToFastFill(trx, request.id, deposit, now)) !== null)
        return { kind: 'fastFill' };
      return { kind: 'notOwn', why: verdict.kind === 'pays' ? 'extra' : 'stray' };
    }
    const consumed = await updateDepositStatus(trx, deposit.id, { status: 'consumed', fromStatus: 'confirmed', now });
    if (consumed === null) return { kind: 'taken' };
    return { kind: 'notOwn', why: request === undefined ? 'orphan' : 'stray' };
  });
}

/** A deposit that is its request's own, with its request as read, to claim with the others (`ClaimTogether`). */
interface OwnClaim {
  deposit: DepositRecord;
  request: RequestRecord;
}

/** A claim's move of its request: to `pending`, with the deposit's hash appended (once). */
const claimMove = (deposit: DepositRecord): RowMove => ({ ...moveOf('claim'), inTxHash: deposit.txHash });

/** Whether a claim's writes stand: a deposit that is not its request's own is consumed only by its refund. */
const kept = (claim: Claim): boolean => claim.kind !== 'notOwn';

/** Runs a claim in a transaction committed when the claim stands (`kept`), rolled back otherwise. */
async function inTransactionKept(db: Kysely<Tables>, work: (trx: Kysely<Tables>) => Promise<Claim>): Promise<Claim> {
  const trx = await db.startTransaction().execute();
  let claim: Claim;
  try {
    claim = await work(trx);
  } catch (error) {
    await trx.rollback().execute();
    throw error;
  }
  await (kept(claim) ? trx.commit() : trx.rollback()).execute();
  return claim;
}
