/**
 * What the attack tests share: an attacker's deposits sent straight to a depository with viem (as anyone can,
 * naming any request id and any depositor), and what the chain shows afterwards (releases, fills, balances).
 */
import { expect } from 'vitest';
import { createWalletClient, erc20Abi, http, parseEventLogs, zeroAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { depositoryAbi, onlyOwnerMulticallerAbi } from '../../generated/contracts/index.js';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { listDepositsForRequest } from '../../src/store/deposits.repository.js';
import { call } from '../helpers/conformance.js';
import type { TestGateway } from '../helpers/gateway.js';
import { publicClientOf } from '../helpers/quote.js';

export interface SentDeposit {
  hash: Hex;
  depositIndex: bigint;
}

const walletOf = (chain: DevnetChain, account: DevnetAccount) =>
  createWalletClient({
    account: privateKeyToAccount(account.privateKey),
    chain: devnetViemChain(chain),
    transport: http(chain.rpcUrl),
  });

/** `from` sends `value` of `chain`'s native currency to its depository for `requestId`, naming `depositor`. */
export async function depositNative(
  chain: DevnetChain,
  from: DevnetAccount,
  requestId: Hex,
  value: bigint,
  depositor: Address = from.address,
): Promise<SentDeposit> {
  const hash = await walletOf(chain, from).writeContract({
    address: chain.contracts.depository,
    abi: depositoryAbi,
    functionName: 'depositNative',
    args: [depositor, requestId],
    value,
  });
  return mined(chain, hash);
}

/** `from` approves and deposits `amount` of `token` to `chain`'s depository for `requestId`, naming `depositor`. */
export async function depositErc20(
  chain: DevnetChain,
  from: DevnetAccount,
  token: Address,
  requestId: Hex,
  amount: bigint,
  depositor: Address = from.address,
): Promise<SentDeposit> {
  const wallet = walletOf(chain, from);
  const approval = await wallet.writeContract({
    address: token,
    abi: erc20Abi,
    functionName: 'approve',
    args: [chain.contracts.depository, amount],
  });
  await publicClientOf(chain).waitForTransactionReceipt({ hash: approval });
  const hash = await wallet.writeContract({
    address: chain.contracts.depository,
    abi: depositoryAbi,
    functionName: 'depositErc20',
    args: [depositor, token, amount, requestId],
  });
  return mined(chain, hash);
}

async function mined(chain: DevnetChain, hash: Hex): Promise<SentDeposit> {
  const receipt = await publicClientOf(chain).waitForTransactionReceipt({ hash });
  expect(receipt.status).toBe('success');
  const [deposit] = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipt.logs });
  return { hash, depositIndex: deposit!.args.depositIndex };
}

/** The depository's release of one deposit on `chain`, if any. */
export async function releaseOf(
  chain: DevnetChain,
  depositIndex: bigint,
): Promise<{ to: Address; amount: bigint } | undefined> {
  const events = await publicClientOf(chain).getContractEvents({
    address: chain.contracts.depository,
    abi: depositoryAbi,
    eventName: 'Released',
    args: { depositIndex },
    fromBlock: 0n,
  });
  const event = events[0];
  return event === undefined ? undefined : { to: event.args.to!, amount: event.args.amount! };
}

/** How many fills of `requestId` happened on `chain`. */
export async function fillsOf(chain: DevnetChain, requestId: Hex): Promise<number> {
  const events = await publicClientOf(chain).getContractEvents({
    address: chain.contracts.onlyOwnerMulticaller,
    abi: onlyOwnerMulticallerAbi,
    eventName: 'Filled',
    args: { id: requestId },
    fromBlock: 0n,
  });
  return events.length;
}

export const nativeBalance = (chain: DevnetChain, owner: Address): Promise<bigint> =>
  publicClientOf(chain).getBalance({ address: owner });

/** The request's status as `GET /intents/status/v3` shows it. */
export async function statusOf(gateway: TestGateway, requestId: Hex): Promise<any> {
  const { status, body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
  expect(status).toBe(200);
  return body;
}

/** Whether the gateway is done with the deposit sent in `txHash` (its row is `consumed`). */
export async function depositHandled(gateway: TestGateway, requestId: Hex, txHash: Hex): Promise<boolean> {
  const deposits = await listDepositsForRequest(gateway.server.database.db, requestId);
  return deposits.some((deposit) => deposit.txHash === txHash.toLowerCase() && deposit.status === 'consumed');
}

/** Polls `done` every 100 ms; fails the test after `timeoutMs`. */
export async function until(what: string, done: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let next = 0xa77ac0;
/** A fresh address holding nothing on any chain (recipients, refund targets). */
export const freshAddress = (): Address => `0x${(next++).toString(16).padStart(40, '0')}`;

export { zeroAddress };
