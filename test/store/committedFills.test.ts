/**
 * What fills in flight will take from the solver (`sumCommittedFills`): the committed outflow the core stored with
 * each request (`committedOutflow`), summed per destination chain and currency for `pending` and `submitted`
 * requests only: the output, or a DEX destination leg's entry currency and amount, and a gas top-up's native. The
 * backfill of older rows (`2026_12_03_0200`) gives the same lines. On both databases.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { zeroAddress } from 'viem';
import type { DexLegRecord } from '../../src/core/dex/legRecord.js';
import type { JsonObject } from '../../src/records/json.js';
import { committedOutflow } from '../../src/core/fill/fillOutflow.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import {
  insertRequest,
  insertRequests,
  insertSponsoredRequest,
  updateRequestStatus,
} from '../../src/store/requests.repository.js';
import { setCommittedOutflow, sumCommittedFills } from '../../src/store/committedOutflow.repository.js';
import { up as addCommittedOutflow } from '../../src/store/migrations/2026_12_03_0200_requests_committed_outflow.js';
import { testDatabaseKinds, truncateAll, useTestDatabase } from '../helpers/db.js';
import { newRequest } from './requestFixture.js';

const usdc = '0x00000000000000000000000000000000000000c1';
const long = '0x00000000000000000000000000000000000000d1';
const weth = '0x00000000000000000000000000000000000000e1';

/** A destination leg as a quote stores it (`dexLegRecord`): `amountIn` of `tokenIn` buys the output. */
const destinationLeg = (tokenIn: string, amountIn: bigint, nativeIn: boolean): JsonObject => {
  const leg: DexLegRecord = {
    chainId: 31338,
    source: 'uniswap-v3',
    router: '0x00000000000000000000000000000000000000f1',
    routerKind: 'SwapRouter',
    tokenIn: (nativeIn ? weth : tokenIn) as DexLegRecord['tokenIn'],
    tokenOut: long,
    nativeIn,
    nativeOut: false,
    amountIn: amountIn.toString(),
    amountOut: '999999',
    minAmountOut: '990000',
    priceImpactBps: '3',
    blockNumber: '12',
    hops: [{ pool: '0x00000000000000000000000000000000000000a1', fee: 3000, tokenIn: weth, tokenOut: long }],
  };
  return leg as unknown as JsonObject;
};
const topup = (amount: string) => ({ gasTopup: { amount, usdMicros: '2000000' } });
const linesOf = (sums: Awaited<ReturnType<typeof sumCommittedFills>>) =>
  new Map(sums.map((line) => [`${line.chainId}:${line.currency}`, line.amount]));

