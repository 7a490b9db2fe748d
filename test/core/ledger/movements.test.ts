/**
 * The ledger's money rules as a table: facts in, movements out (`src/core/ledger/movements.ts`), with no database
 * and no calldata. Each row names the facts of one money event and the movements it books, as
 * `[key, kind, chain, currency, amount, debit, credit, usd]`.
 */
import { zeroAddress } from 'viem';
import { describe, expect, it } from 'vitest';
import {
  depositLost,
  depositReceived,
  gasSpent,
  refundPaid,
  requestFilled,
  settlementPaid,
  type FillFacts,
  type LedgerMovement,
  type QuotedRequest,
  type RefundFacts,
} from '../../../src/core/ledger/movements.js';
import { minedTxMovements, readSentTxFacts, sentTxFactsJson } from '../../../src/core/ledger/sentTxFacts.js';
import type { StoredFees } from '../../../src/store/storedFees.js';

const usdc = '0x00000000000000000000000000000000000005dc';
const weth = '0x000000000000000000000000000000000000e7e7';
const app = '0xaaaa00000000000000000000000000000000000a';
const recipient = '0x1111111111111111111111111111111111111111';
const multicaller = '0x2222222222222222222222222222222222222222';
const id = '0x' + 'ab'.repeat(32);

/** A USDC (chain 1) -> ETH (chain 2) swap's quoted fees: 124_000 of fees in USDC, the app's 100_000 among them. */
const fees = (overrides: Partial<StoredFees> = {}): StoredFees => ({
  currency: { chainId: 1, address: usdc, decimals: 6, symbol: 'USDC' },
  routeClass: 'swap',
  execution: 20_000n,
  destinationGasMicros: 5_000n,
  swap: 3_000n,
  platform: 1_000n,
  platformBps: 1,
  app: 100_000n,
  appFees: [{ recipient: app, feeBps: 100, amount: 100_000n }],
  sponsored: 0n,
  revenueShare: { tier: null, shareBps: 0, amount: 0n },
  usdMicros: {
    in: 10_000_000n,
    out: 9_876_000n,
    execution: 20_000n,
    swap: 3_000n,
    platform: 1_000n,
    app: 100_000n,
    sponsored: 0n,
  },
  ...overrides,
});

const request = (stored: StoredFees | null = fees()): QuotedRequest => ({
  id,
  input: { chainId: 1, currency: usdc, amount: 10_000_000n },
  fees: stored,
});

const fill = (overrides: Partial<FillFacts> = {}): FillFacts => ({
  request: request(),
  paid: { chainId: 2, currency: zeroAddress, amount: 3_292_000_000_000_000n, to: recipient },
  gasTopup: 0n,
  ...overrides,
});

type Row = [string, string, number, string, bigint, string, string, bigint | null];
const rows = (movements: readonly LedgerMovement[]): Row[] =>
  movements.map((m) => [m.key, m.kind, m.chainId, m.currency, m.amount, m.debit, m.credit, m.usdMicros]);

/** Every currency of `movements` sums to zero per account total, and the counterparty nets to zero in each. */
function counterpartyNet(movements: readonly LedgerMovement[]): Map<string, bigint> {
  const net = new Map<string, bigint>();
  for (const m of movements) {
    const key = `${m.chainId}:${m.currency}`;
    const delta = (m.debit === 'counterparty' ? m.amount : 0n) - (m.credit === 'counterparty' ? m.amount : 0n);
    net.set(key, (net.get(key) ?? 0n) + delta);
  }
  return net;
}

/** The movements of a plain fill of the swap above: fees, app fee, exchange of the rest, payout from the solver. */
const filledSwap = (paid: { currency: string; amount: bigint }, outUsd: bigint | null = 9_876_000n): Row[] => [
  [`${id}:fee:execution`, 'fee_earned', 1, usdc, 20_000n, 'counterparty', 'revenue:execution', 20_000n],
  [`${id}:fee:swap`, 'fee_earned', 1, usdc, 3_000n, 'counterparty', 'revenue:swap', 3_000n],
  [`${id}:fee:platform`, 'fee_earned', 1, usdc, 1_000n, 'counterparty', 'revenue:platform', 1_000n],
  [`${id}:app-fee:${app}`, 'app_fee_accrued', 1, usdc, 100_000n, 'counterparty', `app:${app}`, 100_000n],
  [`${id}:exchange:in`, 'exchange', 1, usdc, 9_876_000n, 'counterparty', 'trade', 9_876_000n],
  [`${id}:exchange:out`, 'exchange', 2, paid.currency, paid.amount, 'trade', 'counterparty', outUsd],
  [`${id}:fill`, 'fill_paid', 2, paid.currency, paid.amount, 'counterparty', 'solver', outUsd],
];

