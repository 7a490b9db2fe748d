/**
 * Deposit addresses under a real `kill -9`: the gateway runs as a child process (`test/helpers/gatewayProcess.ts`)
 * armed with `GATEWAY_CRASH_AT=<point>` so it SIGKILLs itself at one step between the transfer's detection and
 * the fill, then is restarted. Only plain ERC-20 transfers reach the address. Every time, the transfer is swept
 * exactly once (every sweep transaction the solver sent for the request is counted on chain, reverted ones
 * included, and the depository holds one deposit under it) and the request is filled or refunded exactly once.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, decodeFunctionData, erc20Abi, getAddress, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { depositAddressFactoryAbi } from '../../generated/contracts/index.js';
import { devnetViemChain, type Devnet, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import type { CrashPoint } from '../../src/core/faults.js';
import type { TestGateway } from '../helpers/gateway.js';
import { useGatewayProcesses, type GatewayRun } from '../helpers/gatewayProcess.js';
import { publicClientOf, requestQuote, tokenOf, waitForStatus, type WireQuote } from '../helpers/quote.js';
import { depositEvents, filledEvents, releasedEvents } from '../helpers/chainReads.js';

const processes = useGatewayProcesses({ name: 'depaddr-crash', readyTimeoutMs: 60_000 });

let devnet: Devnet;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;
let bob: DevnetAccount;

beforeAll(() => {
  devnet = processes.devnet;
  [chainA, chainB] = devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [alice, bob] = devnet.descriptor.accounts as [DevnetAccount, DevnetAccount];
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const gatewayAt = (url: string) => ({ url, devnet }) as unknown as TestGateway;
const terminal = ['success', 'refund', 'failure'];

let nextAddress = 0xda0100;
const freshAddress = (): Address => `0x${(nextAddress++).toString(16).padStart(40, '0')}`;

interface Order {
  requestId: Hex;
  address: Address;
  quote: WireQuote;
  recipient: Address;
  refundTo: Address;
  amountIn: bigint;
}

async function strictUsdcOrder(url: string): Promise<Order> {
  const recipient = freshAddress();
  const refundTo = freshAddress();
  const quote = await requestQuote(gatewayAt(url), alice, {
    originCurrency: tokenOf(chainA, 'USDC'),
    destinationCurrency: tokenOf(chainB, 'USDC'),
    amount: '20000000',
    recipient,
    refundTo,
    useDepositAddress: true,
    strict: true,
  });
  const step = quote.steps[0] as unknown as { requestId: Hex; depositAddress: Address };
  return {
    requestId: step.requestId,
    address: step.depositAddress,
    quote,
    recipient,
    refundTo,
    amountIn: BigInt(quote.details.currencyIn.amount),
  };
}

/** A plain USDC `transfer` from bob to the deposit address (an exchange withdrawal), mined. */
async function transfer(to: Address, amount: bigint): Promise<void> {
  const wallet = createWalletClient({
    account: privateKeyToAccount(bob.privateKey),
    chain: devnetViemChain(chainA),
    transport: http(chainA.rpcUrl),
  });
  const hash = await wallet.writeContract({
    address: tokenOf(chainA, 'USDC'),
    abi: erc20Abi,
    functionName: 'transfer',
    args: [to, amount],
  });
  await publicClientOf(chainA).waitForTransactionReceipt({ hash });
}

/** Every `sweep` the solver sent to the factory whose legs are under `requestId` (reverted ones included). */
async function sweepTxs(requestId: Hex): Promise<Hex[]> {
  const client = publicClientOf(chainA);
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const solver = devnet.descriptor.solver.address.toLowerCase();
  const factory = chainA.contracts.depositAddressFactory.toLowerCase();
  const found: Hex[] = [];
  for (let n = 0n; n <= head; n++) {
    const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) {
      if (tx.from.toLowerCase() !== solver || tx.to?.toLowerCase() !== factory) continue;
      const call = decodeFunctionData({ abi: depositAddressFactoryAbi, data: tx.input });
      if (call.functionName !== 'sweep') continue;
      if (call.args[4].some((leg) => leg.id.toLowerCase() === requestId.toLowerCase())) found.push(tx.hash);
    }
  }
  return found;
}

/** Releases of the request's deposits other than the solver's settlement. */
const refundsOf = async (requestId: Hex) =>
  (await releasedEvents(chainA, { id: requestId })).filter(
    (event) => event.args.to !== getAddress(devnet.descriptor.solver.address),
  );
const usdcOf = (chain: DevnetChain, owner: Address) =>
  publicClientOf(chain).readContract({
    address: tokenOf(chain, 'USDC'),
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [owner],
  });