describe.each(testDatabaseKinds)('sumCommittedFills (%s)', (kind) => {
  const database = useTestDatabase(kind);
  beforeEach(() => truncateAll(database()));

  const inFlight = async (overrides: Parameters<typeof newRequest>[0], status: 'pending' | 'submitted' | null) => {
    const request = await insertRequest(database().db, newRequest(overrides));
    if (status !== null) await updateRequestStatus(database().db, request.id, { status, now: 2 });
    return request;
  };

  it('adds gas top-ups of requests in flight to the native line of their destination', async () => {
    const quote = { details: { operation: 'bridge' }, ...topup('700') };
    await inFlight({ destinationCurrency: usdc, amountOut: 5_000n, quote }, 'pending');
    await inFlight({ destinationCurrency: usdc, amountOut: 1_000n, quote }, 'submitted');
    await inFlight({ destinationCurrency: zeroAddress, amountOut: 90n }, 'pending');
    // Not in flight: neither its output nor its top-up is committed.
    await inFlight({ destinationCurrency: usdc, amountOut: 7n, quote }, null);

    expect(linesOf(await sumCommittedFills(database().db))).toEqual(
      new Map([
        [`31338:${usdc}`, 6_000n],
        [`31338:${zeroAddress}`, 90n + 1_400n],
      ]),
    );
  });

  it('a DEX destination leg commits its entry currency and amount, not the output; a native-in leg and a top-up commit native', async () => {
    // LONG bought with 400 USDC: the solver spends USDC, never holds LONG.
    await inFlight(
      {
        destinationCurrency: long,
        amountOut: 999_999n,
        quote: { dex: { destination: destinationLeg(usdc, 400n, false) } },
      },
      'pending',
    );
    // LONG bought with 300 native (the router wraps it), with a top-up of 50 native: one native line of 350.
    const nativeIn = await inFlight(
      {
        destinationCurrency: long,
        amountOut: 888_888n,
        quote: { dex: { destination: destinationLeg(weth, 300n, true) }, ...topup('50') },
      },
      'submitted',
    );
    expect(committedOutflow(nativeIn)).toEqual([{ currency: zeroAddress, amount: 350n }]);
    await inFlight({ destinationCurrency: usdc, amountOut: 1_000n }, 'pending');

    expect(linesOf(await sumCommittedFills(database().db))).toEqual(
      new Map([
        [`31338:${usdc}`, 1_400n],
        [`31338:${zeroAddress}`, 350n],
      ]),
    );
  });

  it('every insert stores the lines it is given: one row, a group commit (both forms), a sponsored quote', async () => {
    const { db } = database();
    await insertApiKey(db, {
      id: 'sponsor',
      name: 'sponsor',
      keyHash: 'sha256:sponsor',
      sponsorshipEnabled: true,
      sponsorshipAllowanceUsdMicros: 1_000n,
      now: 1,
    });
    const lines = (n: number) => [
      { currency: usdc.toUpperCase().replace('0X', '0x'), amount: 100n + BigInt(n) },
      { currency: zeroAddress, amount: 2n ** 200n + BigInt(n) },
    ];
    const requests = Array.from({ length: 13 }, (_, n) => newRequest({ committedOutflow: lines(n) }));
    await insertRequest(db, requests[0]!);
    await insertRequests(db, requests.slice(1, 3));
    await insertRequests(db, requests.slice(3, 12));
    expect(await insertSponsoredRequest(db, { ...requests[12]!, apiKeyId: 'sponsor' }, 10n)).toBe(true);
    const rows = await db.selectFrom('requests').select(['id', 'committed_outflow']).execute();
    expect(new Map(rows.map((row) => [row.id, row.committed_outflow]))).toEqual(
      new Map(
        requests.map((request, n) => [
          request.id,
          lines(n).map((line) => ({ currency: line.currency.toLowerCase(), amount: line.amount.toString() })),
        ]),
      ),
    );
  });

  it('a changed output (a gasless batch recovering its origin gas) is committed as the core rewrites it', async () => {
    const request = await inFlight({ destinationCurrency: usdc, amountOut: 5_000n }, null);
    const moved = await updateRequestStatus(database().db, request.id, {
      status: 'pending',
      amountOut: 4_200n,
      now: 2,
    });
    await setCommittedOutflow(database().db, request.id, committedOutflow(moved!));
    expect(linesOf(await sumCommittedFills(database().db))).toEqual(new Map([[`31338:${usdc}`, 4_200n]]));
  });

  it("the migration's backfill of older rows gives the lines the core gives, and the same sums", async () => {
    const { db } = database();
    const quotes: JsonObject[] = [
      { details: { operation: 'bridge' } },
      topup('700'),
      { dex: { destination: destinationLeg(usdc, 400n, false) } },
      { dex: { destination: destinationLeg(weth, 300n, true) }, ...topup('50') },
      { dex: { destination: destinationLeg(usdc, 20n, false) }, ...topup('9') },
    ];
    for (const [index, quote] of quotes.entries()) {
      await inFlight({ destinationCurrency: long, amountOut: 1_000n + BigInt(index), quote }, 'pending');
      await inFlight({ destinationCurrency: usdc, amountOut: 10n + BigInt(index), quote }, 'submitted');
      await inFlight({ destinationCurrency: usdc, amountOut: 3n, quote }, null);
    }
    const stored = async () =>
      (await db.selectFrom('requests').select(['id', 'committed_outflow']).orderBy('id').execute()).map((row) => ({
        id: row.id,
        lines: row.committed_outflow,
      }));
    const live = await stored();
    const sums = linesOf(await sumCommittedFills(db));
    // An older database: the column did not exist.
    await sql`alter table requests drop column committed_outflow`.execute(db);
    await addCommittedOutflow(db);
    expect(await stored()).toEqual(live);
    expect(linesOf(await sumCommittedFills(db))).toEqual(sums);
  });
});
