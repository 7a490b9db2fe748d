/**
 * Deposits sent straight to a depository with viem, as any wallet can (naming any request id and any depositor), and
 * waited for: what the tests that drive the chain themselves share.
 */
import { expect } from 'vitest';
import {
  createWalletClient,
  erc20Abi,
  http,
  parseEventLogs,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { depositoryAbi } from '../../generated/contracts/index.js';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { publicClientOf } from './quote.js';

/** A mined deposit: its transaction, its receipt and the depository's `Deposit` log. */
export interface SentDeposit {
  hash: Hex;
  depositIndex: bigint;
  receipt: TransactionReceipt;
  log: ReturnType<typeof parseEventLogs<typeof depositoryAbi, true, 'Deposit'>>[number];
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
  const [log] = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipt.logs });
  expect(log).toBeDefined();
  return { hash, depositIndex: log!.args.depositIndex, receipt, log: log! };
}
