import { describe, expect, it } from 'vitest';
import { appFees, type AppFeeEntry } from '../../../src/core/fees/index.js';

const A = '0x000000000000000000000000000000000000000a';
const B = '0x000000000000000000000000000000000000000b';
const C = '0x000000000000000000000000000000000000000c';

describe('appFees', () => {
  it.each<[string, bigint, AppFeeEntry[], bigint[], number, bigint]>([
    ['no entries', 1_000_000n, [], [], 0, 0n],
    [
      'one recipient, 50 bps of 1000 USDC',
      1_000_000_000n,
      [{ recipient: A, feeBps: 50 }],
      [5_000_000n],
      50,
      5_000_000n,
    ],
    [
      'several recipients',
      1_000_000_000n,
      [
        { recipient: A, feeBps: 10 },
        { recipient: B, feeBps: 25 },
        { recipient: C, feeBps: 100 },
      ],
      [1_000_000n, 2_500_000n, 10_000_000n],
      135,
      13_500_000n,
    ],
    [
      // 1.9999 -> 1 and 5.9997 -> 5: the total is the sum of rounded entries (6), not round(7.9996)
      'rounds down per entry',
      19_999n,
      [
        { recipient: A, feeBps: 1 },
        { recipient: B, feeBps: 3 },
      ],
      [1n, 5n],
      4,
      6n,
    ],
    ['zero bps entry is allowed', 1_000n, [{ recipient: A, feeBps: 0 }], [0n], 0, 0n],
    ['10000 bps takes the whole input', 12_345n, [{ recipient: A, feeBps: 10_000 }], [12_345n], 10_000, 12_345n],
    [
      'several recipients summing exactly to 10000 bps',
      10_001n,
      [
        { recipient: A, feeBps: 5_000 },
        { recipient: B, feeBps: 5_000 },
      ],
      [5_000n, 5_000n],
      10_000,
      10_000n,
    ],
    ['zero amount', 0n, [{ recipient: A, feeBps: 100 }], [0n], 100, 0n],
  ])('%s', (_name, amount, entries, amounts, totalBps, total) => {
    const result = appFees(amount, entries);
    expect(result.perRecipient.map((entry) => entry.amount)).toEqual(amounts);
    expect(result.perRecipient.map((entry) => entry.recipient)).toEqual(entries.map((entry) => entry.recipient));
    expect(result.totalBps).toBe(totalBps);
    expect(result.total).toBe(total);
  });

  it.each<[string, bigint, AppFeeEntry[]]>([
    ['negative bps', 1_000n, [{ recipient: A, feeBps: -1 }]],
    ['bps above 10000', 1_000n, [{ recipient: A, feeBps: 10_001 }]],
    ['fractional bps', 1_000n, [{ recipient: A, feeBps: 1.5 }]],
    ['NaN bps', 1_000n, [{ recipient: A, feeBps: Number.NaN }]],
    [
      'total above 10000 bps',
      1_000n,
      [
        { recipient: A, feeBps: 6_000 },
        { recipient: B, feeBps: 4_001 },
      ],
    ],
    ['negative amount', -1n, [{ recipient: A, feeBps: 1 }]],
  ])('rejects %s with INVALID_INPUT', (_name, amount, entries) => {
    expect(() => appFees(amount, entries)).toThrow(expect.objectContaining({ code: 'INVALID_INPUT', status: 400 }));
  });
});
