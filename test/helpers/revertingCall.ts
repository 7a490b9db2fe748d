/**
 * The revert scenario: a destination call that passes the quote's simulation and reverts at fill time. The call
 * pulls 1 USDC that `owner` approved to the multicaller; revoking the approval after the quote makes the fill's
 * simulation (or the fill itself, when it is already signed) revert with `InsufficientAllowance`.
 */
import { createWalletClient, encodeFunctionData, erc20Abi, http, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { publicClientOf, tokenOf } from './quote.js';

export interface RevocablePull {
  /** The quote's `txs`: one `transferFrom(owner, recipient, 1 USDC)` on `chain`'s USDC. */
  txs: Array<{ to: Address; value: string; data: Hex }>;
  /** Takes the approval back (mined when it resolves): from then on the call reverts. */
  revoke: () => Promise<void>;
}

/** Approves the multicaller for `owner`'s USDC on `chain` (mined when it resolves) and builds the call. */
export async function revocablePull(
  chain: DevnetChain,
  owner: DevnetAccount,
  recipient: Address,
): Promise<RevocablePull> {
  const usdc = tokenOf(chain, 'USDC');
  const wallet = createWalletClient({
    account: privateKeyToAccount(owner.privateKey),
    chain: devnetViemChain(chain),
    transport: http(chain.rpcUrl),
  });
  const approve = async (amount: bigint) => {
    await publicClientOf(chain).waitForTransactionReceipt({
      hash: await wallet.writeContract({
        address: usdc,
        abi: erc20Abi,
        functionName: 'approve',
        args: [chain.contracts.multicaller, amount],
      }),
    });
  };
  await approve(10n ** 9n);
  const data = encodeFunctionData({
    abi: erc20Abi,
    functionName: 'transferFrom',
    args: [owner.address, recipient, 1_000_000n],
  });
  return { txs: [{ to: usdc, value: '0', data }], revoke: () => approve(0n) };
}
