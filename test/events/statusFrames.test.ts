import { describe, expect, it } from 'vitest';
import { toStatusUpdate } from '../../src/core/events/statusStream.js';
import type { Caller } from '../../src/core/vocabulary/caller.js';
import type { RequestStatusSnapshot } from '../../src/records/requestStatus.js';
import { statusEventFrame, toEventData } from '../../src/ws/statusSocket.js';

const keyOf = (id: string): Caller => ({
  apiKey: { id, sponsorshipEnabled: false, revenueShareEligible: false, fastFillLimitUsdMicros: null },
});
const request = { createdAt: 1_700_000_000_000, apiKeyId: 'owner' };

const snapshot = (overrides: Partial<RequestStatusSnapshot> = {}): RequestStatusSnapshot => ({
  requestId: `0x${'ab'.repeat(32)}`,
  status: 'failure',
  inTxHashes: [`0x${'01'.repeat(32)}`],
  txHashes: [],
  updatedAt: 1_700_000_001_234,
  originChainId: 31337,
  destinationChainId: 31338,
  details: { reason: 'reverted "quoted" — ünïcode', data: '0x08c379a0' },
  failReason: 'SOLVER_BALANCE_TOO_LOW',
  refundFailReason: null,
  referrer: 'partner.example',
  depositAddress: {
    address: `0x${'cd'.repeat(20)}`,
    type: 'strict',
    depositor: `0x${'ef'.repeat(20)}`,
    depositTxHash: `0x${'02'.repeat(32)}`,
    recoveryAddress: null,
  },
  ...overrides,
});

describe('a status change rendered once for all its subscribers', () => {
  it('shares one message per view of a payload: the owner sees the referrer, every other caller the same one without', () => {
    const payload = snapshot();
    const anonymous = toStatusUpdate(payload, request, { apiKey: null });
    const otherKey = toStatusUpdate(payload, request, keyOf('someone-else'));
    const owner = toStatusUpdate(payload, request, keyOf('owner'));
    expect(otherKey).toBe(anonymous);
    expect(toStatusUpdate(payload, request, keyOf('owner'))).toBe(owner);
    expect(anonymous.referrer).toBeNull();
    expect(owner.referrer).toBe('partner.example');
    expect({ ...owner, referrer: null }).toEqual(anonymous);
    // Another payload (another change, or a subscriber's own snapshot) is rendered on its own.
    const next = toStatusUpdate(snapshot({ status: 'refund' }), request, { apiKey: null });
    expect(next).not.toBe(anonymous);
    expect(next.status).toBe('refund');
  });

  it('/ws frames are byte for byte what JSON.stringify of the event gives', () => {
    for (const payload of [snapshot(), snapshot({ depositAddress: null, details: null, status: 'pending' })]) {
      for (const caller of [{ apiKey: null }, keyOf('owner')]) {
        const update = toStatusUpdate(payload, request, caller);
        for (const publishedAt of [1_700_000_002_000, 1_700_000_002_001]) {
          expect(statusEventFrame(update, publishedAt)).toBe(
            JSON.stringify({ event: 'request.status.updated', data: toEventData(update), publishedAt }),
          );
        }
      }
    }
  });
});
