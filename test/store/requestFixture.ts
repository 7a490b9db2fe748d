import type { Kysely } from 'kysely';
import { committedOutflow } from '../../src/core/fill/fillOutflow.js';
import { insertDeposit } from '../../src/store/deposits.repository.js';
import type { GroupedDepositClaim, InsertRequestParameters } from '../../src/store/requests.repository.js';
import type { Tables } from '../../src/store/tables.js';

let counter = 0;

/** A bytes32 hex id, unique within the test run. */
export const hex32 = (n: number): string => `0x${n.toString(16).padStart(64, '0')}`;

/**
 * A valid request with unique ids; override what a test is about. Its committed outflow is the core's for the
 * request unless given.
 */
export function newRequest(overrides: Partial<InsertRequestParameters> = {}): InsertRequestParameters {
  counter += 1;
  const request: Omit<InsertRequestParameters, 'committedOutflow'> = {
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
  return { ...request, committedOutflow: overrides.committedOutflow ?? committedOutflow(request) };
}

/**
 * A `confirmed` deposit of 1,000,000 wei for each request, in one block (hashes from `seed`), as the watcher leaves
 * them for the solver: the claims `claimDepositsForRequests` takes.
 */
export async function insertConfirmedDeposits(
  db: Kysely<Tables>,
  requestIds: readonly string[],
  seed: number,
): Promise<GroupedDepositClaim[]> {
  const claims: GroupedDepositClaim[] = [];
  for (const [index, requestId] of requestIds.entries()) {
    const { deposit } = await insertDeposit(db, {
      chainId: 31337,
      txHash: hex32(seed + index),
      logIndex: 0,
      blockNumber: 9n,
      blockHash: hex32(seed + 0x0fff),
      requestId,
      depositor: '0x1111111111111111111111111111111111111111',
      token: '0x0000000000000000000000000000000000000000',
      amount: 1_000_000n,
      status: 'confirmed',
      now: 5,
    });
    claims.push({ depositId: deposit.id, requestId, confirmedAt: deposit.updatedAt });
  }
  return claims;
}
