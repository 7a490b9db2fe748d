/**
 * Crash recovery of a permit deposit, with a real process and a real `kill -9`: the gateway runs as a child
 * process on a devnet with PGlite in a data directory, started with `GATEWAY_CRASH_AT=permit-accepted`, so it
 * SIGKILLs itself after it recorded an accepted signature (the request `depositing`) and before it sent the
 * deposit. After a restart the deposit must be sent exactly once and the request filled: counted on chain (every
 * transaction the solver sent to the approval proxy), not read from the gateway's records. A permit its user
 * invalidated while the gateway was down (its authorization cancelled) must not be sent at all.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createWalletClient,
  erc20Abi,
  http,
  parseUnits,
  type Account,
  type Address,
  type Chain,
  type Hex,
  type Transport,
  type WalletClient,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { stableTokenAbi } from '../../generated/contracts/index.js';
import { devnetViemChain, type Devnet, type DevnetChain } from '../../src/chain/devnet.js';
import type { CrashPoint } from '../../src/core/faults.js';
import { useGatewayProcesses, type GatewayRun } from '../helpers/gatewayProcess.js';
import { call } from '../helpers/conformance.js';
import type { TestGateway } from '../helpers/gateway.js';
import { publicClientOf, tokenOf, waitForStatus } from '../helpers/quote.js';

const processes = useGatewayProcesses({ name: 'permit-faults' });

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

/** Every transaction `from` sent to `to` on chain A from block `fromBlock` on. */
async function txsTo(from: Address, to: Address, fromBlock: bigint): Promise<Hex[]> {
  const client = publicClientOf(chainA);
  const latest = await client.getBlockNumber();
  const hashes: Hex[] = [];
  for (let n = fromBlock; n <= latest; n++) {
    const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions)
      if (tx.from.toLowerCase() === from.toLowerCase() && tx.to?.toLowerCase() === to.toLowerCase())
        hashes.push(tx.hash);
  }
  return hashes;
}

