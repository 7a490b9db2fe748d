/** The pure rules behind the status and history operations, table-driven. */
import { describe, expect, it } from 'vitest';
import { detailsObject, failReasonOf, statusesOfV2, statusV1, statusV2 } from '../../src/core/requests/statusRules.js';
import { parseStoredFees } from '../../src/store/storedFees.js';
import { requestStatuses, type RequestStatus } from '../../src/records/requestStatus.js';

describe('failReasonOf', () => {
  const failed: RequestStatus[] = ['failure', 'fallback', 'refund'];
  it.each(
    requestStatuses.flatMap((status) => [
      { status, recorded: null, expected: failed.includes(status) ? 'UNKNOWN' : null },
      { status, recorded: 'SLIPPAGE', expected: failed.includes(status) ? 'SLIPPAGE' : null },
    ]),
  )('$status with $recorded recorded: $expected', ({ status, recorded, expected }) => {
    expect(failReasonOf({ status, failReason: recorded })).toBe(expected);
  });
});

describe('earlier status sets', () => {
  it('maps every status to v1 and v2, and a v2 filter back to every status it reports', () => {
    expect(requestStatuses.map((status) => statusV1[status])).toEqual([
      'waiting',
      'pending',
      'pending',
      'pending',
      'success',
      'failure',
      'fallback',
      'fallback',
    ]);
    expect(requestStatuses.map((status) => statusV2[status])).toEqual([
      'waiting',
      'depositing',
      'pending',
      'pending',
      'success',
      'failure',
      'refund',
      'refund',
    ]);
    expect(statusesOfV2('pending')).toEqual(['pending', 'submitted']);
    expect(statusesOfV2('refund')).toEqual(['refund', 'fallback']);
    expect(statusesOfV2('waiting')).toEqual(['waiting']);
  });
});

describe('detailsObject', () => {
  it.each([
    { details: null, expected: null },
    { details: { revert: '0x' }, expected: { revert: '0x' } },
    { details: 'reverted', expected: { message: 'reverted' } },
    { details: [1, 2], expected: { value: [1, 2] } },
    { details: 3, expected: { value: 3 } },
  ])('$details', ({ details, expected }) => {
    expect(detailsObject(details)).toEqual(expected);
  });
});

describe('parseStoredFees', () => {
  const stored = {
    currency: { chainId: 1, address: '0x0000000000000000000000000000000000000001', decimals: 6, symbol: 'USDC' },
    routeClass: 'bridge',
    execution: '20000',
    executionParts: { destinationGasMicros: '5000' },
    swap: '0',
    platform: '0',
    platformBps: 0,
    app: '100',
    appFees: [{ recipient: '0x0000000000000000000000000000000000000002', feeBps: 10, amount: '100' }],
    sponsored: '0',
    revenueShare: { tier: null, shareBps: 0, amount: '0' },
    usdMicros: {
      in: '1000000',
      out: '979900',
      execution: '20000',
      swap: '0',
      platform: '0',
      app: '100',
      sponsored: '0',
    },
  };

  it('reads the stored breakdown back with bigint amounts', () => {
    expect(parseStoredFees(stored)).toMatchObject({
      execution: 20_000n,
      destinationGasMicros: 5_000n,
      app: 100n,
      appFees: [{ feeBps: 10, amount: 100n }],
      usdMicros: { in: 1_000_000n },
    });
  });

  it.each([
    ['absent', null],
    ['without usdMicros', { ...stored, usdMicros: undefined as never }],
    ['with a non-integer amount', { ...stored, execution: '1.5' }],
    ['with malformed app fees', { ...stored, appFees: 'none' }],
  ])('is null when %s', (_name, value) => {
    expect(parseStoredFees(value as never)).toBeNull();
  });
});
