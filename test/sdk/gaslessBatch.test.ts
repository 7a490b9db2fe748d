/**
 * Gasless batches with the unmodified reference client: `executeGaslessBatch` of `@relayprotocol/relay-sdk` signs
 * an EIP-7702 authorization to the batch executor the SDK expects (installed there on the devnet by the gateway's
 * own `contracts/BatchExecutor.sol`), signs the quote's calls (approve + deposit) as an EIP-712 batch and posts it
 * to `POST /execute`; the gateway sends it from its origin sender, recovers that gas from the request's output and
 * fills. The user is a fresh account holding only USDC: its ETH balance stays exactly 0.
 *
 * The SDK client is a process-wide singleton, configured once for the file; the cases run in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, erc20Abi, http, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { convertViemChainToRelayChain, createClient, getClient } from '@relayprotocol/relay-sdk';
import { devnetViemChain, SDK_BATCH_EXECUTOR, type DevnetChain } from '../../src/chain/devnet.js';
import { stableTokenAbi } from '../../generated/contracts/index.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { publicClientOf, tokenOf } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
const ADMIN_TOKEN = 'gasless-admin-token-0123456789';

beforeAll(async () => {
  gateway = await startTestGateway({ adminToken: ADMIN_TOKEN });
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  createClient({
    baseApiUrl: gateway.url,
    source: 'gateway-tests',
    // executeGaslessBatch refuses to start without an apiKey, although it never sends it to a self-hosted URL.
    apiKey: 'not-sent-to-self-hosted-urls',
    chains: gateway.devnet.descriptor.chains.map((chain) => convertViemChainToRelayChain(devnetViemChain(chain))),
    pollingInterval: 200,
    maxPollingAttemptsBeforeTimeout: 150,
  });
});
afterAll(async () => {
  await gateway?.stop();
});

const fresh = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;

const usdcBalance = (chain: DevnetChain, owner: Address): Promise<bigint> =>
  publicClientOf(chain).readContract({
    address: tokenOf(chain, 'USDC'),
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [owner],
  });

/** A new key whose only asset is `usdc` USDC on chain A (minted by the devnet's deployer, the token's owner). */
async function userWithOnlyUsdc(usdc: bigint) {
  const account = privateKeyToAccount(generatePrivateKey());
  const deployer = createWalletClient({
    account: privateKeyToAccount(gateway.devnet.descriptor.deployer.privateKey),
    chain: devnetViemChain(chainA),
    transport: http(chainA.rpcUrl),
  });
  const hash = await deployer.writeContract({
    address: tokenOf(chainA, 'USDC'),
    abi: stableTokenAbi,
    functionName: 'mint',
    args: [account.address, usdc],
  });
  await publicClientOf(chainA).waitForTransactionReceipt({ hash });
  const wallet = createWalletClient({ account, chain: devnetViemChain(chainA), transport: http(chainA.rpcUrl) });
  return { account, wallet };
}

async function quoteFor(wallet: Awaited<ReturnType<typeof userWithOnlyUsdc>>['wallet'], recipient: Address) {
  return getClient().actions.getQuote(
    {
      chainId: chainA.chainId,
      toChainId: chainB.chainId,
      currency: tokenOf(chainA, 'USDC'),
      toCurrency: tokenOf(chainB, 'USDC'),
      amount: '25000000',
      tradeType: 'EXACT_INPUT',
      wallet,
      recipient,
    },
    true,
  );
}

describe('gasless batches (POST /execute) with the unmodified SDK', () => {
  it('a fresh account holding only USDC bridges it: the recipient gets the quoted output less the recovered origin gas, the user keeps 0 ETH', async () => {
    const { account, wallet } = await userWithOnlyUsdc(30_000_000n);
    const recipient = fresh(0x6a5_0001);
    const client = publicClientOf(chainA);
    expect(await client.getBalance({ address: account.address })).toBe(0n);
    const before = await usdcBalance(chainB, recipient);

    const quote = await quoteFor(wallet, recipient);
    expect(quote.steps.map((step) => step.id)).toEqual(['approve', 'deposit']);
    const progress: string[] = [];
    const { requestId } = await getClient().actions.executeGaslessBatch({
      quote,
      walletClient: wallet,
      onProgress: (event) => progress.push(event.status),
    });
    expect(requestId).toBe(quote.steps[1]!.requestId);
    expect(progress).toEqual(['signing_authorization', 'signing_batch', 'submitting', 'polling', 'success']);

    // The EOA is delegated to the executor at the SDK's address, and paid no gas at all.
    expect((await client.getCode({ address: account.address }))?.toLowerCase()).toBe(
      `0xef0100${SDK_BATCH_EXECUTOR.slice(2).toLowerCase()}`,
    );
    expect(await client.getBalance({ address: account.address })).toBe(0n);
    expect(await usdcBalance(chainA, account.address)).toBe(30_000_000n - 25_000_000n);

    // The gateway's sender paid for a type-4 transaction; what it recovered is in the request's actual fees.
    const { status, body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    expect(status).toBe(200);
    expect(body.status).toBe('success');
    const depositTx = await client.getTransaction({ hash: body.inTxHashes![0] as Hex });
    expect(depositTx.type).toBe('eip7702');
    expect(depositTx.from.toLowerCase()).toBe(gateway.devnet.descriptor.solver.address.toLowerCase());
    expect(depositTx.to?.toLowerCase()).toBe(account.address.toLowerCase());

    const request = await gateway.server.core.db
      .selectFrom('requests')
      .select(['amount_out', 'fees_actual'])
      .where('id', '=', requestId.toLowerCase())
      .executeTakeFirstOrThrow();
    const originGas = (request.fees_actual as any).originGas;
    const recovered = BigInt(originGas.recoveredFromOutput);
    expect(recovered).toBeGreaterThan(0n);
    expect(originGas.sponsored).toBe(false);
    const quoted = BigInt(quote.details!.currencyOut!.amount!);
    expect(BigInt(String(request.amount_out))).toBe(quoted - recovered);
    expect((await usdcBalance(chainB, recipient)) - before).toBe(quoted - recovered);
  });
});