async function expectSweptOnce(order: Order, sent: bigint): Promise<void> {
  expect(await sweepTxs(order.requestId)).toHaveLength(1);
  const deposits = await depositEvents(chainA, { id: order.requestId });
  expect(deposits).toHaveLength(1);
  expect(deposits[0]!.args.amount).toBe(sent);
  expect(await usdcOf(chainA, order.address)).toBe(0n);
}

async function expectFilledOnce(order: Order): Promise<void> {
  await expectSweptOnce(order, order.amountIn);
  expect(await filledEvents(chainB, order.requestId)).toHaveLength(1);
  expect(await usdcOf(chainB, order.recipient)).toBe(BigInt(order.quote.details.currencyOut.amount));
  expect(await refundsOf(order.requestId)).toHaveLength(0);
}

async function expectRefundedOnce(order: Order, sent: bigint): Promise<void> {
  await expectSweptOnce(order, sent);
  expect(await filledEvents(chainB, order.requestId)).toHaveLength(0);
  const refunds = await refundsOf(order.requestId);
  expect(refunds).toHaveLength(1);
  expect(refunds[0]!.args.to).toBe(getAddress(order.refundTo));
  expect(await usdcOf(chainA, order.refundTo)).toBe(refunds[0]!.args.amount);
  expect(await usdcOf(chainB, order.recipient)).toBe(0n);
}

/**
 * Restarts are the slow part, so a recovering run is armed with the next test's point when its recovery cannot
 * pass that point: recovering a sweep (`sweep-*`) decides nothing, so it may be armed with `transfer-decided`;
 * recovering a decision sends the sweep and so passes every `sweep-*` point, so that run is unarmed.
 */
const plan: Array<{ point: CrashPoint; next: CrashPoint | undefined }> = [
  { point: 'sweep-recorded', next: 'transfer-decided' },
  { point: 'transfer-decided', next: undefined },
  { point: 'sweep-broadcast', next: 'transfer-decided' },
  { point: 'transfer-decided', next: undefined },
  { point: 'sweep-mined', next: undefined },
];
let live: (GatewayRun & { crashAt: CrashPoint | undefined }) | undefined;
let step = 0;

async function armed(): Promise<string> {
  const { point } = plan[step]!;
  if (live === undefined || live.dead() || live.crashAt !== point) {
    if (live !== undefined && !live.dead()) await live.stop();
    live = { ...processes.start(point), crashAt: point };
  }
  return live.ready();
}

/** Waits for the SIGKILL, then starts the recovering run (armed for the next test when that is safe). */
async function recover(): Promise<string> {
  const outcome = await Promise.race([live!.exited, sleep(30_000).then(() => 'timeout' as const)]);
  expect(outcome, live!.output()).toEqual({ code: null, signal: 'SIGKILL' });
  const next = plan[step]!.next;
  step++;
  live = { ...processes.start(next), crashAt: next };
  return live.ready();
}

const audits: Array<() => Promise<void>> = [];

describe('a kill -9 between a deposit-address transfer and its fill', { timeout: 120_000 }, () => {
  const exact = async () => {
    const order = await strictUsdcOrder(await armed());
    await transfer(order.address, order.amountIn);
    const record = await waitForStatus(gatewayAt(await recover()), order.requestId, terminal, 40_000);
    expect(record.status).toBe('success');
    await expectFilledOnce(order);
    audits.push(() => expectFilledOnce(order));
  };

  it('strict USDC exact, killed at sweep-recorded: swept once, filled once', exact);
  it('strict USDC exact, killed at transfer-decided: swept once, filled once', exact);
  it('strict USDC exact, killed at sweep-broadcast: swept once, filled once', exact);

  it('strict USDC short, killed at transfer-decided: swept once, refunded once to refundTo', async () => {
    const order = await strictUsdcOrder(await armed());
    const sent = order.amountIn - 5_000_000n;
    await transfer(order.address, sent);
    const record = await waitForStatus(gatewayAt(await recover()), order.requestId, terminal, 40_000);
    expect(record).toMatchObject({ status: 'refund', failReason: 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL' });
    await expectRefundedOnce(order, sent);
    audits.push(() => expectRefundedOnce(order, sent));
  });

  it('strict USDC exact, killed at sweep-mined (between the sweep and the fill): swept once, filled once', exact);

  it('after a clean stop, every transfer is still swept once and filled or refunded once', async () => {
    // A few more passes of the restarted gateway: a second sweep, fill or refund would show by now.
    await sleep(1_500);
    if (live !== undefined && !live.dead()) await live.stop();
    expect(audits).toHaveLength(5);
    for (const audit of audits) await audit();
  });
});
