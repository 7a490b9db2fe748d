/**
 * Cross-chain swaps into a token the solver does not hold (LONG on B), filled by buying it through B's pools inside
 * the fill: over REST end to end (ETH and USDC in), with the recipient receiving exactly the quoted output when
 * nothing moved, the solver spending only its entry currency, and the unmodified reference SDK completing one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, http, parseEther, zeroAddress, type Address } from 'viem';
import { privateKeyToAccount, privateKeyToAddress } from 'viem/accounts';
import { getClient } from '@relayprotocol/relay-sdk';
import { devnetViemChain, type DevnetChain } from '../../src/chain/devnet.js';
import { balanceOf, filledEvents } from '../helpers/chainReads.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { configureRelaySdk } from '../helpers/relaySdk.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  configureRelaySdk(gateway);
}, 240_000);
afterAll(async () => {
  await gateway?.stop();
});

const token = (chain: DevnetChain, symbol: string): Address =>
  [...chain.tokens, ...chain.longTailTokens].find((t) => t.symbol === symbol)!.address;
const fresh = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;
const solver = () => privateKeyToAddress(gateway.devnet.descriptor.solver.privateKey);

describe('destination DEX fills', () => {
  it('ETH(A) → LONG(B): the recipient receives exactly the quoted LONG; the solver spends its ETH on B', async () => {
    const user = gateway.devnet.descriptor.accounts[0]!;
    const recipient = fresh(0x43_0001);
    const long = token(chainB, 'LONG');
    const quote = await requestQuote(gateway, user, {
      originCurrency: zeroAddress,
      destinationCurrency: long,
      amount: parseEther('0.5').toString(),
      recipient,
    });
    const requestId = quote.steps.at(-1)!.requestId;
    const leg = quote.details.route.destination;
    expect(leg.inputCurrency.currency.address).toBe(zeroAddress);
    const solverEthBefore = await balanceOf(chainB, zeroAddress, solver());
    await executeSteps(gateway, quote.steps, user);
    const status = await waitForStatus(gateway, requestId, ['success', 'failure', 'refund']);
    expect(status.status).toBe('success');
    expect(await balanceOf(chainB, long, recipient)).toBe(BigInt(quote.details.currencyOut.amount));
    expect(await balanceOf(chainB, long, solver())).toBe(0n);
    const { body: record } = await call(gateway.url, 'getRequests', { query: { id: requestId } });
    expect(JSON.stringify(record)).toContain(`"router":"${leg.router}"`);
    // What left the solver on B: the entry amount and the fill's gas.
    const [filled] = await filledEvents(chainB, requestId);
    const receipt = await publicClientOf(chainB).getTransactionReceipt({ hash: filled!.transactionHash });
    const gas = receipt.gasUsed * receipt.effectiveGasPrice;
    expect(solverEthBefore - (await balanceOf(chainB, zeroAddress, solver()))).toBe(
      BigInt(leg.inputCurrency.amount) + gas,
    );
    const { db } = gateway.server.database;
    const row = await db.selectFrom('requests').select('quote').where('id', '=', requestId).executeTakeFirstOrThrow();
    expect((row.quote as any).dex.destination).toMatchObject({ nativeIn: true, amountIn: leg.inputCurrency.amount });
    // The ledger books what left the solver on B: its ETH, not the LONG the pools delivered.
    const paid = await db
      .selectFrom('ledger_entries')
      .select(['currency', 'amount', 'account'])
      .where('request_id', '=', requestId)
      .where('kind', '=', 'fill_paid')
      .execute();
    expect(paid.length).toBeGreaterThan(0);
    for (const entry of paid) {
      expect(entry.currency).toBe(zeroAddress);
      expect(
        BigInt(entry.amount) === BigInt(leg.inputCurrency.amount) ||
          BigInt(entry.amount) === -BigInt(leg.inputCurrency.amount),
      ).toBe(true);
    }
  });

  it('USDC(A) → LONG(B): entered with the solver USDC on B, delivered exactly', async () => {
    const user = gateway.devnet.descriptor.accounts[1]!;
    const recipient = fresh(0x43_0002);
    const long = token(chainB, 'LONG');
    const usdcB = token(chainB, 'USDC');
    const quote = await requestQuote(gateway, user, {
      originCurrency: token(chainA, 'USDC'),
      destinationCurrency: long,
      amount: '500000000',
      recipient,
    });
    expect(quote.details.route.destination.inputCurrency.currency.address).toBe(usdcB);
    const usdcBefore = await balanceOf(chainB, usdcB, solver());
    const requestId = quote.steps.at(-1)!.requestId;
    await executeSteps(gateway, quote.steps, user);
    const status = await waitForStatus(gateway, requestId, ['success', 'failure', 'refund']);
    expect(status.status).toBe('success');
    expect(await balanceOf(chainB, long, recipient)).toBe(BigInt(quote.details.currencyOut.amount));
    expect(usdcBefore - (await balanceOf(chainB, usdcB, solver()))).toBe(
      BigInt(quote.details.route.destination.inputCurrency.amount),
    );
  });

  it('the unmodified reference SDK completes ETH(A) → LONG(B)', async () => {
    const account = gateway.devnet.descriptor.accounts[2]!;
    const recipient = fresh(0x43_0003);
    const long = token(chainB, 'LONG');
    const wallet = createWalletClient({
      account: privateKeyToAccount(account.privateKey),
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    });
    const quote = await getClient().actions.getQuote(
      {
        chainId: chainA.chainId,
        toChainId: chainB.chainId,
        currency: zeroAddress,
        toCurrency: long,
        amount: parseEther('0.2').toString(),
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient,
      },
      true,
    );
    const { data: result } = await getClient().actions.execute({ quote, wallet, onProgress: () => undefined });
    for (const item of result.steps.flatMap((step) => step.items ?? [])) expect(item.status).toBe('complete');
    expect(await balanceOf(chainB, long, recipient)).toBe(BigInt(quote.details!.currencyOut!.amount!));
  });
});
