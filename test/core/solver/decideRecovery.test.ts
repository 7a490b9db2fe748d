/**
 * A restart's (or a retry's) decision, checked as a table: for each request in flight and what its records answer,
 * the decision `decideRecovery` returns and the records it read, in order (a read it need not make, it must not
 * make: the order of the branches is the rule, e.g. a `failure` is refunded without looking at its reverted fill).
 * Nothing here is sent or written; the executor (`actRecovery`) is exercised by the solver's restart tests on the
 * devnet (test/solver/faults.test.ts and its neighbours).
 */
import { describe, expect, it } from 'vitest';
import { decideRecovery, type RecoveryDecision, type RecoveryReads } from '../../../src/core/solver/decideRecovery.js';
import type { DepositRecord } from '../../../src/records/deposit.js';
import type { OutgoingTxRecord } from '../../../src/records/outgoingTx.js';
import type { RequestRecord } from '../../../src/records/request.js';

const id = `0x${'cd'.repeat(32)}`;
const fillHash = `0x${'f1'.repeat(32)}`;
const bumpHash = `0x${'f2'.repeat(32)}`;

const request = (fields: Partial<RequestRecord> = {}): RequestRecord =>
  ({
    id,
    status: 'pending',
    originChainId: 1,
    destinationChainId: 2,
    failReason: null,
    refundFailReason: null,
    fastFill: null,
    inTxHashes: [`0x${'ab'.repeat(32)}`],
    ...fields,
  }) as RequestRecord;

const paid = { id: 7, chainId: 1, requestId: id, status: 'consumed', amount: 100n } as DepositRecord;

const tx = (fields: Partial<OutgoingTxRecord>): OutgoingTxRecord =>
  ({
    id: 40,
    chainId: 2,
    requestId: id,
    kind: 'fill',
    nonce: 5n,
    status: 'broadcast',
    hashes: [fillHash],
    ...fields,
  }) as OutgoingTxRecord;

const fastFill = { amount: '100' } as unknown as RequestRecord['fastFill'];

const pending = request();
const submitted = request({ status: 'submitted' });
const failed = request({ status: 'failure', failReason: 'TRANSACTION_REVERTED' });
const failedBare = request({ status: 'failure' });
const failedSlippage = request({ status: 'failure', failReason: 'SLIPPAGE' });
const pendingRefunding = request({ failReason: 'ORDER_EXPIRED' });
const fastPending = request({ fastFill, inTxHashes: [] });
const fastSubmitted = request({ status: 'submitted', fastFill, inTxHashes: [] });
const fastFailed = request({ status: 'failure', fastFill, inTxHashes: [] });

const broadcastFill = tx({ hashes: [fillHash, bumpHash] });
const preparedFill = tx({ status: 'prepared', nonce: null, hashes: [] });
const signedFill = tx({ status: 'prepared', hashes: [] });
const rejectedFill = tx({ status: 'failed', nonce: null, hashes: [] });
const revertedFill = tx({ status: 'failed', hashes: [fillHash] });
const minedFill = tx({ status: 'confirmed' });
const sentRefund = tx({ id: 41, chainId: 1, kind: 'refund' });

/** What the records answer; a read with no answer fails the row when it is asked for. */
interface Answers {
  deposit: DepositRecord | null;
  fill: OutgoingTxRecord | undefined;
  refund: OutgoingTxRecord | undefined;
}

interface Row {
  name: string;
  request: RequestRecord;
  answers: Partial<Answers>;
  expected: RecoveryDecision;
  /** The reads asked for, in order. */
  asked: Array<keyof Answers>;
}