describe('a kill -9 between accepting a permit and sending its deposit', { timeout: 300_000 }, () => {
  it('after the restart the deposit is sent exactly once and the request succeeds', async () => {
    const usdcA = tokenOf(chainA, 'USDC');
    const usdcB = tokenOf(chainB, 'USDC');
    const funder = devnet.descriptor.accounts[1]!;
    const user = privateKeyToAccount(generatePrivateKey());
    const recipient: Address = '0x00000000000000000000000000000000005d1e04';
    const funding = await createWalletClient({
      account: privateKeyToAccount(funder.privateKey),
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    }).writeContract({ address: usdcA, abi: erc20Abi, functionName: 'transfer', args: [user.address, 20_000_000n] });
    await publicClientOf(chainA).waitForTransactionReceipt({ hash: funding });
    const fromBlock = await publicClientOf(chainA).getBlockNumber();
    const balanceOf = (chain: DevnetChain, token: Address, owner: Address) =>
      publicClientOf(chain).readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
    const recipientBefore = await balanceOf(chainB, usdcB, recipient);

    const armed = startGateway('permit-accepted');
    const url = await armed.ready();
    const { status, body: quote } = await call(url, 'getQuote', {
      body: {
        user: user.address,
        recipient,
        originChainId: chainA.chainId,
        destinationChainId: chainB.chainId,
        originCurrency: usdcA,
        destinationCurrency: usdcB,
        amount: parseUnits('10', 6).toString(),
        tradeType: 'EXACT_INPUT',
        usePermit: true,
      },
    });
    expect(status, JSON.stringify(quote)).toBe(200);
    const item = quote.steps[0].items[0];
    const requestId = quote.steps[0].requestId as Hex;
    const signature = await user.signTypedData({
      domain: item.data.sign.domain,
      types: item.data.sign.types,
      primaryType: item.data.sign.primaryType,
      message: item.data.sign.value,
    });
    // The process dies right after recording the permit: the answer may or may not get out first.
    await call(url, 'submitPermit', { query: { signature }, body: item.data.post.body }).catch(() => undefined);
    const outcome = await Promise.race([armed.exited, sleep(20_000).then(() => 'timeout' as const)]);
    expect(outcome, armed.output()).toEqual({ code: null, signal: 'SIGKILL' });
    // Killed before the deposit: nothing was sent, the user's USDC is untouched.
    expect(await txsTo(devnet.descriptor.solver.address, chainA.contracts.approvalProxy, fromBlock)).toEqual([]);
    expect(await balanceOf(chainA, usdcA, user.address)).toBe(20_000_000n);

    const recovering = startGateway();
    const recoveredUrl = await recovering.ready();
    await waitForStatus({ url: recoveredUrl } as unknown as TestGateway, requestId, ['success'], 60_000);
    // The same signature posted again after the restart is a no-op.
    const again = await call(recoveredUrl, 'submitPermit', { query: { signature }, body: item.data.post.body });
    expect(again.status).toBe(200);
    await recovering.stop();

    expect(await txsTo(devnet.descriptor.solver.address, chainA.contracts.approvalProxy, fromBlock)).toHaveLength(1);
    expect(20_000_000n - (await balanceOf(chainA, usdcA, user.address))).toBe(BigInt(quote.details.currencyIn.amount));
    expect((await balanceOf(chainB, usdcB, recipient)) - recipientBefore).toBe(
      BigInt(quote.details.currencyOut.amount),
    );
    expect(await publicClientOf(chainA).getBalance({ address: user.address })).toBe(0n);
  });

  it('a permit whose nonce the user spent before the restart is not sent: the permit fails, the request waits, the solver pays nothing', async () => {
    await spoiledWhileDown(async ({ user, item, funderWallet, usdcA }) => {
      // While the gateway is down, the user cancels the authorization it signed: the permit's nonce is spent.
      const nonce = item.data.sign.value.nonce as Hex;
      const cancel = await user.signTypedData({
        domain: item.data.sign.domain,
        types: {
          CancelAuthorization: [
            { name: 'authorizer', type: 'address' },
            { name: 'nonce', type: 'bytes32' },
          ],
        },
        primaryType: 'CancelAuthorization',
        message: { authorizer: user.address, nonce },
      });
      const cancelled = await funderWallet.writeContract({
        address: usdcA,
        abi: stableTokenAbi,
        functionName: 'cancelAuthorization',
        args: [
          user.address,
          nonce,
          parseInt(cancel.slice(130, 132), 16),
          `0x${cancel.slice(2, 66)}`,
          `0x${cancel.slice(66, 130)}`,
        ],
      });
      expect((await publicClientOf(chainA).waitForTransactionReceipt({ hash: cancelled })).status).toBe('success');
      return 20_000_000n;
    });
  });

  it('a permit whose owner moved the amount away before the restart is not sent (the balance is read again)', async () => {
    await spoiledWhileDown(async ({ user, item, funderWallet, usdcA }) => {
      // A signed transfer of 11 USDC to the funder (another nonce): 9 USDC are left, less than the 10 the permit pays.
      const away = await user.signTypedData({
        domain: item.data.sign.domain,
        types: {
          TransferWithAuthorization: [
            { name: 'from', type: 'address' },
            { name: 'to', type: 'address' },
            { name: 'value', type: 'uint256' },
            { name: 'validAfter', type: 'uint256' },
            { name: 'validBefore', type: 'uint256' },
            { name: 'nonce', type: 'bytes32' },
          ],
        },
        primaryType: 'TransferWithAuthorization',
        message: {
          from: user.address,
          to: funderWallet.account.address,
          value: 11_000_000n,
          validAfter: 0n,
          validBefore: 2n ** 40n,
          nonce: `0x${'44'.repeat(32)}`,
        },
      });
      const moved = await funderWallet.writeContract({
        address: usdcA,
        abi: stableTokenAbi,
        functionName: 'transferWithAuthorization',
        args: [
          user.address,
          funderWallet.account.address,
          11_000_000n,
          0n,
          2n ** 40n,
          `0x${'44'.repeat(32)}`,
          parseInt(away.slice(130, 132), 16),
          `0x${away.slice(2, 66)}`,
          `0x${away.slice(66, 130)}`,
        ],
      });
      expect((await publicClientOf(chainA).waitForTransactionReceipt({ hash: moved })).status).toBe('success');
      return 9_000_000n;
    });
  });
});

