import { afterAll, beforeAll, expect } from 'vitest';
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  erc20Abi,
  http,
  type Account,
  type Address,
  type Chain,
  type Hash,
  type PublicClient,
  type TestClient,
  type Transport,
  type TransactionReceipt,
  type WalletClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  devnetViemChain,
  startDevnet,
  type Devnet,
  type DevnetAccount,
  type DevnetChain,
  type DevnetDescriptor,
  type StartDevnetParameters,
} from '../../src/chain/devnet.js';

/** One devnet chain with ready clients, for contract and chain tests. */
export interface DevnetContext {
  devnet: Devnet;
  descriptor: DevnetDescriptor;
  /** The first chain of the devnet. */
  chain: DevnetChain;
  viemChain: Chain;
  publicClient: PublicClient<Transport, Chain>;
  testClient: TestClient<'anvil', Transport, Chain>;
  /** A wallet that signs locally with `account`'s key. */
  wallet(account: DevnetAccount): WalletClient<Transport, Chain, Account>;
  /** Waits for a transaction and fails the test if it reverted. */
  mined: (hash: Hash | Promise<Hash>) => Promise<TransactionReceipt>;
  /** ERC-20 balance. */
  balanceOf(token: Address, owner: Address): Promise<bigint>;
  /** `owner` approves `spender` for `amount` of `token` and waits for it. */
  approve(owner: DevnetAccount, token: Address, spender: Address, amount: bigint): Promise<void>;
}

/**
 * Starts one devnet (free ports, automine, a single chain unless told otherwise) before the file's
 * tests and stops it after them. The returned object is filled in by `beforeAll`.
 */
export function useDevnet(parameters: StartDevnetParameters = {}): DevnetContext {
  const context = {} as DevnetContext;
  beforeAll(async () => {
    const devnet = await startDevnet({ chains: [31337], basePort: 0, ...parameters });
    const chain = devnet.descriptor.chains[0]!;
    const viemChain = devnetViemChain(chain);
    const transport = http(chain.rpcUrl);
    const publicClient = createPublicClient({ chain: viemChain, transport, pollingInterval: 50 });
    const mined = async (hash: Hash | Promise<Hash>) => {
      const receipt = await publicClient.waitForTransactionReceipt({ hash: await hash, pollingInterval: 50 });
      expect(receipt.status).toBe('success');
      return receipt;
    };
    Object.assign(context, {
      devnet,
      descriptor: devnet.descriptor,
      chain,
      viemChain,
      publicClient,
      testClient: createTestClient({ mode: 'anvil', chain: viemChain, transport }),
      wallet: (account: DevnetAccount) =>
        createWalletClient({ account: privateKeyToAccount(account.privateKey), chain: viemChain, transport }),
      mined,
      balanceOf: (token: Address, owner: Address) =>
        publicClient.readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] }),
      approve: async (owner: DevnetAccount, token: Address, spender: Address, amount: bigint) => {
        await mined(
          context
            .wallet(owner)
            .writeContract({ address: token, abi: erc20Abi, functionName: 'approve', args: [spender, amount] }),
        );
      },
    } satisfies DevnetContext);
  });
  afterAll(async () => {
    await context.devnet?.stop();
  });
  return context;
}

/** Asserts that `promise` fails with the custom error `errorName` (decoded by viem from the ABI used). */
export async function expectRevert(
  promise: Promise<unknown>,
  errorName: string,
): Promise<ContractFunctionRevertedError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected a revert with ${errorName}`).toBeInstanceOf(BaseError);
  const reverted = (error as BaseError).walk((e) => e instanceof ContractFunctionRevertedError);
  expect(reverted, `no decoded revert in: ${(error as Error).message}`).toBeInstanceOf(ContractFunctionRevertedError);
  expect((reverted as ContractFunctionRevertedError).data?.errorName).toBe(errorName);
  return reverted as ContractFunctionRevertedError;
}

/** Whether a process with this id still exists. */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** An `onFetchRequest` for viem's http transport that appends the JSON-RPC method of every call it sends to `into`. */
export const recordRpcMethods =
  (into: string[]) =>
  async (request: Request): Promise<void> => {
    const body = (await request.clone().json()) as { method: string } | Array<{ method: string }>;
    for (const call of Array.isArray(body) ? body : [body]) into.push(call.method);
  };
