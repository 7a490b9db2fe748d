/**
 * What a quoted request's fill will take from the solver on the destination (`requests.committed_outflow`), from
 * real quotes on the devnet: a cross-chain swap into LONG (which the solver does not hold) commits the DEX leg's
 * entry currency and amount, native for an ETH entry, never the LONG it delivers; a gas top-up adds native. Once
 * those requests are in flight, the inventory's committed figure (`sumCommittedFills`) is those lines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, zeroAddress, type Address } from 'viem';
import type { DevnetChain } from '../../src/chain/devnet.js';
import { committedOutflow } from '../../src/core/fill/fillOutflow.js';
import { sumCommittedFills } from '../../src/store/committedOutflow.repository.js';
import { getRequest, insertRequest, updateRequestStatus } from '../../src/store/requests.repository.js';
import { useTestDatabase } from '../helpers/db.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { requestQuote, tokenOf } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
}, 240_000);
afterAll(async () => {
  await gateway?.stop();
});

const long = (): Address => chainB.longTailTokens.find((t) => t.symbol === 'LONG')!.address;
const fresh = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;

/** The request a quote stored, and its committed outflow as stored. */
async function stored(requestId: string) {
  const { db } = gateway.server.database;
  const record = (await getRequest(db, requestId))!;
  const row = await db
    .selectFrom('requests')
    .select('committed_outflow')
    .where('id', '=', requestId.toLowerCase())
    .executeTakeFirstOrThrow();
  return { record, lines: row.committed_outflow };
}

describe('the committed outflow of quoted requests', () => {
  // The requests in flight are moved in a database of their own, so the gateway's solver never sees them.
  const inFlight = useTestDatabase('pglite');

  it('a DEX destination leg commits its entry currency and amount; native in and a gas top-up commit native', async () => {
    const user = gateway.devnet.descriptor.accounts[0]!;
    // ETH(A) → LONG(B) with a gas top-up: the fill spends ETH on B into the pools, and sends the top-up in ETH.
    const eth = await requestQuote(gateway, user, {
      originCurrency: zeroAddress,
      destinationCurrency: long(),
      amount: parseEther('0.5').toString(),
      recipient: fresh(0x4c_0001),
      topupGas: true,
    });
    const ethLeg = eth.details.route.destination;
    expect(ethLeg.inputCurrency.currency.address).toBe(zeroAddress);
    const topup = BigInt(eth.details.currencyGasTopup.amount);
    expect(topup).toBeGreaterThan(0n);
    const ethRequest = await stored(eth.steps.at(-1)!.requestId);
    expect(ethRequest.lines).toEqual([
      { currency: zeroAddress, amount: (BigInt(ethLeg.inputCurrency.amount) + topup).toString() },
    ]);

    // USDC(A) → LONG(B): the fill spends the solver's USDC on B, not the LONG the recipient receives.
    const usdcB = tokenOf(chainB, 'USDC').toLowerCase();
    const usdc = await requestQuote(gateway, user, {
      originCurrency: tokenOf(chainA, 'USDC'),
      destinationCurrency: long(),
      amount: '500000000',
      recipient: fresh(0x4c_0002),
    });
    const usdcLeg = usdc.details.route.destination;
    expect(usdcLeg.inputCurrency.currency.address.toLowerCase()).toBe(usdcB);
    expect(BigInt(usdcLeg.inputCurrency.amount)).not.toBe(BigInt(usdc.details.currencyOut.amount));
    const usdcRequest = await stored(usdc.steps.at(-1)!.requestId);
    expect(usdcRequest.lines).toEqual([{ currency: usdcB, amount: usdcLeg.inputCurrency.amount }]);

    // The stored lines are the rule the fill spends by, read back from the stored request.
    for (const { record, lines } of [ethRequest, usdcRequest])
      expect(lines).toEqual(
        committedOutflow(record).map((line) => ({ currency: line.currency, amount: line.amount.toString() })),
      );

    // In flight, the inventory holds back exactly those lines: ETH and USDC on B, no LONG.
    const { db } = inFlight();
    for (const [{ record, lines }, status] of [
      [ethRequest, 'pending'],
      [usdcRequest, 'submitted'],
    ] as const) {
      const committed = lines.map((line) => ({ currency: line.currency, amount: BigInt(line.amount) }));
      await insertRequest(db, { ...record, status: 'waiting', committedOutflow: committed });
      await updateRequestStatus(db, record.id, { status, now: record.createdAt + 1 });
    }
    const sums = new Map(
      (await sumCommittedFills(db)).map((line) => [`${line.chainId}:${line.currency}`, line.amount]),
    );
    expect(sums).toEqual(
      new Map([
        [`${chainB.chainId}:${zeroAddress}`, BigInt(ethLeg.inputCurrency.amount) + topup],
        [`${chainB.chainId}:${usdcB}`, BigInt(usdcLeg.inputCurrency.amount)],
      ]),
    );
  });
});
