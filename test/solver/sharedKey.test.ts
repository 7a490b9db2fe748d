/**
 * A second gateway on a second database with the same solver key never makes anyone paid twice. Each database knows
 * only its own requests, so each takes the other's deposits for unknown requests: they are refunded only after the
 * grace, once the chains say the order was not filled (the other's fill lands within it). And the second gateway
 * sees transactions of its key that it did not send (the first one's fills) and stops its solver there, saying so
 * in `/ready` and the log: every deposit ends filled or refunded, exactly once, on chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, parseEventLogs, zeroAddress, type Address, type TransactionReceipt } from 'viem';
import { depositoryAbi, onlyOwnerMulticallerAbi } from '../../generated/contracts/index.js';
import { startDevnet, type Devnet } from '../../src/chain/devnet.js';
import { listDepositsForRequest } from '../../src/store/deposits.repository.js';
import type { TestGateway } from '../helpers/gateway.js';
import { expectLedgerReconciled } from '../helpers/ledger.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus, type WireQuote } from '../helpers/quote.js';
import { sharedDevnetGateways } from '../helpers/sharedDevnetGateways.js';

let devnet: Devnet;

const gateways = sharedDevnetGateways(() => devnet);
/** A gateway on the shared devnet with a database of its own (PGlite in memory), the grace set to 15 s. */
const gatewayOn = (logs: any[] = []) =>
  gateways.start({ logs, environment: { GATEWAY_UNKNOWN_DEPOSIT_GRACE_SECONDS: '15' } });

beforeAll(async () => {
  devnet = await startDevnet({ basePort: 0 });
});

afterAll(async () => {
  await gateways.stopAll();
  await devnet?.stop();
});

/** Polls until `check` holds, failing after `timeoutMs` with `what`. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Whether every deposit of `requestId` in the gateway's database is `consumed` (processed to its end). */
async function consumed(gateway: TestGateway, requestId: string): Promise<boolean> {
  const deposits = await listDepositsForRequest(gateway.server.core.db, requestId);
  return deposits.length > 0 && deposits.every((deposit) => deposit.status === 'consumed');
}

describe('two gateways, two databases, one solver key', () => {
  it('every deposit is filled or refunded exactly once, and the second gateway reports the shared key', async () => {
    const [chainA, chainB] = devnet.descriptor.chains;
    const [alice, bob] = devnet.descriptor.accounts;
    const solverAddress = devnet.descriptor.solver.address.toLowerCase();
    const origin = publicClientOf(chainA!);
    const destination = publicClientOf(chainB!);

    const first = await gatewayOn();
    const secondLogs: any[] = [];
    const second = await gatewayOn(secondLogs);

    const recipients = [1, 2, 3, 4].map(
      (n) => `0x00000000000000000000000000000000ab0000${n.toString(16).padStart(2, '0')}` as Address,
    );
    const quoteOn = (gateway: TestGateway, recipient: Address, user = alice!) =>
      requestQuote(gateway, user, {
        originCurrency: zeroAddress,
        destinationCurrency: zeroAddress,
        amount: parseEther('0.01').toString(),
        recipient,
      });
    // Two requests quoted on each gateway, all before any deposit.
    const quotes: Array<{ quote: WireQuote; on: 'first' | 'second'; user: typeof alice }> = [
      { quote: await quoteOn(first, recipients[0]!), on: 'first', user: alice },
      { quote: await quoteOn(first, recipients[1]!), on: 'first', user: alice },
      { quote: await quoteOn(second, recipients[2]!, bob), on: 'second', user: bob },
      { quote: await quoteOn(second, recipients[3]!, bob), on: 'second', user: bob },
    ];
    const requestIdOf = (quote: WireQuote) => quote.steps.at(-1)!.requestId;
    const receipts: TransactionReceipt[] = [];

    // The first gateway's deposits: it fills them. The second takes them for unknown requests and waits.
    for (const { quote, user } of quotes.slice(0, 2))
      receipts.push([...(await executeSteps(first, quote.steps, user!)).values()].at(-1)!);
    for (const { quote } of quotes.slice(0, 2))
      expect((await waitForStatus(first, requestIdOf(quote), ['success', 'failure', 'refund'])).status).toBe('success');

    // The second sees the first one's fills, made with its key: its solver stops on the destination chain.
    const sharedCheck = async () => {
      const ready = await fetch(`${second.url}/ready`).then((response) => response.json());
      return ready.checks?.[`solver:${chainB!.chainId}`] as { ok: boolean; message: string } | undefined;
    };
    await until('the second gateway to report the shared key', async () => (await sharedCheck()) !== undefined);
    expect(await sharedCheck()).toMatchObject({
      ok: false,
      message: expect.stringMatching(/another gateway uses the solver key/),
    });
    expect(
      secondLogs.some((line) => line.level >= 50 && /another gateway uses the solver key/.test(String(line.msg))),
    ).toBe(true);

    // The second gateway's deposits: it holds their fills; the first refunds them after the grace.
    for (const { quote, user } of quotes.slice(2))
      receipts.push([...(await executeSteps(second, quote.steps, user!)).values()].at(-1)!);
    for (const { quote } of quotes.slice(0, 2))
      await until("the second gateway to decide the first one's deposits", () => consumed(second, requestIdOf(quote)));
    for (const { quote } of quotes.slice(2))
      await until("the first gateway to refund the second one's deposits", () => consumed(first, requestIdOf(quote)));
    await first.server.solver!.solver.idle();

    // On chain: each order filled or its deposit released to its depositor, exactly once, never both.
    const depositIndexes = receipts.map(
      (receipt) =>
        parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipt.logs })[0]!.args.depositIndex,
    );
    const releases = await origin.getContractEvents({
      address: chainA!.contracts.depository,
      abi: depositoryAbi,
      eventName: 'Released',
      fromBlock: 0n,
    });
    const outcomes = [];
    for (const [i, { quote, on }] of quotes.entries()) {
      const filled = await destination.readContract({
        address: chainB!.contracts.onlyOwnerMulticaller,
        abi: onlyOwnerMulticallerAbi,
        functionName: 'filled',
        args: [requestIdOf(quote)],
      });
      const refunds = releases.filter(
        (release) =>
          release.args.depositIndex === depositIndexes[i] && release.args.to!.toLowerCase() !== solverAddress,
      ).length;
      const paid = await destination.getBalance({ address: recipients[i]! });
      outcomes.push({ on, filled, refunds, paid: paid === BigInt(quote.details.currencyOut.amount) ? 'quoted' : paid });
    }
    expect(outcomes).toEqual([
      { on: 'first', filled: true, refunds: 0, paid: 'quoted' },
      { on: 'first', filled: true, refunds: 0, paid: 'quoted' },
      { on: 'second', filled: false, refunds: 1, paid: 0n },
      { on: 'second', filled: false, refunds: 1, paid: 0n },
    ]);
    // The first gateway's ledger knows every transaction of the key: the second sent none.
    await expectLedgerReconciled(first);
  }, 240_000);
});