interface Spoiling {
  user: PrivateKeyAccount;
  item: { data: { sign: { domain: any; types: any; primaryType: string; value: Record<string, string> } } };
  funderWallet: WalletClient<Transport, Chain, Account>;
  usdcA: Address;
}

/**
 * A permit accepted by a gateway killed before sending its deposit (`permit-accepted`), spoiled on chain by its user
 * while the gateway is down (`spoil` answers the user's USDC left): the restarted gateway reads the chain again and
 * sends nothing; the permit fails, the request waits, the same signature is refused.
 */
async function spoiledWhileDown(spoil: (spoiling: Spoiling) => Promise<bigint>): Promise<void> {
  const usdcA = tokenOf(chainA, 'USDC');
  const funder = devnet.descriptor.accounts[1]!;
  const funderWallet = createWalletClient({
    account: privateKeyToAccount(funder.privateKey),
    chain: devnetViemChain(chainA),
    transport: http(chainA.rpcUrl),
  });
  const user = privateKeyToAccount(generatePrivateKey());
  const funding = await funderWallet.writeContract({
    address: usdcA,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [user.address, 20_000_000n],
  });
  await publicClientOf(chainA).waitForTransactionReceipt({ hash: funding });
  const fromBlock = await publicClientOf(chainA).getBlockNumber();

  const armed = startGateway('permit-accepted');
  const url = await armed.ready();
  const { status, body: quote } = await call(url, 'getQuote', {
    body: {
      user: user.address,
      recipient: '0x00000000000000000000000000000000005d1e05',
      originChainId: chainA.chainId,
      destinationChainId: chainB.chainId,
      originCurrency: usdcA,
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: parseUnits('10', 6).toString(),
      tradeType: 'EXACT_INPUT',
      usePermit: true,
    },
  });
  expect(status, JSON.stringify(quote)).toBe(200);
  const item = quote.steps[0].items[0];
  const requestId = quote.steps[0].requestId as Hex;
  const signature = await user.signTypedData({
    domain: item.data.sign.domain,
    types: item.data.sign.types,
    primaryType: item.data.sign.primaryType,
    message: item.data.sign.value,
  });
  await call(url, 'submitPermit', { query: { signature }, body: item.data.post.body }).catch(() => undefined);
  const outcome = await Promise.race([armed.exited, sleep(20_000).then(() => 'timeout' as const)]);
  expect(outcome, armed.output()).toEqual({ code: null, signal: 'SIGKILL' });

  // While the gateway is down, the user spoils the permit.
  const userBalance = await spoil({ user, item, funderWallet, usdcA });

  const recovering = startGateway();
  const recoveredUrl = await recovering.ready();
  await waitForStatus({ url: recoveredUrl } as unknown as TestGateway, requestId, ['waiting'], 60_000);
  const again = await call(recoveredUrl, 'submitPermit', { query: { signature }, body: item.data.post.body });
  expect(again.status).toBe(400);
  expect(again.body).toMatchObject({ errorCode: 'PERMIT_FAILED', errorData: 'DEPOSIT_REVERTED' });
  await recovering.stop();

  // Nothing was sent to the approval proxy: the solver paid no gas for a deposit that would revert.
  expect(await txsTo(devnet.descriptor.solver.address, chainA.contracts.approvalProxy, fromBlock)).toEqual([]);
  const balance = await publicClientOf(chainA).readContract({
    address: usdcA,
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [user.address],
  });
  expect(balance).toBe(userBalance);
}
