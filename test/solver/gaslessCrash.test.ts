/**
 * Crash recovery of gasless batches (`POST /execute`), with a real process and a real `kill -9`: the gateway runs
 * as a child process on one devnet with PGlite in a data directory, started with `GATEWAY_CRASH_AT` so it SIGKILLs
 * itself after accepting a batch and before sending it (`gasless-accepted`), or after signing and recording its
 * transaction and before broadcasting it (`gasless-recorded`). After a restart the batch is on chain exactly once
 * (counted on chain: every transaction the solver sent to the user's account) and the request is filled.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, encodeAbiParameters, erc20Abi, http, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createCaliburExecutor } from '@relayprotocol/relay-sdk';
import { stableTokenAbi } from '../../generated/contracts/index.js';
import { devnetViemChain, SDK_BATCH_EXECUTOR, type Devnet, type DevnetChain } from '../../src/chain/devnet.js';
import type { CrashPoint } from '../../src/core/faults.js';
import { useGatewayProcesses, type GatewayRun } from '../helpers/gatewayProcess.js';
import { call } from '../helpers/conformance.js';
import { publicClientOf, tokenOf } from '../helpers/quote.js';

const processes = useGatewayProcesses({ name: 'gasless-faults', readyTimeoutMs: 150_000 });

let devnet: Devnet;
let chainA: DevnetChain;
let chainB: DevnetChain;

beforeAll(() => {
  devnet = processes.devnet;
  [chainA, chainB] = devnet.descriptor.chains as [DevnetChain, DevnetChain];
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The gateway as a child process on the file's data directory (`test/helpers/gatewayProcess.ts`). */
const startGateway = (crashAt?: CrashPoint): GatewayRun => processes.start(crashAt);

/** A fresh account holding only USDC on chain A, its quote (approve + deposit) and its signed gasless batch. */
async function preparedBatch(url: string) {
  const account = privateKeyToAccount(generatePrivateKey());
  const deployer = createWalletClient({
    account: privateKeyToAccount(devnet.descriptor.deployer.privateKey),
    chain: devnetViemChain(chainA),
    transport: http(chainA.rpcUrl),
  });
  const client = publicClientOf(chainA);
  await client.waitForTransactionReceipt({
    hash: await deployer.writeContract({
      address: tokenOf(chainA, 'USDC'),
      abi: stableTokenAbi,
      functionName: 'mint',
      args: [account.address, 25_000_000n],
    }),
  });
  const recipient: Address = `0x${(0x6a6_0000 + processes.started()).toString(16).padStart(40, '0')}`;
  const quoted = await call(url, 'getQuote', {
    body: {
      user: account.address,
      recipient,
      originChainId: chainA.chainId,
      destinationChainId: chainB.chainId,
      originCurrency: tokenOf(chainA, 'USDC'),
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: '25000000',
      tradeType: 'EXACT_INPUT',
    },
  });
  expect(quoted.status).toBe(200);
  const quote = quoted.body;
  const requestId = quote.steps.at(-1).requestId as string;
  const calls = quote.steps.flatMap((step: any) =>
    step.items.map((item: any) => ({ to: item.data.to, value: BigInt(item.data.value || '0'), data: item.data.data })),
  );
  const executor = createCaliburExecutor();
  const auth = await account.signAuthorization({
    address: SDK_BATCH_EXECUTOR,
    chainId: chainA.chainId,
    nonce: await client.getTransactionCount({ address: account.address }),
  });
  const message = executor.buildSignMessage(calls, 0n);
  const signature = await account.signTypedData({
    domain: executor.buildSignDomain(chainA.chainId, account.address),
    types: executor.eip712Types as any,
    primaryType: 'SignedBatchedCall',
    message,
  });
  const body = {
    executionKind: 'rawCalls',
    data: {
      chainId: chainA.chainId,
      to: account.address,
      data: executor.encodeExecute(
        message,
        encodeAbiParameters([{ type: 'bytes' }, { type: 'bytes' }], [signature, '0x']),
      ),
      value: '0',
      authorizationList: [
        {
          chainId: Number(auth.chainId),
          address: auth.address,
          nonce: auth.nonce,
          yParity: auth.yParity ?? 0,
          r: auth.r,
          s: auth.s,
        },
      ],
    },
    executionOptions: { referrer: 'crash-tests', subsidizeFees: false },
    originGasOverhead: 80_000,
    requestId,
  };
  return { account, requestId, recipient, amountOut: BigInt(quote.details.currencyOut.amount), body };
}

/** Transactions the solver sent to `to` on chain A since `fromBlock` (reverted ones included). */
async function solverTxsTo(fromBlock: bigint, to: Address): Promise<Hex[]> {
  const client = publicClientOf(chainA);
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const found: Hex[] = [];
  for (let n = fromBlock; n <= head; n++) {
    const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions)
      if (
        tx.from.toLowerCase() === devnet.descriptor.solver.address.toLowerCase() &&
        tx.to?.toLowerCase() === to.toLowerCase()
      )
        found.push(tx.hash);
  }
  return found;
}

describe('a kill between accepting a gasless batch and sending it', () => {
  it.each(['gasless-accepted', 'gasless-recorded'] as const)(
    'killed at %s: after the restart the batch is sent exactly once and the request is filled',
    async (point) => {
      const fromBlock = await publicClientOf(chainA).getBlockNumber({ cacheTime: 0 });
      const first = startGateway(point);
      const url = await first.ready();
      const batch = await preparedBatch(url);
      // The process dies while answering: the client sees the connection drop.
      await expect(
        fetch(`${url}/execute`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(batch.body),
        }),
      ).rejects.toThrow();
      const outcome = await Promise.race([first.exited, sleep(20_000).then(() => 'timeout' as const)]);
      expect(outcome, first.output()).toEqual({ code: null, signal: 'SIGKILL' });
      // Nothing reached the chain before the kill.
      expect(await solverTxsTo(fromBlock, batch.account.address)).toEqual([]);

      const second = startGateway();
      const url2 = await second.ready();
      const deadline = Date.now() + 60_000;
      let status = '';
      while (Date.now() < deadline) {
        status = (await call(url2, 'getIntentStatus', { query: { requestId: batch.requestId } })).body.status;
        if (status === 'success') break;
        await sleep(200);
      }
      expect(status, second.output()).toBe('success');
      expect(await solverTxsTo(fromBlock, batch.account.address)).toHaveLength(1);
      expect(await publicClientOf(chainA).getBalance({ address: batch.account.address })).toBe(0n);
      const received = await publicClientOf(chainB).readContract({
        address: tokenOf(chainB, 'USDC'),
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [batch.recipient],
      });
      expect(received).toBeLessThan(batch.amountOut);
      expect(received).toBeGreaterThan(0n);
      await second.stop();
    },
    400_000,
  );
});
