/**
 * The two ways the pools move against a destination DEX fill, on anvil: a large swap between the quote and the
 * deposit (the fill's re-price on live pool state refunds `SLIPPAGE` before anything is sent on the destination),
 * and a swap landing ahead of the fill in the fill's own block, a sandwich's front leg (the router reverts the fill
 * on the order's minimum, the request is refunded, and the solver loses only the fill's gas).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClient, createWalletClient, http, parseEther, zeroAddress, type Address, type Hex } from 'viem';
import { privateKeyToAccount, privateKeyToAddress } from 'viem/accounts';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { uniswapV2Router02Abi } from '../../src/core/dex/routerCalls.js';
import { balanceOf, filledEvents } from '../helpers/chainReads.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus } from '../helpers/quote.js';

let gateway: TestGateway;
let chainB: DevnetChain;

beforeAll(async () => {
  gateway = await startTestGateway();
  chainB = gateway.devnet.descriptor.chains[1]!;
}, 240_000);
afterAll(async () => {
  await gateway?.stop();
});

const token = (chain: DevnetChain, symbol: string): Address =>
  [...chain.tokens, ...chain.longTailTokens].find((t) => t.symbol === symbol)!.address;
const fresh = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;
const solver = () => privateKeyToAddress(gateway.devnet.descriptor.solver.privateKey);

/** Buys LONG with `eth` through B's v2 pair, as a trader (or an attacker) would; a high tip when it must go first. */
async function buyLong(trader: DevnetAccount, eth: bigint, tip?: bigint): Promise<Hex> {
  const wallet = createWalletClient({
    account: privateKeyToAccount(trader.privateKey),
    chain: devnetViemChain(chainB),
    transport: http(chainB.rpcUrl),
  });
  return wallet.writeContract({
    address: chainB.dex.uniswapV2.router,
    abi: uniswapV2Router02Abi,
    functionName: 'swapExactETHForTokens',
    args: [0n, [token(chainB, 'WETH'), token(chainB, 'LONG')], trader.address, 2n ** 40n],
    value: eth,
    ...(tip === undefined ? {} : { gas: 200_000n, maxFeePerGas: 2n * tip, maxPriorityFeePerGas: tip }),
  });
}

async function quoteLong(user: DevnetAccount, recipient: Address) {
  return requestQuote(gateway, user, {
    originCurrency: zeroAddress,
    destinationCurrency: token(chainB, 'LONG'),
    amount: parseEther('0.5').toString(),
    recipient,
    includedSwapSources: ['uniswap-v2'],
  });
}

const failReasonOf = async (requestId: string) =>
  (
    await gateway.server.database.db
      .selectFrom('requests')
      .select('fail_reason')
      .where('id', '=', requestId.toLowerCase())
      .executeTakeFirstOrThrow()
  ).fail_reason;

describe('pools moved against a destination DEX fill', () => {
  it('a large swap between quote and deposit: refunded SLIPPAGE, nothing sent on the destination', async () => {
    const [user, , trader] = gateway.devnet.descriptor.accounts;
    const recipient = fresh(0x43_a001);
    const quote = await quoteLong(user!, recipient);
    expect(quote.details.route.destination.router).toBe('uniswap-v2');
    const requestId = quote.steps.at(-1)!.requestId;
    const { db } = gateway.server.database;
    const row = await db.selectFrom('requests').select('quote').where('id', '=', requestId).executeTakeFirstOrThrow();
    expect((row.quote as any).dex.destination.router.toLowerCase()).toBe(chainB.dex.uniswapV2.router.toLowerCase());

    const receipt = await publicClientOf(chainB).waitForTransactionReceipt({
      hash: await buyLong(trader!, parseEther('5')),
    });
    expect(receipt.status).toBe('success');
    const solverBefore = await balanceOf(chainB, zeroAddress, solver());
    await executeSteps(gateway, quote.steps, user!);
    const status = await waitForStatus(gateway, requestId, ['refund', 'success', 'failure']);
    expect(status.status).toBe('refund');
    expect(await failReasonOf(requestId)).toBe('SLIPPAGE');
    expect(await filledEvents(chainB, requestId)).toHaveLength(0);
    expect(await balanceOf(chainB, zeroAddress, solver())).toBe(solverBefore);
    expect(await balanceOf(chainB, token(chainB, 'LONG'), recipient)).toBe(0n);
  });

  it('a swap ahead of the fill in its block: the fill reverts on its minimum, refunded, the solver loses only gas', async () => {
    const [, user, , trader] = gateway.devnet.descriptor.accounts;
    const recipient = fresh(0x43_a002);
    const quote = await quoteLong(user!, recipient);
    const requestId = quote.steps.at(-1)!.requestId;
    const testB = createTestClient({ mode: 'anvil', transport: http(chainB.rpcUrl) });
    const solverBefore = await balanceOf(chainB, zeroAddress, solver());
    await testB.setAutomine(false);
    let fillHash: Hex;
    try {
      await executeSteps(gateway, quote.steps, user!);
      for (;;) {
        const row = await gateway.server.core.db
          .selectFrom('outgoing_txs')
          .select('hashes')
          .where('request_id', '=', requestId.toLowerCase())
          .where('kind', '=', 'fill')
          .executeTakeFirst();
        if (row !== undefined && row.hashes.length > 0) {
          fillHash = row.hashes.at(-1) as Hex;
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const front = await buyLong(trader!, parseEther('5'), 100_000_000_000n);
      await testB.mine({ blocks: 1 });
      const [frontReceipt, fillReceipt] = await Promise.all([
        publicClientOf(chainB).getTransactionReceipt({ hash: front }),
        publicClientOf(chainB).getTransactionReceipt({ hash: fillHash }),
      ]);
      expect(frontReceipt.status).toBe('success');
      expect(fillReceipt.blockNumber).toBe(frontReceipt.blockNumber);
      expect(fillReceipt.transactionIndex).toBeGreaterThan(frontReceipt.transactionIndex);
      expect(fillReceipt.status).toBe('reverted');
    } finally {
      await testB.setAutomine(true);
    }
    const status = await waitForStatus(gateway, requestId, ['refund', 'success']);
    expect(status.status).toBe('refund');
    expect(await failReasonOf(requestId)).toBe('TRANSACTION_REVERTED');
    const fillReceipt = await publicClientOf(chainB).getTransactionReceipt({ hash: fillHash! });
    expect(solverBefore - (await balanceOf(chainB, zeroAddress, solver()))).toBe(
      fillReceipt.gasUsed * fillReceipt.effectiveGasPrice,
    );
    expect(await balanceOf(chainB, token(chainB, 'LONG'), recipient)).toBe(0n);
  });
});
