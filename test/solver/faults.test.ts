/**
 * Crash recovery of the solver, with a real process and a real `kill -9`: the gateway runs as a child process
 * on one devnet with PGlite in a data directory, started with `GATEWAY_CRASH_AT=<point>` so it SIGKILLs itself
 * at that step of the lifecycle (`src/core/faults.ts`), then restarted. Every time, the request must end in the
 * right terminal status with exactly one fill or one refund sent on chain: no deposit lost, nothing paid twice.
 * Transactions are counted on chain (every one the solver sent, reverted ones included), not read from the
 * gateway's records. The file shares one devnet and runs one child process at a time.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeFunctionData, getAddress, parseEther, zeroAddress, type Address, type Hex } from 'viem';

import { depositoryAbi, onlyOwnerMulticallerAbi } from '../../generated/contracts/index.js';
import { type Devnet, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import type { CrashPoint } from '../../src/core/faults.js';
import type { TestGateway } from '../helpers/gateway.js';
import { useGatewayProcesses, type GatewayRun } from '../helpers/gatewayProcess.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus, type WireQuote } from '../helpers/quote.js';
import { depositNative as sendNativeDeposit } from '../helpers/deposits.js';
import { depositEvents, filledEvents, releasedEvents } from '../helpers/chainReads.js';
import { revocablePull } from '../helpers/revertingCall.js';

const processes = useGatewayProcesses({ name: 'faults', readyTimeoutMs: 60_000 });

let devnet: Devnet;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;
let carol: DevnetAccount;

beforeAll(() => {
  devnet = processes.devnet;
  [chainA, chainB] = devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [alice, , carol] = devnet.descriptor.accounts as [DevnetAccount, DevnetAccount, DevnetAccount];
});

type Run = GatewayRun;

/** The gateway as a child process on the file's data directory (`test/helpers/gatewayProcess.ts`). */
const startGateway = (crashAt?: CrashPoint): Run => processes.start(crashAt);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits for the crash the run was started for: SIGKILL, not an error exit. */
async function crashed(run: Run): Promise<void> {
  const outcome = await Promise.race([run.exited, sleep(20_000).then(() => 'timeout' as const)]);
  expect(outcome, run.output()).toEqual({ code: null, signal: 'SIGKILL' });
}

/** The requests API of a running child, in the shape the quote helpers take. */
const gatewayAt = (url: string) => ({ url, devnet }) as unknown as TestGateway;

const terminal = ['success', 'failure', 'refund'];

/** Every transaction the solver sent to `to` on `chain` since `fromBlock` whose calldata decodes with `match`. */
async function solverTxs(
  chain: DevnetChain,
  fromBlock: bigint,
  to: Address,
  match: (input: Hex) => boolean,
): Promise<Hex[]> {
  const client = publicClientOf(chain);
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const found: Hex[] = [];
  for (let n = fromBlock; n <= head; n++) {
    const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) {
      if (
        tx.from.toLowerCase() === devnet.descriptor.solver.address.toLowerCase() &&
        tx.to?.toLowerCase() === to.toLowerCase() &&
        match(tx.input)
      ) {
        found.push(tx.hash);
      }
    }
  }
  return found;
}

/** Fill transactions for `requestId` on the destination (`OnlyOwnerMulticaller.fill(id, ...)`). */
const fillTxs = (fromBlock: bigint, requestId: Hex) =>
  solverTxs(chainB, fromBlock, chainB.contracts.onlyOwnerMulticaller, (input) => {
    const call = decodeFunctionData({ abi: onlyOwnerMulticallerAbi, data: input });
    return call.functionName === 'fill' && call.args[0].toLowerCase() === requestId.toLowerCase();
  });

/** Release (refund) transactions of the deposit with `depositIndex` on the origin. */
const releaseTxs = (fromBlock: bigint, depositIndex: bigint) =>
  solverTxs(chainA, fromBlock, chainA.contracts.depository, (input) => {
    const call = decodeFunctionData({ abi: depositoryAbi, data: input });
    return call.functionName === 'release' && call.args[0] === depositIndex;
  });

/** Deposits `value` of native for `requestId` directly on the depository; returns the deposit's index. */
async function depositNative(account: DevnetAccount, requestId: Hex, value: bigint): Promise<bigint> {
  return (await sendNativeDeposit(chainA, account, requestId, value)).depositIndex;
}

/** The index of the (only) deposit in a block of the origin (automine: one transaction per block). */
async function depositIndexOf(blockHash: Hex): Promise<bigint> {
  const deposits = await depositEvents(chainA, { blockHash });
  expect(deposits).toHaveLength(1);
  return deposits[0]!.args.depositIndex!;
}

let nextRecipient = 0xfa0100;
const freshAddress = (): Address => `0x${(nextRecipient++).toString(16).padStart(40, '0')}`;

interface Scenario {
  requestId: Hex;
  quote: WireQuote;
  recipient: Address;
  refundTo: Address;
  /** First blocks to scan for the solver's transactions. */
  from: { a: bigint; b: bigint };
}

