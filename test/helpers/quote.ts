import { expect } from 'vitest';
import { createPublicClient, createWalletClient, http, type Address, type Hex, type TransactionReceipt } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { call } from './conformance.js';
import type { TestGateway } from './gateway.js';

export interface WireStep {
  id: string;
  kind: string;
  requestId: Hex;
  items: Array<{
    status: string;
    data: { from: Address; to: Address; data: Hex; value: string; chainId: number };
    check?: { endpoint: string; method: string };
  }>;
}

export interface WireQuote {
  steps: WireStep[];
  details: any;
  fees: any;
  protocol: any;
  feeSponsorship?: any;
}

export const publicClientOf = (chain: DevnetChain) =>
  createPublicClient({ chain: devnetViemChain(chain), transport: http(chain.rpcUrl) });
export const tokenOf = (chain: DevnetChain, symbol: string): Address =>
  chain.tokens.find((t) => t.symbol === symbol)!.address;

/** POST /quote/v2 with `user` from chain A to chain B as defaults; fails the test unless it answers 200. */
export async function requestQuote(
  gateway: TestGateway,
  user: DevnetAccount,
  body: Record<string, unknown>,
  headers?: Record<string, string>,
): Promise<WireQuote> {
  const [chainA, chainB] = gateway.devnet.descriptor.chains;
  const { status, body: response } = await call(gateway.url, 'getQuote', {
    body: {
      user: user.address,
      originChainId: chainA!.chainId,
      destinationChainId: chainB!.chainId,
      tradeType: 'EXACT_INPUT',
      ...body,
    },
    ...(headers === undefined ? {} : { headers }),
  });
  expect(status, JSON.stringify(response)).toBe(200);
  return response as WireQuote;
}

/** Sends every step item in order, exactly as quoted, from `account`; returns the receipts by step id. */
export async function executeSteps(
  gateway: TestGateway,
  steps: WireStep[],
  account: DevnetAccount,
): Promise<Map<string, TransactionReceipt>> {
  const receipts = new Map<string, TransactionReceipt>();
  for (const step of steps) {
    for (const item of step.items) {
      const chain = gateway.devnet.descriptor.chains.find((c) => c.chainId === item.data.chainId)!;
      const wallet = createWalletClient({
        account: privateKeyToAccount(account.privateKey),
        chain: devnetViemChain(chain),
        transport: http(chain.rpcUrl),
      });
      expect(item.data.from).toBe(account.address);
      const hash = await wallet.sendTransaction({
        to: item.data.to,
        data: item.data.data,
        value: BigInt(item.data.value),
      });
      const receipt = await publicClientOf(chain).waitForTransactionReceipt({ hash });
      expect(receipt.status, `${step.id} reverted`).toBe('success');
      receipts.set(step.id, receipt);
    }
  }
  return receipts;
}

/** Polls GET /intents/status/v3 (as the SDK does) until the status is one of `until`; returns the record. */
export async function waitForStatus(
  gateway: TestGateway,
  requestId: string,
  until: string[],
  timeoutMs = 30_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    const { status, body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    last = body;
    if (status === 200 && until.includes(body.status)) return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(
    `request ${requestId} did not reach ${until.join('/')} in ${timeoutMs} ms; last: ${JSON.stringify(last)}`,
  );
}
