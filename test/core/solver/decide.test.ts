/**
 * The solver's decision, checked as a table: for each claim of a deposit and what the reads answer, the decision
 * `decide` returns and the reads it asked for (a read it need not make, it must not make: the gate's check admits
 * outflow, a simulation costs an RPC call). The depositor's refund request (`decideSelfRefund`) and a deposit's
 * standing before its claim (`standingOf`) are tables of their own. Nothing here is sent or written: the decision
 * only decides; the executor (`execute.ts`) is exercised by the solver's tests on the devnet.
 */
import { describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import type { Claim } from '../../../src/core/solver/claims.js';
import {
  decide,
  decideSelfRefund,
  REFUND_REQUESTED,
  standingOf,
  type Decision,
  type DecisionReads,
  type SelfRefundReads,
  type SelfRefundStep,
  type Standing,
} from '../../../src/core/solver/decide.js';
import type { FillBlock } from '../../../src/core/solver/fillChecks.js';
import type { FillGateDecision } from '../../../src/core/solver/fillGate.js';
import type { DepositRecord } from '../../../src/records/deposit.js';
import type { RequestRecord } from '../../../src/records/request.js';

const user: Address = '0x0000000000000000000000000000000000001234';
const depositor: Address = '0x000000000000000000000000000000000000d00d';
const refundTo: Address = '0x000000000000000000000000000000000000eeee';
const requester: Address = '0x000000000000000000000000000000000000cafe';
const solver: Address = '0x00000000000000000000000000000000000050a1';
const usdc = '0x00000000000000000000000000000000000000c1';
const id = `0x${'cd'.repeat(32)}`;

const request = (fields: Partial<RequestRecord> = {}): RequestRecord =>
  ({
    id,
    status: 'waiting',
    user,
    refundTo,
    originChainId: 1,
    destinationChainId: 2,
    originCurrency: usdc,
    amountIn: 100n,
    failReason: null,
    refundFailReason: null,
    details: null,
    depositAddress: null,
    ...fields,
  }) as RequestRecord;

const deposit = (fields: Partial<DepositRecord> = {}): DepositRecord =>
  ({
    id: 7,
    chainId: 1,
    txHash: `0x${'ab'.repeat(32)}`,
    requestId: id,
    depositor,
    sender: user,
    carrier: null,
    token: usdc,
    amount: 100n,
    depositIndex: 3n,
    ...fields,
  }) as DepositRecord;

const waiting = request();
const pending = request({ status: 'pending' });
const success = request({ status: 'success' });
const refundRequested = request({
  status: 'pending',
  failReason: REFUND_REQUESTED,
  details: { message: 'Refunded at its depositor’s request while held: prices: stale' },
});
const fastFillFailed = request({ status: 'failure', failReason: 'TRANSACTION_REVERTED' });
const fastFillFailedBare = request({ status: 'failure' });
const fastFillRefunded = request({ status: 'failure', refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND' });

const fill: FillGateDecision = { kind: 'fill' };
const hold: FillGateDecision = { kind: 'hold', reason: 'prices: the feed is stale' };
const slippage: FillGateDecision = { kind: 'refund', failReason: 'SLIPPAGE', details: { message: 'below' } };
const ttl: FillGateDecision = { kind: 'refund', failReason: 'TTL_EXPIRED', details: { message: 'held' } };
const expired: FillBlock = { failReason: 'ORDER_EXPIRED' };

/** What the fake reads answer; a read with no answer fails the row when it is asked for. */
interface Answers {
  latest: RequestRecord;
  fresh: RequestRecord | undefined;
  carriedRefundTarget: Address | null;
  released: boolean;
  filled: boolean;
  filledAnywhere: number | undefined;
  served: FillGateDecision;
  checks: FillBlock | null;
  gate: FillGateDecision;
}

interface Row {
  name: string;
  /** The request the walk started from; undefined when the database does not know it. */
  request: RequestRecord | undefined;
  claim: Claim;
  standing?: Standing;
  graceOver?: boolean;
  answers: Partial<Answers>;
  expected: Decision;
  /** The reads asked for, in order. */
  asked: Array<keyof Answers>;
}

const claimed: Claim = { kind: 'claimed', request: pending };
const stray = (why: 'other-chain' | 'in-solver-transaction' | 'short-not-from-user'): Standing => ({
  verdict: { kind: 'stray', why },
  swept: false,
});

const rows: Row[] = [
  // The claim alone decides.
  {
    name: 'another claim took the deposit: nothing',
    request: waiting,
    claim: { kind: 'taken' },
    answers: {},
    expected: { kind: 'done', why: 'taken' },
    asked: [],
  },
  // A deposit recorded on a fast-filled request.
  {
    name: 'fast fill paid: nothing more',
    request: waiting,
    claim: { kind: 'fastFill' },
    answers: { fresh: success },
    expected: { kind: 'done', why: 'fast-fill-paid' },
    asked: ['fresh'],
  },
  {
    name: 'fast fill failed: its deposit is refunded with the failure',
    request: waiting,
    claim: { kind: 'fastFill' },
    answers: { fresh: fastFillFailed },
    expected: {
      kind: 'refund',
      request: fastFillFailed,
      failReason: 'TRANSACTION_REVERTED',
      fastFillFailed: true,
    },
    asked: ['fresh'],
  },
  {
    name: 'fast fill failed with no reason recorded: EXECUTION_REVERTED',
    request: waiting,
    claim: { kind: 'fastFill' },
    answers: { fresh: fastFillFailedBare },
    expected: { kind: 'refund', request: fastFillFailedBare, failReason: 'EXECUTION_REVERTED', fastFillFailed: true },
    asked: ['fresh'],
  },
  {
    name: 'fast fill failed and its refund was already decided: nothing',
    request: waiting,
    claim: { kind: 'fastFill' },
    answers: { fresh: fastFillRefunded },
    expected: { kind: 'done', why: 'fast-fill-paid' },
    asked: ['fresh'],
  },
  // A request the database does not know: the grace first, then the chains.
  {
    name: 'unknown request: held for its grace (in a lane of its own)',
    request: undefined,
    claim: { kind: 'notOwn', why: 'orphan' },
    answers: {},
    expected: { kind: 'hold', why: 'unknown-request' },
    asked: [],
  },
  {
    name: 'unknown request after its grace, released on chain already: kept',
    request: undefined,
    claim: { kind: 'notOwn', why: 'orphan' },
    graceOver: true,
    answers: { released: true },
    expected: { kind: 'done', why: 'kept', keep: 'released' },
    asked: ['released'],
  },
  {
    name: 'unknown request after its grace, filled on a chain: kept for that fill',
    request: undefined,
    claim: { kind: 'notOwn', why: 'orphan' },
    graceOver: true,
    answers: { released: false, filledAnywhere: 2 },
    expected: { kind: 'done', why: 'kept', keep: 'filled', filledOn: 2 },
    asked: ['released', 'filledAnywhere'],
  },
  {
    name: 'unknown request after its grace, filled nowhere: refunded to its depositor',
    request: undefined,
    claim: { kind: 'notOwn', why: 'orphan' },
    graceOver: true,
    answers: { released: false, filledAnywhere: undefined },
    expected: { kind: 'strayRefund', why: 'unknown-request', refundTo: depositor, shownOn: null },
    asked: ['released', 'filledAnywhere'],
  },
  // Deposits that are not their request's own: refunded on their own, the request left as it was.
  {
    name: 'stray (another chain): refunded to its depositor',
    request: waiting,
    claim: { kind: 'notOwn', why: 'stray' },
    standing: stray('other-chain'),
    answers: { latest: waiting },
    expected: { kind: 'strayRefund', why: 'other-chain', refundTo: depositor, shownOn: null },
    asked: ['latest'],
  },
  {
    name: "the user's own short deposit for a request already paid: refunded on its own",
    request: waiting,
    claim: { kind: 'notOwn', why: 'stray' },
    standing: { verdict: { kind: 'own-short' }, swept: false },
    answers: { latest: pending },
    expected: { kind: 'strayRefund', why: 'short-not-from-user', refundTo: depositor, shownOn: null },
    asked: ['latest'],
  },
  {
    name: "carried by the solver's transaction: refunded to its requester",
    request: waiting,
    claim: { kind: 'notOwn', why: 'stray' },
    standing: stray('in-solver-transaction'),
    answers: { latest: waiting, carriedRefundTarget: requester },
    expected: { kind: 'strayRefund', why: 'in-solver-transaction', refundTo: requester, shownOn: null },
    asked: ['latest', 'carriedRefundTarget'],
  },
  {
    name: "carried by the solver's transaction, naming only a gateway contract: kept for the operator",
    request: waiting,
    claim: { kind: 'notOwn', why: 'stray' },
    standing: stray('in-solver-transaction'),
    answers: { latest: waiting, carriedRefundTarget: null },
    expected: { kind: 'done', why: 'kept', keep: 'gateway-depositor' },
    asked: ['latest', 'carriedRefundTarget'],
  },
  {
    name: 'a second deposit for a paid request: DOUBLE_SPEND, refunded to the order’s refundTo',
    request: waiting,
    claim: { kind: 'notOwn', why: 'extra' },
    standing: { verdict: { kind: 'pays' }, swept: false },
    answers: { latest: success },
    expected: { kind: 'strayRefund', why: 'double-spend', refundTo, shownOn: null, status: 'success' },
    asked: ['latest'],
  },
  {
    name: "a second transfer to the request's deposit address: back to its sender, shown on the request",
    request: waiting,
    claim: { kind: 'notOwn', why: 'extra' },
    standing: { verdict: { kind: 'pays' }, swept: true },
    answers: { latest: success },
    expected: { kind: 'strayRefund', why: 'double-spend', refundTo: depositor, shownOn: id, status: 'success' },
    asked: ['latest'],
  },
  // A request its own deposit paid for.
  {
    name: 'its depositor asked for the refund: refunded, nothing read',
    request: refundRequested,
    claim: { kind: 'claimed', request: refundRequested },
    answers: {},
    expected: {
      kind: 'refund',
      request: refundRequested,
      failReason: REFUND_REQUESTED,
      details: refundRequested.details as { message: string },
    },
    asked: [],
  },
  {
    name: 'destination not served: held before any check',
    request: waiting,
    claim: claimed,
    answers: { served: hold },
    expected: { kind: 'hold', why: 'gate', reason: 'prices: the feed is stale' },
    asked: ['served'],
  },
  {
    name: 'held past the maximum hold: TTL_EXPIRED',
    request: waiting,
    claim: claimed,
    answers: { served: ttl },
    expected: { kind: 'refund', request: pending, failReason: 'TTL_EXPIRED', details: { message: 'held' } },
    asked: ['served'],
  },
  {
    name: 'released on chain and filled: the request ends in success, nothing sent',
    request: waiting,
    claim: claimed,
    answers: { served: fill, released: true, checks: null, filled: true },
    expected: { kind: 'done', why: 'released', request: pending, filled: true },
    asked: ['served', 'released', 'checks', 'filled'],
  },
  {
    name: 'released on chain and not filled: the request ends refunded, nothing sent (whatever the checks say)',
    request: waiting,
    claim: claimed,
    answers: { served: fill, released: true, checks: expired, filled: false },
    expected: { kind: 'done', why: 'released', request: pending, filled: false },
    asked: ['served', 'released', 'checks', 'filled'],
  },
  {
    name: 'a check fails: refunded with its reason, the gate not asked',
    request: waiting,
    claim: claimed,
    answers: { served: fill, released: false, checks: expired },
    expected: { kind: 'refund', request: pending, failReason: 'ORDER_EXPIRED' },
    asked: ['served', 'released', 'checks'],
  },
  {
    name: 'the gate reprices below the floor: SLIPPAGE',
    request: waiting,
    claim: claimed,
    answers: { served: fill, released: false, checks: null, gate: slippage },
    expected: { kind: 'refund', request: pending, failReason: 'SLIPPAGE', details: { message: 'below' } },
    asked: ['served', 'released', 'checks', 'gate'],
  },
  {
    name: 'the gate holds (prices, outflow limit): held',
    request: waiting,
    claim: claimed,
    answers: { served: fill, released: false, checks: null, gate: hold },
    expected: { kind: 'hold', why: 'gate', reason: 'prices: the feed is stale' },
    asked: ['served', 'released', 'checks', 'gate'],
  },
  {
    name: 'every check and the gate pass: filled',
    request: waiting,
    claim: claimed,
    answers: { served: fill, released: false, checks: null, gate: fill },
    expected: { kind: 'fill', request: pending },
    asked: ['served', 'released', 'checks', 'gate'],
  },
];

/** Reads answering from `answers`, recording what was asked. */
function fakeReads(row: Row, asked: Array<keyof Answers>): DecisionReads {
  const answer = <K extends keyof Answers>(key: K): Answers[K] => {
    asked.push(key);
    if (!(key in row.answers)) throw new Error(`${row.name}: asked for ${key}, which it must not need`);
    return row.answers[key] as Answers[K];
  };
  return {
    claim: row.claim,
    ...(row.standing === undefined ? {} : { standing: row.standing }),
    ...(row.graceOver === undefined ? {} : { graceOver: row.graceOver }),
    latest: async () => answer('latest'),
    fresh: async () => answer('fresh'),
    carriedRefundTarget: async () => answer('carriedRefundTarget'),
    released: async () => answer('released'),
    filled: async () => answer('filled'),
    filledAnywhere: async () => answer('filledAnywhere'),
    served: () => answer('served'),
    checks: async () => answer('checks'),
    gate: async () => answer('gate'),
  };
}

describe('the solver decision (decide)', () => {
  it.each(rows)('$name', async (row) => {
    const asked: Array<keyof Answers> = [];
    const decision = await decide(row.request, deposit(), fakeReads(row, asked));
    expect(decision).toEqual(row.expected);
    expect(asked).toEqual(row.asked);
  });

  it('names every kind of decision in the table', () => {
    const kinds = new Set(rows.map((row) => row.expected.kind));
    expect([...kinds].sort()).toEqual(['done', 'fill', 'hold', 'refund', 'strayRefund']);
  });
});

interface SelfRefundRow {
  name: string;
  request: RequestRecord | undefined;
  held: string | null;
  deposit?: DepositRecord | null;
  liveFill?: boolean;
  expected: SelfRefundStep;
}

const paid = deposit();
const selfRefundRows: SelfRefundRow[] = [
  {
    name: 'unknown request',
    request: undefined,
    held: null,
    expected: { kind: 'answer', answer: { kind: 'unknown' } },
  },
  {
    name: 'no longer pending: moved on',
    request: success,
    held: null,
    expected: { kind: 'answer', answer: { kind: 'moved', request: success } },
  },
  {
    name: 'asked for before (a retry, a restart): resumed from the records',
    request: refundRequested,
    held: 'prices: stale',
    expected: { kind: 'resume' },
  },
  {
    name: 'pending and not held (being decided or filled): not held',
    request: pending,
    held: null,
    expected: { kind: 'answer', answer: { kind: 'notHeld', request: pending } },
  },
  {
    name: 'held, but no deposit attached: not held',
    request: pending,
    held: 'prices: stale',
    deposit: null,
    expected: { kind: 'answer', answer: { kind: 'notHeld', request: pending } },
  },
  {
    name: 'held, but a fill is recorded: not held',
    request: pending,
    held: 'prices: stale',
    deposit: paid,
    liveFill: true,
    expected: { kind: 'answer', answer: { kind: 'notHeld', request: pending } },
  },
  {
    name: 'held, paid, no fill: refunded, MANUAL_ADMIN_REFUND',
    request: pending,
    held: 'prices: stale',
    deposit: paid,
    liveFill: false,
    expected: {
      kind: 'refund',
      deposit: paid,
      decision: {
        kind: 'refund',
        request: pending,
        failReason: REFUND_REQUESTED,
        details: { message: "Refunded at its depositor's request while held: prices: stale" },
      },
    },
  },
];

describe("the depositor's refund request (decideSelfRefund)", () => {
  it.each(selfRefundRows)('$name', async (row) => {
    const reads: SelfRefundReads = {
      heldReason: () => row.held,
      deposit: async () => {
        if (row.deposit === undefined) throw new Error(`${row.name}: the deposit must not be read`);
        return row.deposit;
      },
      liveFill: async () => {
        if (row.liveFill === undefined) throw new Error(`${row.name}: the live fill must not be read`);
        return row.liveFill;
      },
    };
    expect(await decideSelfRefund(row.request, reads)).toEqual(row.expected);
  });
});

describe("a deposit's standing before its claim (standingOf)", () => {
  const own = '0x000000000000000000000000000000000000ad00';
  it.each([
    { name: 'unknown request', request: undefined, deposit: deposit(), standing: { verdict: undefined, swept: false } },
    { name: 'pays', request: waiting, deposit: deposit(), standing: { verdict: { kind: 'pays' }, swept: false } },
    {
      name: "short, from the order's user",
      request: waiting,
      deposit: deposit({ amount: 99n }),
      standing: { verdict: { kind: 'own-short' }, swept: false },
    },
    {
      name: 'short, from someone else',
      request: waiting,
      deposit: deposit({ amount: 99n, sender: depositor }),
      standing: stray('short-not-from-user'),
    },
    {
      name: 'another currency',
      request: waiting,
      deposit: deposit({ token: '0x00000000000000000000000000000000000000c2' }),
      standing: { verdict: { kind: 'stray', why: 'other-currency' }, swept: false },
    },
    {
      name: "nested in the solver's own transaction",
      request: waiting,
      deposit: deposit({ sender: solver, carrier: 'call:0x0000000000000000000000000000000000000bad' }),
      standing: stray('in-solver-transaction'),
    },
    {
      name: "a sweep of the request's own deposit address, short: the user's own",
      request: request({ depositAddress: own }),
      deposit: deposit({ sender: solver, carrier: `sweep:${own}`, amount: 99n }),
      standing: { verdict: { kind: 'own-short' }, swept: true },
    },
  ] as const)('$name', ({ request: walked, deposit: seen, standing }) => {
    expect(standingOf(walked, seen, solver)).toEqual(standing);
  });
});
