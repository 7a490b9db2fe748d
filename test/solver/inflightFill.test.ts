/**
 * The chain decides, the database remembers, with a fill still in flight: the gateway is killed right after its fill
 * is broadcast (`GATEWAY_CRASH_AT=fill-submitted`) while the destination chain mines nothing (automine off), so the
 * fill waits in the node's pool, counted in the solver key's pending nonce but not in its mined one. The next run
 * starts on a database that does not know that fill:
 *
 * - a backup taken before it (the request `waiting`): the request must end `success`, with no second fill sent and
 *   nothing refunded;
 * - an empty database (the request unknown): the deposit must not be refunded, whether the fill is mined during the
 *   unknown deposit's grace or only after it.
 *
 * Real gateway processes (`test/helpers/gatewayProcess.ts`) on one devnet; the file's runs share one data directory,
 * which the tests replace between runs.
 */
import { cp, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestClient,
  decodeFunctionData,
  getAddress,
  http,
  parseEther,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { onlyOwnerMulticallerAbi } from '../../generated/contracts/index.js';
import type { CrashPoint } from '../../src/core/faults.js';
import type { Devnet, DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { DATA_DIR_LOCK_FILE } from '../../src/store/dataDirLock.js';
import { depositEvents, filledEvents, releasedEvents } from '../helpers/chainReads.js';
import type { TestGateway } from '../helpers/gateway.js';
import { useGatewayProcesses, type GatewayRun } from '../helpers/gatewayProcess.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus, type WireQuote } from '../helpers/quote.js';

/** The grace of a deposit for an unknown request, short so that a test can outlast it. */
const GRACE_SECONDS = 12;

const processes = useGatewayProcesses({
  name: 'inflight',
  readyTimeoutMs: 120_000,
  env: { GATEWAY_UNKNOWN_DEPOSIT_GRACE_SECONDS: String(GRACE_SECONDS) },
});

let devnet: Devnet;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;

beforeAll(() => {
  devnet = processes.devnet;
  [chainA, chainB] = devnet.descriptor.chains as [DevnetChain, DevnetChain];
  alice = devnet.descriptor.accounts[0]!;
});

/** Runs of the current test: one that fails leaves none running on the data directory for the next. */
const runs: GatewayRun[] = [];
const start = (crashAt?: CrashPoint): GatewayRun => {
  const run = processes.start(crashAt);
  runs.push(run);
  return run;
};

afterEach(async () => {
  // A test that fails while chain B mines nothing leaves it mining for the next.
  await testClientOf(chainB).setAutomine(true);
  for (const run of runs.splice(0)) await run.stop().catch(() => undefined);
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const gatewayAt = (url: string) => ({ url, devnet }) as unknown as TestGateway;
const testClientOf = (chain: DevnetChain) => createTestClient({ mode: 'anvil', transport: http(chain.rpcUrl) });
const solver = () => devnet.descriptor.solver.address;

let nextAddress = 0xf1f100;
const freshAddress = (): Address => `0x${(nextAddress++).toString(16).padStart(40, '0')}`;

/** The solver key's transaction counts on `chain`: mined, and with the node's pool. */
async function solverNonces(chain: DevnetChain): Promise<{ mined: number; pending: number }> {
  const client = publicClientOf(chain);
  const [mined, pending] = await Promise.all([
    client.getTransactionCount({ address: solver(), blockTag: 'latest' }),
    client.getTransactionCount({ address: solver(), blockTag: 'pending' }),
  ]);
  return { mined, pending };
}

/** Every fill transaction of `requestId` the solver key got mined on chain B since `fromBlock` (reverted included). */
async function fillTxs(fromBlock: bigint, requestId: Hex): Promise<Hex[]> {
  const client = publicClientOf(chainB);
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const found: Hex[] = [];
  for (let n = fromBlock; n <= head; n++) {
    const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) {
      if (tx.from.toLowerCase() !== solver().toLowerCase()) continue;
      if (tx.to?.toLowerCase() !== chainB.contracts.onlyOwnerMulticaller.toLowerCase()) continue;
      const call = decodeFunctionData({ abi: onlyOwnerMulticallerAbi, data: tx.input });
      if (call.functionName === 'fill' && call.args[0].toLowerCase() === requestId.toLowerCase()) found.push(tx.hash);
    }
  }
  return found;
}

/** Waits until `condition` holds (polled), failing with `what` after `timeoutMs`. */
async function until(what: string, condition: () => Promise<boolean> | boolean, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

/** Waits for a run started with a crash point to kill itself there. */
async function crashed(run: GatewayRun): Promise<void> {
  const outcome = await Promise.race([run.exited, sleep(60_000).then(() => 'timeout' as const)]);
  expect(outcome, run.output()).toEqual({ code: null, signal: 'SIGKILL' });
}

interface InFlight {
  quote: WireQuote;
  requestId: Hex;
  recipient: Address;
  refundTo: Address;
  depositIndex: bigint;
  /** Chain B's head before the fill was sent. */
  fromB: bigint;
}

/**
 * Quotes a native bridge A -> B on `run`, stops chain B's mining, deposits, and waits for the run to kill itself
 * once its fill is broadcast: the fill is left in chain B's pool.
 */
async function fillLeftInFlight(run: GatewayRun, quoted?: { quote: WireQuote; recipient: Address; refundTo: Address }) {
  const url = await run.ready();
  const recipient = quoted?.recipient ?? freshAddress();
  const refundTo = quoted?.refundTo ?? freshAddress();
  const quote =
    quoted?.quote ??
    (await requestQuote(gatewayAt(url), alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      recipient,
      refundTo,
    }));
  const requestId = quote.steps.at(-1)!.requestId;
  const fromB = await publicClientOf(chainB).getBlockNumber({ cacheTime: 0 });
  await testClientOf(chainB).setAutomine(false);
  const receipts = await executeSteps(gatewayAt(url), quote.steps, alice);
  await crashed(run);
  const deposit = receipts.get('deposit')!;
  expect(await releasedEvents(chainA, { id: requestId })).toHaveLength(0);
  const [depositLog] = await depositEvents(chainA, { blockHash: deposit.blockHash });
  // The fill is in the pool, not mined: the key's pending count is one ahead of its mined one.
  const nonces = await solverNonces(chainB);
  expect(nonces.pending).toBe(nonces.mined + 1);
  expect(await filledEvents(chainB, requestId)).toHaveLength(0);
  const flight: InFlight = {
    quote,
    requestId,
    recipient,
    refundTo,
    depositIndex: depositLog!.args.depositIndex!,
    fromB,
  };
  return flight;
}

/** Chain B mines again (automine on, and one block for what waits in the pool). */
async function mineB(): Promise<void> {
  const testB = testClientOf(chainB);
  await testB.setAutomine(true);
  await testB.mine({ blocks: 1 });
}

/** Exactly one fill mined, the recipient paid the quoted output once, the deposit not refunded. */
async function expectPaidOnceNotRefunded(flight: InFlight): Promise<void> {
  expect(await filledEvents(chainB, flight.requestId)).toHaveLength(1);
  expect(await publicClientOf(chainB).getBalance({ address: flight.recipient })).toBe(
    BigInt(flight.quote.details.currencyOut.amount),
  );
  const released = await releasedEvents(chainA, { depositIndex: flight.depositIndex });
  expect(released.filter((event) => event.args.to !== getAddress(solver()))).toEqual([]);
  expect(await publicClientOf(chainA).getBalance({ address: flight.refundTo })).toBe(0n);
}

/** Replaces the runs' data directory with `source` (a backup), or with nothing (an empty database). */
async function replaceDataDir(source?: string): Promise<void> {
  await rm(processes.dataDir, { recursive: true, force: true });
  if (source !== undefined) await cp(source, processes.dataDir, { recursive: true });
}

describe('a fill broadcast but not mined when the gateway dies', { timeout: 300_000 }, () => {
  it('restored from an older backup: the request ends success, no second fill, nothing refunded', async () => {
    // The backup: a stopped gateway's directory, its request quoted (waiting), without the lock file.
    const first = start();
    const url = await first.ready();
    const recipient = freshAddress();
    const refundTo = freshAddress();
    const quote = await requestQuote(gatewayAt(url), alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      recipient,
      refundTo,
    });
    await first.stop();
    const backup = `${processes.dataDir}-backup`;
    await cp(processes.dataDir, backup, {
      recursive: true,
      filter: (source) => path.basename(source) !== DATA_DIR_LOCK_FILE,
    });

    const flight = await fillLeftInFlight(start('fill-submitted'), { quote, recipient, refundTo });
    await replaceDataDir(backup);
    await rm(backup, { recursive: true, force: true });

    const restored = start();
    const before = await solverNonces(chainB);
    // Chain B mines once the restored gateway has either seen the fill in flight, or sent a second one.
    await until(
      'the restored gateway to see the fill in flight or send a second one',
      async () =>
        /in flight/.test(restored.output()) ||
        (await solverNonces(chainB)).pending > before.pending ||
        (await releasedEvents(chainA, { depositIndex: flight.depositIndex })).length > 0 ||
        restored.dead(),
    ).catch((error: unknown) => {
      throw new Error(`${String(error)}\n${restored.output()}`);
    });
    await mineB();
    const record = await waitForStatus(
      gatewayAt(await restored.ready()),
      flight.requestId,
      ['success', 'failure', 'refund'],
      60_000,
    );
    await sleep(2_000);
    const final = await waitForStatus(gatewayAt(await restored.ready()), flight.requestId, [
      'success',
      'failure',
      'refund',
    ]);
    expect({ record, final }, restored.output()).toMatchObject({
      record: { status: 'success' },
      final: { status: 'success', failReason: 'N/A' },
    });
    await expectPaidOnceNotRefunded(flight);
    // The fill in flight was seen: nothing was decided until it was mined, and no second fill went out.
    expect(restored.output()).toMatch(/in flight that the database does not know: waiting for them to be mined/);
    expect(await fillTxs(flight.fromB, flight.requestId)).toHaveLength(1);
    await restored.stop();
  });

  const emptyDatabase = async (mineAfterGrace: boolean) => {
    const flight = await fillLeftInFlight(start('fill-submitted'));
    await replaceDataDir();
    const fresh = start();
    const releasedNow = async () => (await releasedEvents(chainA, { depositIndex: flight.depositIndex })).length > 0;
    // The new gateway holds the unknown deposit for its grace, or waits for the fill in flight to be mined.
    await until(
      'the new gateway to see the fill in flight or the unknown deposit',
      () => /in flight|unknown request/.test(fresh.output()) || fresh.dead(),
    );
    const seen = Date.now();
    if (mineAfterGrace) {
      // The fill stays in the pool past the grace (or until the deposit was refunded).
      await until(
        'the grace to pass',
        async () => Date.now() - seen > (GRACE_SECONDS + 3) * 1_000 || (await releasedNow()) || fresh.dead(),
      );
    } else {
      await sleep(2_000);
      expect(await releasedNow()).toBe(false);
    }
    await mineB();
    await fresh.ready();
    await until(
      'the deposit to be decided',
      async () => /filled on chain|not refunded/.test(fresh.output()) || (await releasedNow()),
      60_000,
    );
    expect(await filledEvents(chainB, flight.requestId), fresh.output()).toHaveLength(1);
    await expectPaidOnceNotRefunded(flight);
    expect(fresh.output()).toMatch(/in flight that the database does not know: waiting for them to be mined/);
    expect(await fillTxs(flight.fromB, flight.requestId)).toHaveLength(1);
    await fresh.stop();
  };

  it('an empty database, the fill mined during the unknown deposit grace: not refunded', () => emptyDatabase(false));
  it('an empty database, the fill mined only after the grace: not refunded', () => emptyDatabase(true));
});
