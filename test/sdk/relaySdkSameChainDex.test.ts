/**
 * The unmodified reference SDK (`@relayprotocol/relay-sdk`) swapping USDC for LONG on one chain through the
 * gateway's same-chain DEX quote: it sends the approval and the router call as quoted, posts the swap to
 * `/transactions/single` and completes on the receipt; the gateway then marks the request `success`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, http, parseUnits, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { getClient, type ProgressData } from '@relayprotocol/relay-sdk';
import { devnetViemChain, type DevnetChain } from '../../src/chain/devnet.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { configureRelaySdk } from '../helpers/relaySdk.js';
import { tokenOf, waitForStatus } from '../helpers/quote.js';
import { balanceOf } from '../helpers/chainReads.js';

let gateway: TestGateway;
let chainA: DevnetChain;

beforeAll(async () => {
  gateway = await startTestGateway();
  chainA = gateway.devnet.descriptor.chains[0]!;
  configureRelaySdk(gateway);
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

describe('@relayprotocol/relay-sdk, same-chain DEX swap', () => {
  it('swaps USDC for LONG on 31337 (approve, then swap) and the request ends in success', async () => {
    const account = gateway.devnet.descriptor.accounts[0]!;
    const recipient: Address = '0x00000000000000000000000000000000005ade01';
    const long = chainA.longTailTokens.find((t) => t.symbol === 'LONG')!.address;
    const wallet = createWalletClient({
      account: privateKeyToAccount(account.privateKey),
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    });
    const quote = await getClient().actions.getQuote(
      {
        chainId: chainA.chainId,
        toChainId: chainA.chainId,
        currency: tokenOf(chainA, 'USDC'),
        toCurrency: long,
        amount: parseUnits('40', 6).toString(),
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
      },
      true,
    );
    expect(quote.steps?.map((step) => step.id)).toEqual(['approve', 'swap']);
    const progress: ProgressData[] = [];
    const { data: result } = await getClient().actions.execute({
      quote,
      wallet,
      onProgress: (data) => progress.push(data),
    });
    for (const item of result.steps.flatMap((step) => step.items ?? [])) expect(item.status).toBe('complete');
    expect(await balanceOf(chainA, long, recipient)).toBe(BigInt(quote.details!.currencyOut!.amount!));

    const requestId = result.steps.at(-1)!.requestId!;
    const status = await waitForStatus(gateway, requestId, ['success', 'failure']);
    expect(status.status).toBe('success');
    expect(status.txHashes).toHaveLength(1);
    const swapTx = result.steps.at(-1)!.items[0]!.txHashes?.[0]?.txHash ?? status.txHashes[0];
    expect(status.txHashes[0]).toBe(swapTx);
  });
});
