/**
 * A request's status change as the core builds it (`statusChangeOf`): the move's row update and the ledger
 * movements it books. Only a `succeed` books, and it cannot be built without the facts of the fill it books.
 */
import { zeroAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { requestFilled, type FillFacts } from '../../../src/core/ledger/movements.js';
import { statusChangeOf } from '../../../src/core/solver/statusChange.js';
import { statusMoves, type StatusMove } from '../../../src/core/vocabulary/statusMachine.js';

const id = `0x${'cd'.repeat(32)}`;
const fill: FillFacts = {
  request: { id, input: { chainId: 1, currency: zeroAddress, amount: 1_000n }, fees: null },
  paid: { chainId: 2, currency: zeroAddress, amount: 990n, to: '0x2222222222222222222222222222222222222222' },
  gasTopup: 0n,
};

describe('status change', () => {
  const moves = Object.keys(statusMoves).filter((move) => move !== 'succeed') as Array<Exclude<StatusMove, 'succeed'>>;

  it.each(moves)('%s: the move of the status machine, with its fields, booking nothing', (move) => {
    const change = statusChangeOf(id, move, { failReason: 'SLIPPAGE', txHash: '0xaa' });
    expect(change).toEqual({
      requestId: id,
      move,
      update: {
        status: statusMoves[move].to,
        fromStatus: statusMoves[move].from,
        failReason: 'SLIPPAGE',
        txHash: '0xaa',
      },
      ledger: [],
    });
  });

  it('succeed: the move to success, booking what the fill paid', () => {
    const change = statusChangeOf(id, 'succeed', { txHash: '0xbb', feesActual: { fillGasUsed: '1' }, fill });
    expect(change.update).toEqual({
      status: 'success',
      fromStatus: ['pending', 'submitted'],
      txHash: '0xbb',
      feesActual: { fillGasUsed: '1' },
    });
    expect(change.ledger).toEqual(requestFilled(fill));
    expect(change.ledger.map((movement) => movement.key)).toEqual([
      `${id}:exchange:in`,
      `${id}:exchange:out`,
      `${id}:fill`,
    ]);
    // @ts-expect-error: a success is never built without the fill it books.
    statusChangeOf(id, 'succeed', { txHash: '0xbb' });
  });
});
