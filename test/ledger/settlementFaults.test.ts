/**
 * Crash recovery of settlement, with a real process and a real `kill -9` (as `test/solver/faults.test.ts` does
 * for fills): the gateway runs as a child process with PGlite in a data directory and `GATEWAY_CRASH_AT` set to
 * a step of settlement, is killed there, then restarted. Every time the filled deposit must end released to the
 * solver exactly once, by exactly one settlement transaction, counted on chain.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeFunctionData, getAddress, parseEther, zeroAddress, type Hex } from 'viem';
import { depositoryAbi } from '../../generated/contracts/index.js';
import { type Devnet, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import type { CrashPoint } from '../../src/core/faults.js';
import { useGatewayProcesses, type GatewayRun } from '../helpers/gatewayProcess.js';
import type { TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus } from '../helpers/quote.js';
import { depositEvents, releasedEvents } from '../helpers/chainReads.js';

const processes = useGatewayProcesses({
  name: 'settlement-faults',
  env: { GATEWAY_SETTLEMENT_INTERVAL_MS: '300' },
  readyTimeoutMs: 240_000,
});

let devnet: Devnet;
let chainA: DevnetChain;
let alice: DevnetAccount;

beforeAll(() => {
  devnet = processes.devnet;
  [chainA] = devnet.descriptor.chains as [DevnetChain];
  [alice] = devnet.descriptor.accounts as [DevnetAccount];
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The gateway as a child process on the file's data directory (`test/helpers/gatewayProcess.ts`). */
const startGateway = (crashAt?: CrashPoint): GatewayRun => processes.start(crashAt);

const gatewayAt = (url: string) => ({ url, devnet }) as unknown as TestGateway;

/** Every `releaseBatch` the solver sent since `fromBlock` (reverted ones too) that includes `depositIndex`. */
async function settlementTxs(fromBlock: bigint, depositIndex: bigint): Promise<Hex[]> {
  const client = publicClientOf(chainA);
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const found: Hex[] = [];
  for (let n = fromBlock; n <= head; n++) {
    const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) {
      if (
        tx.from.toLowerCase() !== devnet.descriptor.solver.address.toLowerCase() ||
        tx.to?.toLowerCase() !== chainA.contracts.depository.toLowerCase()
      )
        continue;
      const call = decodeFunctionData({ abi: depositoryAbi, data: tx.input });
      if (call.functionName === 'releaseBatch' && call.args[0].some((r) => r.depositIndex === depositIndex))
        found.push(tx.hash);
    }
  }
  return found;
}

describe('settlement killed at each step', { timeout: 900_000 }, () => {
  it.each(['settle-batched', 'settle-recorded', 'settle-broadcast', 'settle-mined'] as const)(
    'killed at %s: after a restart the deposit is released to the solver exactly once',
    async (point) => {
      const from = await publicClientOf(chainA).getBlockNumber({ cacheTime: 0 });
      const armed = startGateway(point);
      const url = await armed.ready();
      const quote = await requestQuote(gatewayAt(url), alice, {
        originCurrency: zeroAddress,
        destinationCurrency: zeroAddress,
        amount: parseEther('0.01').toString(),
      });
      const requestId = quote.steps.at(-1)!.requestId;
      const receipts = await executeSteps(gatewayAt(url), quote.steps, alice);
      const [deposit] = await depositEvents(chainA, { blockHash: receipts.get('deposit')!.blockHash });
      // The fill succeeds, then the settlement pass that follows kills the process at the armed point.
      const outcome = await Promise.race([armed.exited, sleep(90_000).then(() => 'timeout' as const)]);
      expect(outcome, armed.output()).toEqual({ code: null, signal: 'SIGKILL' });

      const restarted = startGateway();
      const restartedUrl = await restarted.ready();
      expect((await waitForStatus(gatewayAt(restartedUrl), requestId, ['success', 'failure', 'refund'])).status).toBe(
        'success',
      );
      const deadline = Date.now() + 120_000;
      while ((await releasedEvents(chainA, { id: requestId })).length === 0 && Date.now() < deadline) await sleep(100);
      // A few more intervals: a second settlement would show by now.
      await sleep(1_500);
      await restarted.stop();

      const events = await releasedEvents(chainA, { id: requestId });
      expect(events).toHaveLength(1);
      expect(events[0]!.args).toMatchObject({
        depositIndex: deposit!.args.depositIndex,
        to: getAddress(devnet.descriptor.solver.address),
        amount: BigInt(quote.details.currencyIn.amount),
      });
      expect(await settlementTxs(from, deposit!.args.depositIndex!)).toHaveLength(1);
    },
  );
});