describe('the ledger rules: a request filled', () => {
  const eth = { currency: zeroAddress, amount: 3_292_000_000_000_000n };
  const cases: Array<[string, FillFacts, Row[]]> = [
    ['a plain fill in native', fill(), filledSwap(eth)],
    // The multicaller receives the output and runs the calls: the solver paid the same, to another address.
    [
      'a fill with calls (paid to the multicaller)',
      fill({ paid: { chainId: 2, ...eth, to: multicaller } }),
      filledSwap(eth),
    ],
    [
      'a fill of an ERC-20 output',
      fill({
        paid: { chainId: 2, currency: usdc.toUpperCase().replace('0X', '0x'), amount: 9_870_000n, to: recipient },
      }),
      filledSwap({ currency: usdc, amount: 9_870_000n }),
    ],
    // The top-up's value is charged in the execution fee; the native it sends is exchanged and paid like the output.
    [
      'a fill with a gas top-up',
      fill({ gasTopup: 500_000_000_000_000n }),
      [
        ...filledSwap(eth),
        [`${id}:topup:exchange:out`, 'exchange', 2, zeroAddress, 500_000_000_000_000n, 'trade', 'counterparty', null],
        [`${id}:topup`, 'fill_paid', 2, zeroAddress, 500_000_000_000_000n, 'counterparty', 'solver', null],
      ],
    ],
    // A fill that swaps inventory through a DEX names what left the solver: the exchange and the payout are in it.
    [
      'a fill that spent another inventory token (WETH)',
      fill({ paid: { chainId: 2, currency: weth, amount: 3_300_000_000_000_000n, to: recipient } }),
      filledSwap({ currency: weth, amount: 3_300_000_000_000_000n }),
    ],
    [
      'no stored fees: the whole input is exchanged, unvalued',
      fill({ request: request(null) }),
      [
        [`${id}:exchange:in`, 'exchange', 1, usdc, 10_000_000n, 'counterparty', 'trade', null],
        [`${id}:exchange:out`, 'exchange', 2, zeroAddress, eth.amount, 'trade', 'counterparty', null],
        [`${id}:fill`, 'fill_paid', 2, zeroAddress, eth.amount, 'counterparty', 'solver', null],
      ],
    ],
  ];
  it.each(cases)('%s', (_name, facts, expected) => {
    expect(rows(requestFilled(facts))).toEqual(expected);
  });

  it('a sponsored fee: the sponsor pays its share, the user pays the rest of the fees', () => {
    const sponsored = fees({ sponsored: 20_000n, usdMicros: { ...fees().usdMicros, sponsored: 20_000n } });
    const movements = requestFilled(fill({ request: request(sponsored) }));
    expect(rows(movements).find(([key]) => key === `${id}:sponsored`)).toEqual([
      `${id}:sponsored`,
      'sponsored',
      1,
      usdc,
      20_000n,
      'sponsor',
      'counterparty',
      20_000n,
    ]);
    // The user paid 104_000 of fees: 9_896_000 is exchanged.
    expect(movements.find((m) => m.key === `${id}:exchange:in`)?.amount).toBe(9_896_000n);
  });

  it('fees in another currency than the input: the whole input is exchanged', () => {
    const elsewhere = fees({ currency: { chainId: 2, address: zeroAddress, decimals: 18, symbol: 'ETH' } });
    const movements = requestFilled(fill({ request: request(elsewhere) }));
    expect(movements.find((m) => m.key === `${id}:exchange:in`)?.amount).toBe(10_000_000n);
    expect(movements.find((m) => m.key === `${id}:fee:execution`)).toMatchObject({ chainId: 2, currency: zeroAddress });
  });

  it('with its deposit, the user nets to zero in every currency', () => {
    const deposit = { chainId: 1, txHash: '0xD0', logIndex: 3, token: usdc, amount: 10_000_000n, depositIndex: 4n };
    const movements = [depositReceived(deposit, request()), ...requestFilled(fill())];
    expect([...counterpartyNet(movements).values()].every((net) => net === 0n)).toBe(true);
  });
});

