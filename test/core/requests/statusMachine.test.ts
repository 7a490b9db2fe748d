/**
 * The request status machine, checked as a table: every (from, to) pair of statuses, whether a move allows it.
 * The solver takes its "from" statuses from `statusMoves`, so this table is what it may and may not overwrite.
 */
import { describe, expect, it } from 'vitest';
import { canMove, statusMoves } from '../../../src/core/vocabulary/statusMachine.js';
import { requestStatuses, type RequestStatus } from '../../../src/records/requestStatus.js';

/** Every allowed transition; any pair not listed must be refused. */
const allowed: ReadonlyArray<[from: RequestStatus, to: RequestStatus]> = [
  ['waiting', 'pending'],
  // The gateway sends the user's deposit itself (a permit or a gasless batch): `depositing`, then claimed from
  // there, or back to `waiting` when that deposit reverts or is never sent.
  ['waiting', 'depositing'],
  ['depositing', 'pending'],
  ['depositing', 'waiting'],
  // A same-chain DEX swap is the user's own transaction: no deposit, its receipt decides at once.
  ['waiting', 'success'],
  ['waiting', 'failure'],
  ['pending', 'submitted'],
  ['pending', 'success'],
  ['submitted', 'success'],
  ['pending', 'failure'],
  ['submitted', 'failure'],
  ['failure', 'failure'],
  ['pending', 'refund'],
  ['submitted', 'refund'],
  ['failure', 'refund'],
];

describe('request status machine', () => {
  const isAllowed = (from: RequestStatus, to: RequestStatus) => allowed.some(([f, t]) => f === from && t === to);
  const pairs = requestStatuses.flatMap((from) => requestStatuses.map((to) => [from, to] as const));

  it.each(pairs)('%s -> %s', (from, to) => {
    expect(canMove(from, to)).toBe(isAllowed(from, to));
  });

  it('never leaves a final status other than failure (whose refund may still be made or fail again)', () => {
    for (const final of ['success', 'refund'] as const) {
      for (const to of requestStatuses) expect(canMove(final, to), `${final} -> ${to}`).toBe(false);
    }
  });

  it('names each move by the status it sets: a fill failure does not overwrite an earlier failure', () => {
    expect(statusMoves.fail.from).not.toContain('failure');
    expect(statusMoves.refundFail.from).toContain('failure');
    expect(statusMoves.claim).toEqual({ from: ['waiting', 'depositing'], to: 'pending' });
    // Only a deposit the gateway itself started can be abandoned: a paid request never goes back to waiting.
    expect(statusMoves.abandonDeposit.from).toEqual(['depositing']);
  });
});
