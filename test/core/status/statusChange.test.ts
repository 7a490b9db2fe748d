/**
 * A request's status change as the core builds it (`statusChangeOf`): the move's row update, the event it writes
 * (the status record of the row as the move leaves it, delivered to the quoting key) and the ledger movements it
 * books. Only a `succeed` books, and it cannot be built without the facts of the fill it books.
 */
import { zeroAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import { requestFilled, type FillFacts } from '../../../src/core/ledger/movements.js';
import { rowAfter, statusChangeOf } from '../../../src/core/status/statusChange.js';
import type { RequestRecord } from '../../../src/records/request.js';
import { statusRecordOf } from '../../../src/records/statusEvent.js';
import { statusMoves, type StatusMove } from '../../../src/core/vocabulary/statusMachine.js';

const id = `0x${'cd'.repeat(32)}`;
const fill: FillFacts = {
  request: { id, input: { chainId: 1, currency: zeroAddress, amount: 1_000n }, fees: null },
  paid: { chainId: 2, currency: zeroAddress, amount: 990n, to: '0x2222222222222222222222222222222222222222' },
  gasTopup: 0n,
};
const request: RequestRecord = {
  id,
  status: 'pending',
  user: '0x1111111111111111111111111111111111111111',
  recipient: '0x2222222222222222222222222222222222222222',
  refundTo: '0x1111111111111111111111111111111111111111',
  sender: '0x1111111111111111111111111111111111111111',
  originChainId: 1,
  destinationChainId: 2,
  originCurrency: zeroAddress,
  destinationCurrency: zeroAddress,
  amountIn: 1_000n,
  amountOut: 990n,
  minAmountOut: 980n,
  tradeType: 'EXACT_INPUT',
  operation: 'bridge',
  orderId: `0x${'ab'.repeat(32)}`,
  referrer: 'app',
  apiKeyId: 'key-1',
  quote: {},
  feesQuoted: {},
  feesActual: null,
  failReason: null,
  refundFailReason: null,
  details: null,
  inTxHashes: ['0x01'],
  txHashes: ['0xaa'],
  depositAddress: null,
  expiresAt: 10_000,
  createdAt: 1_000,
  updatedAt: 2_000,
  volumeUsdMicros: 1n,
  fastFill: null,
  version: 3,
};

describe('status change', () => {
  const moves = Object.keys(statusMoves).filter((move) => move !== 'succeed') as Array<Exclude<StatusMove, 'succeed'>>;

  it.each(moves)('%s: the move of the status machine, with its fields, booking nothing', (move) => {
    const change = statusChangeOf(request, move, { failReason: 'SLIPPAGE', txHash: '0xAA' }, 1_500);
    expect(change).toEqual({
      requestId: id,
      move,
      update: {
        status: statusMoves[move].to,
        fromStatus: statusMoves[move].from,
        failReason: 'SLIPPAGE',
        txHash: '0xAA',
      },
      expected: {
        version: 4,
        event: {
          requestId: id,
          status: statusMoves[move].to,
          // A hash already recorded is not appended again; `updatedAt` never moves back (the clock read 1,500).
          payload: { ...statusRecordOf(request, null), status: statusMoves[move].to, failReason: 'SLIPPAGE' },
          deliverTo: 'key-1',
        },
      },
      ledger: [],
      now: 1_500,
    });
  });

  it('succeed: the move to success, booking what the fill paid', () => {
    const change = statusChangeOf(
      request,
      'succeed',
      { txHash: '0xBB', feesActual: { fillGasUsed: '1' }, fill },
      9_000,
    );
    expect(change.update).toEqual({
      status: 'success',
      fromStatus: ['pending', 'submitted'],
      txHash: '0xBB',
      feesActual: { fillGasUsed: '1' },
    });
    expect(change.expected?.event.payload).toMatchObject({
      status: 'success',
      txHashes: ['0xaa', '0xbb'],
      updatedAt: 9_000,
    });
    expect(change.ledger).toEqual(requestFilled(fill));
    expect(change.ledger.map((movement) => movement.key)).toEqual([
      `${id}:exchange:in`,
      `${id}:exchange:out`,
      `${id}:fill`,
    ]);
    // @ts-expect-error: a success is never built without the fill it books.
    statusChangeOf(request, 'succeed', { txHash: '0xbb' }, 9_000);
  });

  it('a row with a deposit address expects no event: the store builds it with the address it reads', () => {
    const change = statusChangeOf(
      { ...request, depositAddress: '0x3333333333333333333333333333333333333333' },
      'fail',
      {},
      3_000,
    );
    expect(change.expected).toBeUndefined();
  });

  it('the row after a move: hashes appended once and lower case, fields set, the version one more', () => {
    const after = rowAfter(request, { status: 'success', inTxHash: '0x02', txHash: '0xAA', details: { a: 1 } }, 2_500);
    expect(after).toEqual({
      ...request,
      status: 'success',
      inTxHashes: ['0x01', '0x02'],
      txHashes: ['0xaa'],
      details: { a: 1 },
      updatedAt: 2_500,
      version: 4,
    });
  });
});