describe('the ledger rules: deposits', () => {
  const deposit = { chainId: 1, txHash: '0xD0', logIndex: 3, token: usdc, amount: 9_000_000n, depositIndex: 4n };
  const cases: Array<[string, LedgerMovement, Row]> = [
    [
      'received into the depository, valued at the quote',
      depositReceived(deposit, request()),
      ['deposit:1:0xd0:3', 'deposit_received', 1, usdc, 9_000_000n, 'depository', 'counterparty', 9_000_000n],
    ],
    [
      'forwarded by the receiver to the solver, of an unknown request',
      depositReceived({ ...deposit, depositIndex: null }, undefined),
      ['deposit:1:0xd0:3', 'deposit_received', 1, usdc, 9_000_000n, 'solver', 'counterparty', null],
    ],
    [
      'in another currency than the quote: unvalued',
      depositReceived({ ...deposit, token: weth }, request()),
      ['deposit:1:0xd0:3', 'deposit_received', 1, weth, 9_000_000n, 'depository', 'counterparty', null],
    ],
    [
      'lost to a reorg after it was used',
      depositLost(deposit, request()),
      ['deposit-lost:1:0xd0:3', 'deposit_lost', 1, usdc, 9_000_000n, 'loss:reorg', 'depository', 9_000_000n],
    ],
  ];
  it.each(cases)('%s', (_name, movement, expected) => {
    expect(rows([movement])).toEqual([expected]);
  });
});

describe('the ledger rules: refunds', () => {
  const rate = { amount: 10_000_000n, usdMicros: 10_000_000n };
  const refund = (overrides: Partial<RefundFacts> = {}): RefundFacts => ({
    requestId: id,
    from: 'depository',
    currency: usdc,
    paid: 8_950_000n,
    depositAmount: 9_000_000n,
    valuation: rate,
    ...overrides,
  });
  const cases: Array<[string, RefundFacts, Row[]]> = [
    [
      'a release that keeps its gas',
      refund(),
      [
        ['refund:7', 'refund_paid', 1, usdc, 8_950_000n, 'counterparty', 'depository', 8_950_000n],
        ['refund:7:fee', 'fee_earned', 1, usdc, 50_000n, 'counterparty', 'revenue:refund', 50_000n],
        ['refund:7:kept', 'refund_kept', 1, usdc, 50_000n, 'depository:unallocated', 'depository', 50_000n],
      ],
    ],
    [
      'a release in full',
      refund({ paid: 9_000_000n }),
      [['refund:7', 'refund_paid', 1, usdc, 9_000_000n, 'counterparty', 'depository', 9_000_000n]],
    ],
    [
      'a forwarded deposit paid back in native from the solver',
      refund({ from: 'solver', currency: zeroAddress, paid: 1_000n, depositAmount: 1_500n, valuation: null }),
      [['refund:7', 'refund_paid', 1, zeroAddress, 1_000n, 'counterparty', 'solver', null]],
    ],
    [
      'a stray deposit (no request the gateway knows): booked, named by none, unvalued',
      refund({ requestId: null, valuation: null }),
      [
        ['refund:7', 'refund_paid', 1, usdc, 8_950_000n, 'counterparty', 'depository', null],
        ['refund:7:fee', 'fee_earned', 1, usdc, 50_000n, 'counterparty', 'revenue:refund', null],
        ['refund:7:kept', 'refund_kept', 1, usdc, 50_000n, 'depository:unallocated', 'depository', null],
      ],
    ],
  ];
  it.each(cases)('%s', (_name, facts, expected) => {
    expect(rows(refundPaid(7, 1, facts))).toEqual(expected);
    expect(refundPaid(7, 1, facts).every((m) => m.requestId === facts.requestId)).toBe(true);
  });
});

