/**
 * A self-serve refund survives a `kill -9`: the gateway runs as a child process (`test/helpers/gatewayProcess.ts`)
 * that SIGKILLs itself right after it accepted a depositor's refund request (`refund-requested`: recorded on the
 * request, nothing sent) or right after the refund was sent (`refund-broadcast`), then restarts. Every time the
 * request ends `refund` (`MANUAL_ADMIN_REFUND`) with exactly one refund on chain, counted from the depository's
 * `Released` events and the solver's transactions, not from the gateway's records. Chain B's outflow limit (USD 15)
 * holds every request paid after the first fill.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeFunctionData, getAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { depositoryAbi } from '../../generated/contracts/index.js';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import type { CrashPoint } from '../../src/core/faults.js';
import { refundRequestTypedData } from '../../src/core/requests/requestRefund.js';
import { call } from '../helpers/conformance.js';
import type { TestGateway } from '../helpers/gateway.js';
import { useGatewayProcesses, type GatewayRun } from '../helpers/gatewayProcess.js';
import {
  executeSteps,
  publicClientOf,
  requestQuote,
  tokenOf,
  waitForStatus,
  type WireQuote,
} from '../helpers/quote.js';

const processes = useGatewayProcesses({
  name: 'selfrefund',
  readyTimeoutMs: 60_000,
  config: { limits: { outflow: { chains: { '31338': '15' } } } },
});

let chainA: DevnetChain;
let alice: DevnetAccount;
/** Quoted before the first fill (quotes over the outflow limit are refused), one per crash point. */
const quotes = new Map<CrashPoint, WireQuote>();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const gatewayAt = (url: string) => ({ url, devnet: processes.devnet }) as unknown as TestGateway;
const idOf = (quote: WireQuote): Hex => quote.steps.at(-1)!.requestId;

beforeAll(async () => {
  const devnet = processes.devnet;
  chainA = devnet.descriptor.chains[0]!;
  const chainB = devnet.descriptor.chains[1]!;
  alice = devnet.descriptor.accounts[0]!;
  const run = processes.start();
  const gateway = gatewayAt(await run.ready());
  const usdcToUsdc = {
    originCurrency: tokenOf(chainA, 'USDC'),
    destinationCurrency: tokenOf(chainB, 'USDC'),
    amount: '10000000',
  };
  const first = await requestQuote(gateway, alice, usdcToUsdc);
  for (const point of ['refund-requested', 'refund-broadcast'] as const)
    quotes.set(point, await requestQuote(gateway, alice, usdcToUsdc));
  await executeSteps(gateway, first.steps, alice);
  expect((await waitForStatus(gateway, idOf(first), ['success', 'refund', 'failure'])).status).toBe('success');
  await run.stop();
}, 180_000);

/** Waits for the crash the run was started for: SIGKILL, not an error exit. */
async function crashed(run: GatewayRun): Promise<void> {
  const outcome = await Promise.race([run.exited, sleep(20_000).then(() => 'timeout' as const)]);
  expect(outcome, run.output()).toEqual({ code: null, signal: 'SIGKILL' });
}

/** Waits until chain B's fills are paused (`/ready`): the paid request is held. */
async function waitHeld(url: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    const ready = (await (await fetch(`${url}/ready`)).json()) as { checks: Record<string, unknown> };
    if (ready.checks['fills:31338'] !== undefined) return;
    await sleep(100);
  }
  throw new Error('the request was not held');
}

/** The depository's `Released` events of the request, and the solver's `release` transactions of it. */
async function refundsOnChain(requestId: Hex): Promise<{ released: number; sent: number; to: string[] }> {
  const client = publicClientOf(chainA);
  const events = await client.getContractEvents({
    address: chainA.contracts.depository,
    abi: depositoryAbi,
    eventName: 'Released',
    args: { id: requestId },
    fromBlock: 0n,
  });
  let sent = 0;
  const head = await client.getBlockNumber({ cacheTime: 0 });
  for (let n = 0n; n <= head; n++) {
    const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) {
      if (tx.to?.toLowerCase() !== chainA.contracts.depository.toLowerCase()) continue;
      const decoded = decodeFunctionData({ abi: depositoryAbi, data: tx.input });
      if (decoded.functionName === 'release' && decoded.args[1].toLowerCase() === requestId.toLowerCase()) sent++;
    }
  }
  return { released: events.length, sent, to: events.map((event) => event.args.to!) };
}

describe('a kill -9 around a self-serve refund, then a restart: exactly one refund', { timeout: 120_000 }, () => {
  const scenario = async (point: CrashPoint) => {
    const quote = quotes.get(point)!;
    const requestId = idOf(quote);
    const armed = processes.start(point);
    const url = await armed.ready();
    await executeSteps(gatewayAt(url), quote.steps, alice);
    await waitHeld(url);
    const deadline = Math.floor(Date.now() / 1_000) + 3_600;
    const signature = await privateKeyToAccount(alice.privateKey).signTypedData(
      refundRequestTypedData(chainA.contracts.depository, {
        originChainId: chainA.chainId,
        requestId,
        deadline: BigInt(deadline),
      }),
    );
    const body = { requestId, deadline, signature };
    // The process dies while it answers: the connection drops.
    const answer = await call(url, 'requestRefund', { body }).catch((error: unknown) => error);
    expect(answer).toBeInstanceOf(Error);
    await crashed(armed);

    const restarted = processes.start();
    const again = gatewayAt(await restarted.ready());
    const record = await waitForStatus(again, requestId, ['refund', 'failure', 'success'], 30_000);
    expect(record).toMatchObject({ status: 'refund', failReason: 'MANUAL_ADMIN_REFUND', refundFailReason: 'N/A' });
    // The depositor asks again after the restart: the same outcome, nothing sent again.
    const repeated = await call(again.url, 'requestRefund', { body });
    expect(repeated.status, JSON.stringify(repeated.body)).toBe(200);
    expect(repeated.body).toMatchObject({ requestId, status: 'refund', message: 'Refunded' });
    await restarted.stop();
    const onChain = await refundsOnChain(requestId);
    expect(onChain).toEqual({ released: 1, sent: 1, to: [getAddress(alice.address)] });
  };

  it('killed once the refund request is accepted, before the refund is sent', () => scenario('refund-requested'));
  it('killed once the refund is sent, before it is recorded as sent', () => scenario('refund-broadcast'));
});
