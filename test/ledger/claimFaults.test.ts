/**
 * Crash recovery of app-fee claims, with a real process and a real `kill -9` (the harness of
 * `test/ledger/settlementFaults.test.ts`): the gateway is killed at each step of a claim (authorized, payout
 * recorded, broadcast, mined) and restarted. Every time the claim ends paid exactly once: one transfer to the
 * recipient on chain, and the wallet's balance back to zero.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { erc20Abi, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { type Devnet, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import type { CrashPoint } from '../../src/core/faults.js';
import { useGatewayProcesses, type GatewayRun } from '../helpers/gatewayProcess.js';
import type { TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';

const processes = useGatewayProcesses({
  name: 'claim-faults',
  env: { GATEWAY_SETTLEMENT_INTERVAL_MS: '300', GATEWAY_APP_FEE_CLAIM_MINIMUM_USD: '0.01' },
  readyTimeoutMs: 240_000,
});

let devnet: Devnet;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;

beforeAll(() => {
  devnet = processes.devnet;
  [chainA, chainB] = devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [alice] = devnet.descriptor.accounts as [DevnetAccount];
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The gateway as a child process on the file's data directory (`test/helpers/gatewayProcess.ts`). */
const startGateway = (crashAt?: CrashPoint): GatewayRun => processes.start(crashAt);

const gatewayAt = (url: string) => ({ url, devnet }) as unknown as TestGateway;

const json = async (url: string, init?: RequestInit) => {
  const response = await fetch(url, init);
  return { status: response.status, body: await response.json() };
};

describe('app-fee claims killed at each step', { timeout: 900_000 }, () => {
  it.each(['claim-authorized', 'claim-recorded', 'claim-broadcast', 'claim-mined'] as const)(
    'killed at %s: after a restart the claim is paid exactly once',
    async (point) => {
      const app = privateKeyToAccount(generatePrivateKey());
      const recipient = privateKeyToAccount(generatePrivateKey()).address;
      const usdcB = tokenOf(chainB, 'USDC');
      const armed = startGateway(point);
      const url = await armed.ready();
      const quote = await requestQuote(gatewayAt(url), alice, {
        originCurrency: tokenOf(chainA, 'USDC'),
        destinationCurrency: usdcB,
        amount: '25000000',
        appFees: [{ recipient: app.address, fee: '100' }],
      });
      await executeSteps(gatewayAt(url), quote.steps, alice);
      await waitForStatus(gatewayAt(url), quote.steps.at(-1)!.requestId, ['success']);
      const started = await json(`${url}/app-fees/${app.address}/claim`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ chainId: chainB.chainId, currency: usdcB, recipient }),
      });
      expect(started.status, JSON.stringify(started.body)).toBe(200);
      const item = started.body.steps[0].items[0].data;
      const signature = await app.signMessage({ message: { raw: item.sign.message as Hex } });
      // Killed at `claim-authorized`, the process dies before it answers: the post then fails, as it may.
      await fetch(`${url}/execute/permits?signature=${signature}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(item.post.body),
      }).catch(() => undefined);
      const outcome = await Promise.race([armed.exited, sleep(90_000).then(() => 'timeout' as const)]);
      expect(outcome, armed.output()).toEqual({ code: null, signal: 'SIGKILL' });

      const restarted = startGateway();
      const restartedUrl = await restarted.ready();
      const deadline = Date.now() + 120_000;
      let claims: any[] = [];
      while (Date.now() < deadline) {
        claims = (await json(`${restartedUrl}/app-fees/${app.address}/claims`)).body.claims;
        if (claims[0]?.status === 'success') break;
        await sleep(100);
      }
      expect(claims.map((c) => c.status)).toEqual(['success']);
      // A few more passes of the payer: a second payout would show by now.
      await sleep(1_500);
      const balances = await json(`${restartedUrl}/app-fees/${app.address}/balances`);
      await restarted.stop();

      expect(balances.body).toMatchObject({ totalBalanceUsd: 0, availableBalanceUsd: 0 });
      const transfers = await publicClientOf(chainB).getContractEvents({
        address: usdcB,
        abi: erc20Abi,
        eventName: 'Transfer',
        args: { to: recipient },
        fromBlock: 0n,
      });
      expect(transfers).toHaveLength(1);
      expect(transfers[0]!.args.value).toBe(BigInt(claims[0].currency.amount));
      expect(transfers[0]!.transactionHash).toBe(claims[0].txHash);
    },
  );
});