async function quoteNative(url: string, amount = parseEther('0.01')): Promise<Scenario> {
  const recipient = freshAddress();
  const refundTo = freshAddress();
  const from = {
    a: await publicClientOf(chainA).getBlockNumber({ cacheTime: 0 }),
    b: await publicClientOf(chainB).getBlockNumber({ cacheTime: 0 }),
  };
  const quote = await requestQuote(gatewayAt(url), alice, {
    originCurrency: zeroAddress,
    destinationCurrency: zeroAddress,
    amount: amount.toString(),
    recipient,
    refundTo,
  });
  return { requestId: quote.steps.at(-1)!.requestId, quote, recipient, refundTo, from };
}

/** Exactly one fill reached the chain, the recipient holds exactly the quoted output, the deposit stays. */
async function expectFilledOnce(s: Scenario, depositIndex: bigint, record: any): Promise<void> {
  expect(record).toMatchObject({ status: 'success', failReason: 'N/A' });
  expect(await fillTxs(s.from.b, s.requestId)).toHaveLength(1);
  expect(await filledEvents(chainB, s.requestId)).toHaveLength(1);
  expect(await publicClientOf(chainB).getBalance({ address: s.recipient })).toBe(
    BigInt(s.quote.details.currencyOut.amount),
  );
  expect(await releaseTxs(s.from.a, depositIndex)).toHaveLength(0);
}

/** Exactly one release of the deposit, to refundTo; nothing filled. */
async function expectRefundedOnce(s: Scenario, depositIndex: bigint, record: any, failReason: string): Promise<void> {
  expect(record).toMatchObject({ status: 'refund', failReason, refundFailReason: 'N/A' });
  expect(await releaseTxs(s.from.a, depositIndex)).toHaveLength(1);
  const released = await releasedEvents(chainA, { id: s.requestId });
  expect(released).toHaveLength(1);
  expect(released[0]!.args.to).toBe(getAddress(s.refundTo));
  expect(await publicClientOf(chainA).getBalance({ address: s.refundTo })).toBe(released[0]!.args.amount);
  expect(await filledEvents(chainB, s.requestId)).toHaveLength(0);
}

/**
 * Restarts are the slow part (about 3 s each), so the runs are chained: the run that recovers one test's request
 * is already armed with the next test's crash point, and that test takes it over. The order makes sure the
 * next point cannot fire while the previous request is recovered: recovering a fill passes only fill points
 * (`fill-mined`, or all of them after `deposit-claimed`), recovering a refund only refund points, and no
 * recovery passes `deposit-claimed`. Each test still waits for its request's terminal status before its own
 * deposit, and the last test re-counts every request after a clean stop.
 */
const armedOrder: CrashPoint[] = [
  'deposit-claimed', // fill
  'deposit-claimed', // refund
  'fill-recorded',
  'refund-recorded',
  'fill-broadcast',
  'refund-broadcast',
  'fill-submitted',
  'refund-mined',
  'fill-mined',
  'fill-recorded', // a fill that reverts; then 'fill-reverted'
  'deposit-claimed', // a double spend
];
let live: (Run & { crashAt: CrashPoint | undefined }) | undefined;
let step = -1;

/** The run armed for this test's crash point: the one the previous test left, or a new one. */
async function takeOver(crashAt: CrashPoint): Promise<string> {
  // Where this test is in the order (tests filtered with -t skip entries: their neighbours still fit).
  step = armedOrder.indexOf(crashAt, step + 1);
  if (live === undefined || live.crashAt !== crashAt || live.dead()) {
    if (live !== undefined && !live.dead()) await live.stop();
    live = { ...startGateway(crashAt), crashAt };
  }
  return live.ready();
}

/** After the crash: starts the run that recovers it, armed for the next test (unarmed after the last one). */
async function restart(next: CrashPoint | undefined = armedOrder[step + 1]): Promise<string> {
  await crashed(live!);
  live = { ...startGateway(next), crashAt: next };
  return live.ready();
}

/** Re-run for every request after the last clean stop: nothing was sent twice afterwards either. */
const audits: Array<() => Promise<void>> = [];
/** The first request filled: the double-spend test deposits for it again. */
let paid: Scenario | undefined;

