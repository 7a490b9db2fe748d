import type { InsertRequestParameters } from '../../src/store/requests.repository.js';

let counter = 0;

/** A bytes32 hex id, unique within the test run. */
export const hex32 = (n: number): string => `0x${n.toString(16).padStart(64, '0')}`;

/** A valid request with unique ids; override what a test is about. */
export function newRequest(overrides: Partial<InsertRequestParameters> = {}): InsertRequestParameters {
  counter += 1;
  return {
    id: hex32(counter),
    user: '0x1111111111111111111111111111111111111111',
    recipient: '0x2222222222222222222222222222222222222222',
    refundTo: '0x1111111111111111111111111111111111111111',
    sender: '0x1111111111111111111111111111111111111111',
    originChainId: 31337,
    destinationChainId: 31338,
    originCurrency: '0x0000000000000000000000000000000000000000',
    destinationCurrency: '0x0000000000000000000000000000000000000000',
    amountIn: 1_000_000n,
    amountOut: 990_000n,
    minAmountOut: 980_000n,
    tradeType: 'EXACT_INPUT',
    operation: 'bridge',
    orderId: hex32(1_000_000 + counter),
    quote: { details: { operation: 'bridge' } },
    feesQuoted: { execution: { usd: '0.02' } },
    expiresAt: 1_800_000_000_000,
    createdAt: 1_700_000_000_000,
    ...overrides,
  };
}