describe('the ledger rules: gas, settlement, and a mined transaction', () => {
  const receipt = { hash: '0xE1', gasUsed: 60_000n, effectiveGasPrice: 1_000_000_000n };

  it.each([
    ['fill', id],
    ['refund', id],
    ['deposit', id],
    ['gasless', id],
    ['settle', null],
    ['claim', null],
    ['sweep', null],
  ] as const)('the gas of a %s names its request: %s', (kind, named) => {
    expect(gasSpent({ chainId: 1, kind, requestId: id, receipt, usdMicros: 12n })).toEqual({
      key: 'gas:1:0xe1',
      kind: 'gas_spent',
      chainId: 1,
      currency: zeroAddress,
      amount: 60_000n * 1_000_000_000n,
      debit: 'expense:gas',
      credit: 'solver',
      usdMicros: 12n,
      requestId: named,
    });
  });

  it("an OP-stack receipt's L1 data fee is gas too; no gas, no movement", () => {
    const withL1 = gasSpent({
      chainId: 10,
      kind: 'fill',
      requestId: id,
      receipt: { ...receipt, l1Fee: 7n },
      usdMicros: null,
    });
    expect(withL1?.amount).toBe(60_000n * 1_000_000_000n + 7n);
    expect(
      gasSpent({ chainId: 1, kind: 'fill', requestId: id, receipt: { ...receipt, gasUsed: 0n }, usdMicros: null }),
    ).toBeNull();
  });

  it('a settlement releases each deposit to the solver, what it leaves behind unallocated', () => {
    const movements = settlementPaid(1, [
      {
        requestId: id.toUpperCase().replace('0X', '0x'),
        depositIndex: 4n,
        currency: usdc,
        depositAmount: 9_000_000n,
        released: 9_000_000n,
        valuation: { amount: 10_000_000n, usdMicros: 10_000_000n },
      },
      { requestId: id, depositIndex: 5n, currency: weth, depositAmount: 300n, released: 200n, valuation: null },
    ]);
    expect(rows(movements)).toEqual([
      ['settle:1:4', 'settlement', 1, usdc, 9_000_000n, 'solver', 'depository', 9_000_000n],
      ['settle:1:5', 'settlement', 1, weth, 200n, 'solver', 'depository', null],
      ['settle:1:5:kept', 'settlement', 1, weth, 100n, 'depository:unallocated', 'depository', null],
    ]);
    expect(movements.every((m) => m.requestId === id)).toBe(true);
  });

  it('a mined refund books its gas and, once it succeeded, its stored facts; a reverted one only its gas', () => {
    const facts = {
      kind: 'refund' as const,
      refund: {
        requestId: id,
        from: 'depository' as const,
        currency: usdc,
        paid: 90n,
        depositAmount: 100n,
        valuation: null,
      },
    };
    const tx = {
      id: 7,
      chainId: 1,
      requestId: id,
      kind: 'refund' as const,
      payload: { data: '0xdead', ledger: sentTxFactsJson(facts) },
    };
    // The facts survive the payload's JSON, whatever the call's data says.
    expect(readSentTxFacts(JSON.parse(JSON.stringify(tx.payload)), 7)).toEqual(facts);
    expect(minedTxMovements(tx, { ...receipt, status: 'success' }, null).map((m) => m.key)).toEqual([
      'gas:1:0xe1',
      'refund:7',
      'refund:7:fee',
      'refund:7:kept',
    ]);
    expect(minedTxMovements(tx, { ...receipt, status: 'reverted' }, null).map((m) => m.key)).toEqual(['gas:1:0xe1']);
    // A transaction that pays nothing besides its gas (a fill: its payout is booked with the request's `success`).
    expect(
      minedTxMovements({ ...tx, kind: 'fill', payload: {} }, { ...receipt, status: 'success' }, null),
    ).toHaveLength(1);
    expect(() => readSentTxFacts({ ledger: { kind: 'refund', from: 'nowhere' } }, 9)).toThrow(/outgoing tx 9/);
  });
});
