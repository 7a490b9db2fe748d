/**
 * What fills in flight will take from the solver (`sumCommittedFills`): outputs per destination chain and currency,
 * and a gas top-up's native in the chain's native line, for `pending` and `submitted` requests only. On both
 * databases.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { zeroAddress } from 'viem';
import { insertRequest, updateRequestStatus } from '../../src/store/requests.repository.js';
import { sumCommittedFills } from '../../src/store/settlements.repository.js';
import { testDatabaseKinds, truncateAll, useTestDatabase } from '../helpers/db.js';
import { newRequest } from './requestFixture.js';

const usdc = '0x00000000000000000000000000000000000000c1';

describe.each(testDatabaseKinds)('sumCommittedFills (%s)', (kind) => {
  const database = useTestDatabase(kind);
  beforeEach(() => truncateAll(database()));

  it('adds gas top-ups of requests in flight to the native line of their destination', async () => {
    const { db } = database();
    const inFlight = async (overrides: Parameters<typeof newRequest>[0], status: 'pending' | 'submitted' | null) => {
      const request = await insertRequest(db, newRequest(overrides));
      if (status !== null) await updateRequestStatus(db, request.id, { status, now: 2 });
    };
    const topup = { details: { operation: 'bridge' }, gasTopup: { amount: '700', usdMicros: '2000000' } };
    await inFlight({ destinationCurrency: usdc, amountOut: 5_000n, quote: topup }, 'pending');
    await inFlight({ destinationCurrency: usdc, amountOut: 1_000n, quote: topup }, 'submitted');
    await inFlight({ destinationCurrency: zeroAddress, amountOut: 90n }, 'pending');
    // Not in flight: neither its output nor its top-up is committed.
    await inFlight({ destinationCurrency: usdc, amountOut: 7n, quote: topup }, null);

    const sums = await sumCommittedFills(db);
    expect(new Map(sums.map((line) => [`${line.chainId}:${line.currency}`, line.amount]))).toEqual(
      new Map([
        [`31338:${usdc}`, 6_000n],
        [`31338:${zeroAddress}`, 90n + 1_400n],
      ]),
    );
  });
});