describe('a kill -9 at each step, then a restart: exactly one fill or one refund', { timeout: 120_000 }, () => {
  const fill = async (point: CrashPoint) => {
    const url = await takeOver(point);
    const s = await quoteNative(url);
    const depositIndex = await depositIndexOf(
      (await executeSteps(gatewayAt(url), s.quote.steps, alice)).get('deposit')!.blockHash,
    );
    const record = await waitForStatus(gatewayAt(await restart()), s.requestId, terminal, 20_000);
    await expectFilledOnce(s, depositIndex, record);
    audits.push(() => expectFilledOnce(s, depositIndex, record));
    paid ??= s;
  };
  const refund = async (point: CrashPoint) => {
    const s = await quoteNative(await takeOver(point), parseEther('0.02'));
    // Less than quoted: the solver refunds it.
    const depositIndex = await depositNative(alice, s.requestId, parseEther('0.019'));
    const record = await waitForStatus(gatewayAt(await restart()), s.requestId, terminal, 20_000);
    await expectRefundedOnce(s, depositIndex, record, 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL');
    audits.push(() => expectRefundedOnce(s, depositIndex, record, 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL'));
  };

  it('fill: deposit-claimed (between the deposit seen and the fill sent)', () => fill('deposit-claimed'));
  it('refund: deposit-claimed (between the deposit seen and the refund sent)', () => refund('deposit-claimed'));
  it('fill: fill-recorded (signed and recorded, never broadcast)', () => fill('fill-recorded'));
  it('refund: refund-recorded (signed and recorded, never broadcast)', () => refund('refund-recorded'));
  it('fill: fill-broadcast (sent, not recorded as sent)', () => fill('fill-broadcast'));
  it('refund: refund-broadcast (sent, not recorded as sent)', () => refund('refund-broadcast'));
  it('fill: fill-submitted (status submitted, receipt not awaited)', () => fill('fill-submitted'));
  it('refund: refund-mined (mined, request status not changed)', () => refund('refund-mined'));
  it('fill: fill-mined (mined, request status not changed)', () => fill('fill-mined'));

  it('a fill that reverts on chain, killed after it reverted: one reverted fill, one refund (TRANSACTION_REVERTED)', async () => {
    // The user's call pulls tokens carol approved to the multicaller; revoking the approval while the signed
    // fill waits unbroadcast makes it revert when the restart broadcasts it.
    const { txs, revoke } = await revocablePull(chainB, carol, freshAddress());

    const url = await takeOver('fill-recorded');
    const refundTo = freshAddress();
    const from = {
      a: await publicClientOf(chainA).getBlockNumber({ cacheTime: 0 }),
      b: await publicClientOf(chainB).getBlockNumber({ cacheTime: 0 }),
    };
    const quote = await requestQuote(gatewayAt(url), alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      refundTo,
      txs,
    });
    const s: Scenario = { requestId: quote.steps.at(-1)!.requestId, quote, recipient: alice.address, refundTo, from };
    const receipts = await executeSteps(gatewayAt(url), quote.steps, alice);
    await crashed(live!);
    await revoke();

    // The restart broadcasts the recorded fill, which reverts; it dies once the request is `failure`. The next
    // one must refund it (`failure` is where it starts, so only `refund` ends the wait).
    live = { ...startGateway('fill-reverted'), crashAt: 'fill-reverted' };
    const record = await waitForStatus(gatewayAt(await restart('deposit-claimed')), s.requestId, ['refund'], 20_000);
    const depositIndex = await depositIndexOf(receipts.get('deposit')!.blockHash);
    const check = async () => {
      const fills = await fillTxs(from.b, s.requestId);
      expect(fills).toHaveLength(1);
      expect((await publicClientOf(chainB).getTransactionReceipt({ hash: fills[0]! })).status).toBe('reverted');
      await expectRefundedOnce(s, depositIndex, record, 'TRANSACTION_REVERTED');
    };
    await check();
    audits.push(check);
  });

  it('a second deposit for a filled request, killed once claimed: refunded once after the restart (DOUBLE_SPEND)', async () => {
    let s = paid;
    if (s === undefined) {
      // Run on its own: fill a request first, with an unarmed run (its deposit would hit the crash point).
      if (live !== undefined && !live.dead()) await live.stop();
      live = { ...startGateway(), crashAt: undefined };
      s = await quoteNative(await live.ready());
      await depositNative(alice, s.requestId, parseEther('0.01'));
      await waitForStatus(gatewayAt(await live.ready()), s.requestId, ['success']);
    }
    await takeOver('deposit-claimed');
    const extra = await depositNative(alice, s.requestId, parseEther('0.01'));
    const restarted = await restart(undefined);
    const deadline = Date.now() + 20_000;
    const refundOf = async () =>
      (await releasedEvents(chainA, { id: s.requestId })).filter((event) => event.args.depositIndex === extra);
    while ((await refundOf()).length === 0 && Date.now() < deadline) await sleep(100);
    const record = await waitForStatus(gatewayAt(restarted), s.requestId, ['success']);
    const check = async () => {
      expect(record.status).toBe('success');
      expect(await fillTxs(s.from.b, s.requestId)).toHaveLength(1);
      expect(await releaseTxs(s.from.a, extra)).toHaveLength(1);
      // The filled deposit is settled to the solver meanwhile (once at most); the extra one is only refunded.
      const released = await releasedEvents(chainA, { id: s.requestId });
      const refunds = released.filter((event) => event.args.to !== getAddress(devnet.descriptor.solver.address));
      expect(refunds).toHaveLength(1);
      expect(refunds[0]!.args.depositIndex).toBe(extra);
      expect(released.length - refunds.length).toBeLessThanOrEqual(1);
      expect(released.filter((event) => event.args.depositIndex === extra)).toHaveLength(1);
    };
    await check();
    audits.push(check);
  });

  it('after a clean stop, every request still has exactly one fill or refund on chain', async () => {
    if (live !== undefined && !live.dead()) await live.stop();
    expect(audits.length).toBeGreaterThan(0);
    for (const audit of audits) await audit();
  });
});
