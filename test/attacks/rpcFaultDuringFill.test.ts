/**
 * Fault: the destination chain's RPC fails while the solver decides and fills (a provider outage, rate limits).
 * The request must not be left `pending` until the next restart: the solver retries its work with backoff and
 * fills once the RPC answers again. The fault is injected by an HTTP proxy in front of chain B's anvil that
 * answers 503 to a number of `eth_estimateGas` calls (the fill's simulation): a real anvil cannot be made to
 * fail on demand, everything else is real.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, zeroAddress } from 'viem';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, requestQuote, waitForStatus } from '../helpers/quote.js';
import { fillsOf, freshAddress, nativeBalance } from './attacker.js';

let gateway: TestGateway;
let chainB: DevnetChain;
let user: DevnetAccount;
let proxy: Server;
/** How many more calls of `failing` methods the proxy answers with HTTP 503. */
const fault = { failing: new Set<string>(), remaining: 0, injected: 0 };

/** Forwards JSON-RPC to `upstream`, failing calls of `fault.failing` while `fault.remaining` lasts. */
async function startProxy(upstream: string): Promise<string> {
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let method: string | undefined;
      try {
        method = (JSON.parse(body) as { method?: string }).method;
      } catch {
        method = undefined;
      }
      if (method !== undefined && fault.failing.has(method) && fault.remaining > 0) {
        fault.remaining--;
        fault.injected++;
        res.writeHead(503, { 'content-type': 'text/plain' }).end('injected fault');
        return;
      }
      fetch(upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        .then(async (answer) =>
          res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text()),
        )
        .catch(() => res.writeHead(502).end());
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  gateway = await startTestGateway(
    {},
    {
      configure: async (config, devnet) => {
        const b = devnet.descriptor.chains[1]!;
        const url = await startProxy(b.rpcUrl);
        return {
          ...config,
          chains: config.chains.map((chain) => (chain.id === b.chainId ? { ...chain, httpRpcUrl: url } : chain)),
        };
      },
    },
  );
  chainB = gateway.devnet.descriptor.chains[1]!;
  user = gateway.devnet.descriptor.accounts[0]!;
});
afterAll(async () => {
  await gateway?.stop();
  await new Promise((resolve) => proxy?.close(resolve));
});

describe('an RPC error while filling', () => {
  it("the fill's simulation fails with HTTP 503 several times: the solver retries and fills, without a restart", async () => {
    const recipient = freshAddress();
    const q = await requestQuote(gateway, user, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      recipient,
    });
    const requestId = q.steps.at(-1)!.requestId;
    // From now on the destination's next 4 gas estimates fail (viem tries each call twice: two failed attempts).
    fault.failing = new Set(['eth_estimateGas']);
    fault.remaining = 4;
    await executeSteps(gateway, q.steps, user);
    const record = await waitForStatus(gateway, requestId, ['success', 'failure', 'refund'], 45_000);
    expect(fault.injected).toBe(4);
    expect(record).toMatchObject({ status: 'success', failReason: 'N/A' });
    expect(await fillsOf(chainB, requestId)).toBe(1);
    expect(await nativeBalance(chainB, recipient)).toBe(BigInt(q.details.currencyOut.amount));
  });
});
