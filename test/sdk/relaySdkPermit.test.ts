/**
 * Paying without gas through a permit, driven by the unmodified `@relayprotocol/relay-sdk` (only `baseApiUrl` and
 * the local chains differ from production): a fresh account that holds USDC and not one wei of ETH asks for a
 * quote with `usePermit: true`, the SDK signs the EIP-3009 authorization, posts it to `/execute/permits` and polls
 * the item's `check` until the gateway has deposited (its own transaction, its own gas) and filled. The same again
 * with PUSD, the devnet's EIP-2612-only token (no EIP-3009): the SDK signs a `Permit` to the approval proxy.
 *
 * The SDK client is a process-wide singleton, configured once for the file; its websocket stays disabled (in
 * Node the SDK's stub socket never fails, so it would never fall back to polling).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, erc20Abi, http, parseUnits, type Address, type Hex } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { getClient } from '@relayprotocol/relay-sdk';
import { devnetViemChain, type DevnetChain } from '../../src/chain/devnet.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { configureRelaySdk } from '../helpers/relaySdk.js';
import { publicClientOf, tokenOf } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  configureRelaySdk(gateway);
});
afterAll(async () => {
  await gateway?.stop();
});

const tokenBalance = (chain: DevnetChain, token: Address, owner: Address): Promise<bigint> =>
  publicClientOf(chain).readContract({ address: token, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

describe('@relayprotocol/relay-sdk with usePermit against the gateway', () => {
  it('bridges USDC 31337 → 31338 from an account with zero ETH: one signature, the gateway deposits and pays the gas', async () => {
    const usdcA = tokenOf(chainA, 'USDC');
    const usdcB = tokenOf(chainB, 'USDC');
    const user = privateKeyToAccount(generatePrivateKey());
    const recipient: Address = '0x00000000000000000000000000000000005d1e01';
    // The user holds USDC only: a funded devnet account sends it 25 USDC.
    const funder = gateway.devnet.descriptor.accounts[1]!;
    const funding = await createWalletClient({
      account: privateKeyToAccount(funder.privateKey),
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    }).writeContract({
      address: usdcA,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [user.address, parseUnits('25', 6)],
    });
    await publicClientOf(chainA).waitForTransactionReceipt({ hash: funding });
    expect(await publicClientOf(chainA).getBalance({ address: user.address })).toBe(0n);
    const recipientBefore = await tokenBalance(chainB, usdcB, recipient);

    const wallet = createWalletClient({
      account: user,
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    });
    const quote = await getClient().actions.getQuote(
      {
        chainId: chainA.chainId,
        toChainId: chainB.chainId,
        currency: usdcA,
        toCurrency: usdcB,
        amount: parseUnits('20', 6).toString(),
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
        options: { usePermit: true },
      },
      true,
    );
    // Signature steps only: nothing for the wallet to send (it could not pay the gas).
    expect(quote.steps.map((step) => [step.id, step.kind])).toEqual([['authorize1', 'signature']]);
    const item = quote.steps[0]!.items[0]!;
    expect(item.data.sign).toMatchObject({ signatureKind: 'eip712', primaryType: 'ReceiveWithAuthorization' });
    expect(item.data.post).toMatchObject({ endpoint: '/execute/permits', method: 'POST', body: { kind: 'eip3009' } });
    // The gateway's origin gas is in the execution fee (relayerGas), and the user pays no origin gas.
    expect(quote.fees!.gas!.amount).toBe('0');

    const { data: result } = await getClient().actions.execute({ quote, wallet, onProgress: () => undefined });
    const done = result.steps[0]!.items[0]!;
    expect(done.status).toBe('complete');
    expect(done.checkStatus).toBe('success');

    expect((await tokenBalance(chainB, usdcB, recipient)) - recipientBefore).toBe(
      BigInt(quote.details!.currencyOut!.amount!),
    );
    expect(await publicClientOf(chainA).getBalance({ address: user.address })).toBe(0n);
    expect(await tokenBalance(chainA, usdcA, user.address)).toBe(parseUnits('5', 6));

    const requestId = quote.steps[0]!.requestId! as Hex;
    const { body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    expect(body).toMatchObject({ status: 'success' });
    // The deposit was sent by the solver (the gateway paid its gas), through the approval proxy.
    const depositTx = await publicClientOf(chainA).getTransaction({ hash: body.inTxHashes![0] as Hex });
    expect(depositTx.from.toLowerCase()).toBe(gateway.devnet.descriptor.solver.address.toLowerCase());
    expect(depositTx.to?.toLowerCase()).toBe(chainA.contracts.approvalProxy.toLowerCase());
  });

  it('bridges PUSD (EIP-2612 only) 31337 → 31338 from an account with zero ETH: one permit signature, the gateway deposits', async () => {
    const pusdA = tokenOf(chainA, 'PUSD');
    const pusdB = tokenOf(chainB, 'PUSD');
    const user = privateKeyToAccount(generatePrivateKey());
    const recipient: Address = '0x00000000000000000000000000000000005d1e04';
    const funder = gateway.devnet.descriptor.accounts[1]!;
    const funding = await createWalletClient({
      account: privateKeyToAccount(funder.privateKey),
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    }).writeContract({
      address: pusdA,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [user.address, parseUnits('25', 6)],
    });
    await publicClientOf(chainA).waitForTransactionReceipt({ hash: funding });
    expect(await publicClientOf(chainA).getBalance({ address: user.address })).toBe(0n);
    const recipientBefore = await tokenBalance(chainB, pusdB, recipient);

    const wallet = createWalletClient({
      account: user,
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    });
    const quote = await getClient().actions.getQuote(
      {
        chainId: chainA.chainId,
        toChainId: chainB.chainId,
        currency: pusdA,
        toCurrency: pusdB,
        amount: parseUnits('20', 6).toString(),
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
        options: { usePermit: true },
      },
      true,
    );
    expect(quote.steps.map((step) => [step.id, step.kind])).toEqual([['authorize1', 'signature']]);
    const item = quote.steps[0]!.items[0]!;
    // EIP-2612: a Permit to the approval proxy, in the token's own domain (version "2", read from the token).
    expect(item.data.sign).toMatchObject({
      signatureKind: 'eip712',
      primaryType: 'Permit',
      domain: { name: 'Permit USD', version: '2', chainId: chainA.chainId },
      value: { owner: user.address, spender: chainA.contracts.approvalProxy, value: parseUnits('20', 6).toString() },
    });
    expect(item.data.post).toMatchObject({ endpoint: '/execute/permits', method: 'POST', body: { kind: 'eip2612' } });
    expect(quote.fees!.gas!.amount).toBe('0');

    const { data: result } = await getClient().actions.execute({ quote, wallet, onProgress: () => undefined });
    const done = result.steps[0]!.items[0]!;
    expect(done.status).toBe('complete');
    expect(done.checkStatus).toBe('success');

    expect((await tokenBalance(chainB, pusdB, recipient)) - recipientBefore).toBe(
      BigInt(quote.details!.currencyOut!.amount!),
    );
    expect(await publicClientOf(chainA).getBalance({ address: user.address })).toBe(0n);
    expect(await tokenBalance(chainA, pusdA, user.address)).toBe(parseUnits('5', 6));

    const requestId = quote.steps[0]!.requestId! as Hex;
    const { body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    expect(body).toMatchObject({ status: 'success' });
    const depositTx = await publicClientOf(chainA).getTransaction({ hash: body.inTxHashes![0] as Hex });
    expect(depositTx.from.toLowerCase()).toBe(gateway.devnet.descriptor.solver.address.toLowerCase());
    expect(depositTx.to?.toLowerCase()).toBe(chainA.contracts.approvalProxy.toLowerCase());
  });
});