const rows: Row[] = [
  // A fast fill whose deposit is not attached: its fill alone decides.
  {
    name: 'fast fill sent: followed (its refund is not read)',
    request: fastPending,
    answers: { deposit: null, fill: broadcastFill },
    expected: { kind: 'followFastFill', request: fastPending, fillTxId: 40 },
    asked: ['deposit', 'fill'],
  },
  {
    name: 'fast fill submitted: followed',
    request: fastSubmitted,
    answers: { deposit: null, fill: broadcastFill },
    expected: { kind: 'followFastFill', request: fastSubmitted, fillTxId: 40 },
    asked: ['deposit', 'fill'],
  },
  {
    name: 'fast fill rejected before a crash, no deposit yet: followed as any fast fill (not refunded: nothing is in)',
    request: fastPending,
    answers: { deposit: null, fill: rejectedFill },
    expected: { kind: 'followFastFill', request: fastPending, fillTxId: 40 },
    asked: ['deposit', 'fill'],
  },
  {
    name: 'fast fill pending, never recorded: sent',
    request: fastPending,
    answers: { deposit: null, fill: undefined },
    expected: { kind: 'sendFastFill', request: fastPending },
    asked: ['deposit', 'fill'],
  },
  {
    name: 'fast fill past pending, never recorded: nothing',
    request: fastSubmitted,
    answers: { deposit: null, fill: undefined },
    expected: { kind: 'nothing', why: 'fast-fill-unsent' },
    asked: ['deposit', 'fill'],
  },
  {
    name: 'fast fill failed, no deposit, never recorded: nothing',
    request: fastFailed,
    answers: { deposit: null, fill: undefined },
    expected: { kind: 'nothing', why: 'fast-fill-unsent' },
    asked: ['deposit', 'fill'],
  },
  // No deposit and no fast fill: nothing to act with.
  {
    name: 'pending, no deposit attached: left for an operator (nothing else read)',
    request: pending,
    answers: { deposit: null },
    expected: { kind: 'operator', why: 'deposit-missing', request: pending },
    asked: ['deposit'],
  },
  {
    name: 'failure, no deposit attached: left for an operator',
    request: failed,
    answers: { deposit: null },
    expected: { kind: 'operator', why: 'deposit-missing', request: failed },
    asked: ['deposit'],
  },
  // A fast-filled request whose deposit arrived: the deposit's records decide, as for any paid request.
  {
    name: 'fast fill with its deposit attached, fill sent: followed with the deposit',
    request: fastSubmitted,
    answers: { deposit: paid, refund: undefined, fill: broadcastFill },
    expected: { kind: 'followFill', request: fastSubmitted, deposit: paid, fillTxId: 40, submit: null },
    asked: ['deposit', 'refund', 'fill'],
  },
  {
    name: 'fast fill failed with its deposit attached: refunded',
    request: fastFailed,
    answers: { deposit: paid, refund: undefined },
    expected: {
      kind: 'refund',
      why: 'unrefunded-failure',
      request: fastFailed,
      deposit: paid,
      failReason: 'TRANSACTION_REVERTED',
    },
    asked: ['deposit', 'refund'],
  },
  // A refund sent: its receipt decides, whatever else is recorded (the fill is not read).
  {
    name: 'refund sent for a pending request: awaited, with its reason',
    request: pendingRefunding,
    answers: { deposit: paid, refund: sentRefund },
    expected: {
      kind: 'awaitRefund',
      request: pendingRefunding,
      deposit: paid,
      refundTxId: 41,
      failReason: 'ORDER_EXPIRED',
    },
    asked: ['deposit', 'refund'],
  },
  {
    name: 'refund sent with no reason recorded: awaited, UNKNOWN',
    request: pending,
    answers: { deposit: paid, refund: sentRefund },
    expected: { kind: 'awaitRefund', request: pending, deposit: paid, refundTxId: 41, failReason: 'UNKNOWN' },
    asked: ['deposit', 'refund'],
  },
  {
    name: 'failure with a refund sent: awaited, not refunded again',
    request: failed,
    answers: { deposit: paid, refund: sentRefund },
    expected: {
      kind: 'awaitRefund',
      request: failed,
      deposit: paid,
      refundTxId: 41,
      failReason: 'TRANSACTION_REVERTED',
    },
    asked: ['deposit', 'refund'],
  },
  // A failure whose refund was never recorded: refunded before its fill is looked at.
  {
    name: 'failure, no refund: refunded with its reason (its reverted fill is not read, nor followed)',
    request: failed,
    answers: { deposit: paid, refund: undefined, fill: revertedFill },
    expected: {
      kind: 'refund',
      why: 'unrefunded-failure',
      request: failed,
      deposit: paid,
      failReason: 'TRANSACTION_REVERTED',
    },
    asked: ['deposit', 'refund'],
  },
  {
    name: 'failure with no reason recorded, no refund: refunded, TRANSACTION_REVERTED',
    request: failedBare,
    answers: { deposit: paid, refund: undefined },
    expected: {
      kind: 'refund',
      why: 'unrefunded-failure',
      request: failedBare,
      deposit: paid,
      failReason: 'TRANSACTION_REVERTED',
    },
    asked: ['deposit', 'refund'],
  },
  {
    name: 'failure, no refund, a fill rejected before a crash recorded: refunded with the failure, not EXECUTION_REVERTED',
    request: failedSlippage,
    answers: { deposit: paid, refund: undefined, fill: rejectedFill },
    expected: {
      kind: 'refund',
      why: 'unrefunded-failure',
      request: failedSlippage,
      deposit: paid,
      failReason: 'SLIPPAGE',
    },
    asked: ['deposit', 'refund'],
  },
  // A fill the node refused before a crash: refunded, never followed.
  {
    name: 'pending, fill rejected before a crash (failed, no nonce): refunded, EXECUTION_REVERTED',
    request: pending,
    answers: { deposit: paid, refund: undefined, fill: rejectedFill },
    expected: {
      kind: 'refund',
      why: 'rejected-fill',
      request: pending,
      deposit: paid,
      failReason: 'EXECUTION_REVERTED',
    },
    asked: ['deposit', 'refund', 'fill'],
  },
  {
    name: 'submitted, fill rejected (failed, no nonce): refunded, EXECUTION_REVERTED',
    request: submitted,
    answers: { deposit: paid, refund: undefined, fill: rejectedFill },
    expected: {
      kind: 'refund',
      why: 'rejected-fill',
      request: submitted,
      deposit: paid,
      failReason: 'EXECUTION_REVERTED',
    },
    asked: ['deposit', 'refund', 'fill'],
  },
  // A fill in flight: followed; a pending request is moved to `submitted` first with the fill's last hash.
  {
    name: 'pending, fill broadcast: submitted with its last hash, then followed',
    request: pending,
    answers: { deposit: paid, refund: undefined, fill: broadcastFill },
    expected: { kind: 'followFill', request: pending, deposit: paid, fillTxId: 40, submit: bumpHash },
    asked: ['deposit', 'refund', 'fill'],
  },
  {
    name: 'pending, fill recorded with no hash yet: followed, not submitted',
    request: pending,
    answers: { deposit: paid, refund: undefined, fill: preparedFill },
    expected: { kind: 'followFill', request: pending, deposit: paid, fillTxId: 40, submit: null },
    asked: ['deposit', 'refund', 'fill'],
  },
  {
    name: 'pending, fill signed with a nonce, no hash yet: followed, not submitted',
    request: pending,
    answers: { deposit: paid, refund: undefined, fill: signedFill },
    expected: { kind: 'followFill', request: pending, deposit: paid, fillTxId: 40, submit: null },
    asked: ['deposit', 'refund', 'fill'],
  },
  {
    name: 'submitted, fill broadcast: followed (already submitted)',
    request: submitted,
    answers: { deposit: paid, refund: undefined, fill: broadcastFill },
    expected: { kind: 'followFill', request: submitted, deposit: paid, fillTxId: 40, submit: null },
    asked: ['deposit', 'refund', 'fill'],
  },
  {
    name: 'submitted, fill mined: followed to its receipt',
    request: submitted,
    answers: { deposit: paid, refund: undefined, fill: minedFill },
    expected: { kind: 'followFill', request: submitted, deposit: paid, fillTxId: 40, submit: null },
    asked: ['deposit', 'refund', 'fill'],
  },
  {
    name: 'pending, fill reverted on chain (failed with a nonce): submitted, then followed to its revert',
    request: pending,
    answers: { deposit: paid, refund: undefined, fill: revertedFill },
    expected: { kind: 'followFill', request: pending, deposit: paid, fillTxId: 40, submit: fillHash },
    asked: ['deposit', 'refund', 'fill'],
  },
  // Nothing sent: the paid request is decided as after its claim.
  {
    name: 'pending, nothing sent: walked',
    request: pending,
    answers: { deposit: paid, refund: undefined, fill: undefined },
    expected: { kind: 'walk', request: pending, deposit: paid },
    asked: ['deposit', 'refund', 'fill'],
  },
  {
    name: 'submitted, nothing sent: walked',
    request: submitted,
    answers: { deposit: paid, refund: undefined, fill: undefined },
    expected: { kind: 'walk', request: submitted, deposit: paid },
    asked: ['deposit', 'refund', 'fill'],
  },
];

describe('a restart picks a request up from its records (decideRecovery)', () => {
  it.each(rows)('$name', async (row) => {
    const asked: Array<keyof Answers> = [];
    const answer = <K extends keyof Answers>(key: K) => {
      asked.push(key);
      if (!(key in row.answers)) throw new Error(`${row.name}: ${key} must not be read`);
      return Promise.resolve(row.answers[key] as Answers[K]);
    };
    const reads: RecoveryReads = {
      deposit: () => answer('deposit'),
      fill: () => answer('fill'),
      refund: () => answer('refund'),
    };
    expect(await decideRecovery(row.request, reads)).toEqual(row.expected);
    expect(asked).toEqual(row.asked);
  });
});
