/**
 * The ledger's reconciliation over swaps through the devnet's Uniswap pools: destination DEX fills (ETH on A to LONG
 * on B, and USDC on A to LONG on B, the solver's ETH or USDC on B sent through the public multicaller into B's
 * pools), an origin swap (the user's LONG on A swapped into the ETH their own transaction deposits) and a same-chain
 * swap (the user's own router call on A, which moves no solver money). After them and their settlement, every
 * currency's entries sum to zero, a DEX fill books what left the solver (its entry currency as `fill_paid`, its gas as
 * `gas_spent`), never the LONG the pools delivered, and the reconciler reports no drift on either chain. The same
 * after the two ways the pools refund a DEX fill: moved before the deposit (`SLIPPAGE`, nothing sent on B) and moved
 * ahead of the fill in its block (the fill reverts on its minimum: only its gas left the solver on B).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestClient,
  createWalletClient,
  http,
  parseEther,
  parseUnits,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { uniswapV2Router02Abi } from '../../src/core/dex/routerCalls.js';
import { ledgerImbalances, listLedgerEntries } from '../../src/store/ledger.repository.js';
import { balanceOf, filledEvents } from '../helpers/chainReads.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerReconciled } from '../helpers/ledger.js';
import {
  executeSteps,
  publicClientOf,
  requestQuote,
  tokenOf,
  waitForStatus,
  type WireQuote,
} from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let accounts: DevnetAccount[];

beforeAll(async () => {
  // Settlement only when the test asks for it, so the ledger is compared after every release is booked.
  gateway = await startTestGateway({ settlement: { intervalMs: 3_600_000, maxBatch: 50 } });
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  accounts = gateway.devnet.descriptor.accounts;
}, 240_000);
afterAll(async () => {
  await gateway?.stop();
});

const long = (chain: DevnetChain): Address => chain.longTailTokens.find((t) => t.symbol === 'LONG')!.address;
const fresh = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;
const solver = () => gateway.devnet.descriptor.solver.address;
const requestIdOf = (quote: WireQuote): Hex => quote.steps.at(-1)!.requestId;

/** The solver's `fill_paid` and `gas_spent` entries of a request. */
async function solverEntriesOf(requestId: Hex) {
  const entries = await listLedgerEntries(gateway.server.database.db, { requestId, account: 'solver' });
  return entries.map((entry) => ({
    kind: entry.kind,
    chainId: entry.chainId,
    currency: entry.currency,
    amount: entry.amount,
  }));
}

describe('ledger reconciliation over DEX swaps', () => {
  it('reports no drift on either chain after destination DEX fills, an origin swap and a same-chain swap', async () => {
    const [alice, bob, carol] = accounts as [DevnetAccount, DevnetAccount, DevnetAccount];
    const solverBefore = {
      longA: await balanceOf(chainA, long(chainA), solver()),
      longB: await balanceOf(chainB, long(chainB), solver()),
    };

    // Destination DEX fills: ETH(A) → LONG(B) entered with the solver's ETH on B, USDC(A) → LONG(B) with its USDC.
    const ethRecipient = fresh(0xdc_0001);
    const viaEth = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: long(chainB),
      amount: parseEther('0.3').toString(),
      recipient: ethRecipient,
    });
    expect(viaEth.details.route.destination.inputCurrency.currency.address).toBe(zeroAddress);
    await executeSteps(gateway, viaEth.steps, alice);
    expect((await waitForStatus(gateway, requestIdOf(viaEth), ['success', 'failure', 'refund'])).status).toBe(
      'success',
    );
    expect(await balanceOf(chainB, long(chainB), ethRecipient)).toBe(BigInt(viaEth.details.currencyOut.amount));

    const usdcRecipient = fresh(0xdc_0002);
    const viaUsdc = await requestQuote(gateway, bob, {
      originCurrency: tokenOf(chainA, 'USDC'),
      destinationCurrency: long(chainB),
      amount: parseUnits('300', 6).toString(),
      recipient: usdcRecipient,
    });
    expect(viaUsdc.details.route.destination.inputCurrency.currency.address).toBe(tokenOf(chainB, 'USDC'));
    await executeSteps(gateway, viaUsdc.steps, bob);
    expect((await waitForStatus(gateway, requestIdOf(viaUsdc), ['success', 'failure', 'refund'])).status).toBe(
      'success',
    );
    expect(await balanceOf(chainB, long(chainB), usdcRecipient)).toBe(BigInt(viaUsdc.details.currencyOut.amount));

    // An origin swap: carol's LONG on A goes through A's pools into the ETH her own transaction deposits; the
    // solver fills ETH on B from its inventory.
    const originRecipient = fresh(0xdc_0003);
    const viaOrigin = await requestQuote(gateway, carol, {
      originCurrency: long(chainA),
      destinationCurrency: zeroAddress,
      amount: parseEther('100').toString(),
      recipient: originRecipient,
    });
    expect(viaOrigin.details.route.origin.router).toMatch(/^uniswap-v[23]$/);
    await executeSteps(gateway, viaOrigin.steps, carol);
    expect((await waitForStatus(gateway, requestIdOf(viaOrigin), ['success', 'failure', 'refund'])).status).toBe(
      'success',
    );
    expect(await balanceOf(chainB, zeroAddress, originRecipient)).toBe(BigInt(viaOrigin.details.currencyOut.amount));

    // A same-chain swap on A: alice's own router call, no deposit and no fill.
    const sameChainRecipient = fresh(0xdc_0004);
    const sameChain = await requestQuote(gateway, alice, {
      originChainId: chainA.chainId,
      destinationChainId: chainA.chainId,
      originCurrency: zeroAddress,
      destinationCurrency: long(chainA),
      amount: parseEther('0.2').toString(),
      recipient: sameChainRecipient,
    });
    expect(sameChain.steps.map((step) => step.id)).toEqual(['swap']);
    const swap = [...(await executeSteps(gateway, sameChain.steps, alice)).values()].at(-1)!;
    const indexed = await call(gateway.url, 'indexSingleTransaction', {
      body: {
        requestId: requestIdOf(sameChain),
        chainId: String(chainA.chainId),
        tx: JSON.stringify({ txHash: swap.transactionHash, chainId: chainA.chainId }),
      },
    });
    expect(indexed.status, JSON.stringify(indexed.body)).toBe(200);
    expect((await waitForStatus(gateway, requestIdOf(sameChain), ['success', 'failure'])).status).toBe('success');
    expect(await balanceOf(chainA, long(chainA), sameChainRecipient)).toBe(
      BigInt(sameChain.details.currencyOut.amount),
    );

    // The deposits go back to the solver, so their releases are in the ledger too.
    await gateway.server.solver!.solver.idle();
    await gateway.server.solver!.settler.settleNow();

    // What each DEX fill booked from the solver's wallet on B: its entry currency and amount, and the fill's gas.
    for (const quote of [viaEth, viaUsdc]) {
      const requestId = requestIdOf(quote);
      const leg = quote.details.route.destination;
      const [filled] = await filledEvents(chainB, requestId);
      const receipt = await publicClientOf(chainB).getTransactionReceipt({ hash: filled!.transactionHash });
      const entries = (await solverEntriesOf(requestId)).filter((entry) => entry.chainId === chainB.chainId);
      expect(entries.filter((entry) => entry.kind === 'fill_paid')).toEqual([
        {
          kind: 'fill_paid',
          chainId: chainB.chainId,
          currency: leg.inputCurrency.currency.address.toLowerCase(),
          amount: -BigInt(leg.inputCurrency.amount),
        },
      ]);
      expect(entries.filter((entry) => entry.kind === 'gas_spent')).toEqual([
        {
          kind: 'gas_spent',
          chainId: chainB.chainId,
          currency: zeroAddress,
          amount: -(receipt.gasUsed * receipt.effectiveGasPrice),
        },
      ]);
    }
    // Each deposit on A was released to the solver by the settlement, and booked so.
    for (const quote of [viaEth, viaUsdc, viaOrigin]) {
      const settled = (await solverEntriesOf(requestIdOf(quote))).filter((entry) => entry.kind === 'settlement');
      expect(settled).toHaveLength(1);
      expect(settled[0]).toMatchObject({ chainId: chainA.chainId });
      expect(settled[0]!.amount).toBeGreaterThan(0n);
    }
    // The same-chain swap moved no solver money and booked nothing.
    expect(await listLedgerEntries(gateway.server.database.db, { requestId: requestIdOf(sameChain) })).toEqual([]);
    // The solver never held LONG, on either chain.
    expect(await balanceOf(chainA, long(chainA), solver())).toBe(solverBefore.longA);
    expect(await balanceOf(chainB, long(chainB), solver())).toBe(solverBefore.longB);

    expect(await ledgerImbalances(gateway.server.database.db)).toEqual({ currencies: [], movements: [] });
    await expectLedgerReconciled(gateway);
  });

  it('reports no drift after DEX fills refunded for slippage and reverted on their minimum', async () => {
    const [, , , dave] = accounts as [DevnetAccount, DevnetAccount, DevnetAccount, DevnetAccount];
    const trader = accounts[2]!;
    const quoteLong = (user: DevnetAccount, recipient: Address) =>
      requestQuote(gateway, user, {
        originCurrency: zeroAddress,
        destinationCurrency: long(chainB),
        amount: parseEther('0.5').toString(),
        recipient,
        includedSwapSources: ['uniswap-v2'],
      });
    /** Buys LONG with `eth` through B's v2 pair, as a trader would; with a high tip when it must go first. */
    const buyLong = (eth: bigint, tip?: bigint) =>
      createWalletClient({
        account: privateKeyToAccount(trader.privateKey),
        chain: devnetViemChain(chainB),
        transport: http(chainB.rpcUrl),
      }).writeContract({
        address: chainB.dex.uniswapV2.router,
        abi: uniswapV2Router02Abi,
        functionName: 'swapExactETHForTokens',
        args: [0n, [tokenOf(chainB, 'WETH'), long(chainB)], trader.address, 2n ** 40n],
        value: eth,
        ...(tip === undefined ? {} : { gas: 200_000n, maxFeePerGas: 2n * tip, maxPriorityFeePerGas: tip }),
      });

    // The pools move between the quote and the deposit: refunded SLIPPAGE, nothing sent on B.
    const moved = await quoteLong(dave, fresh(0xdc_0101));
    await publicClientOf(chainB).waitForTransactionReceipt({ hash: await buyLong(parseEther('5')) });
    await executeSteps(gateway, moved.steps, dave);
    expect((await waitForStatus(gateway, requestIdOf(moved), ['success', 'failure', 'refund'])).status).toBe('refund');
    expect(await filledEvents(chainB, requestIdOf(moved))).toHaveLength(0);

    // A swap lands ahead of the fill in its block: the router reverts the fill on the order's minimum.
    const sandwiched = await quoteLong(dave, fresh(0xdc_0102));
    const requestId = requestIdOf(sandwiched);
    const testB = createTestClient({ mode: 'anvil', transport: http(chainB.rpcUrl) });
    let fillHash: Hex | undefined;
    await testB.setAutomine(false);
    try {
      await executeSteps(gateway, sandwiched.steps, dave);
      while (fillHash === undefined) {
        const row = await gateway.server.core.db
          .selectFrom('outgoing_txs')
          .select('hashes')
          .where('request_id', '=', requestId.toLowerCase())
          .where('kind', '=', 'fill')
          .executeTakeFirst();
        fillHash = row?.hashes.at(-1) as Hex | undefined;
        if (fillHash === undefined) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await buyLong(parseEther('5'), 100_000_000_000n);
      await testB.mine({ blocks: 1 });
    } finally {
      await testB.setAutomine(true);
    }
    const fillReceipt = await publicClientOf(chainB).getTransactionReceipt({ hash: fillHash });
    expect(fillReceipt.status).toBe('reverted');
    expect((await waitForStatus(gateway, requestId, ['refund', 'success'])).status).toBe('refund');
    await gateway.server.solver!.solver.idle();

    // On B the reverted fill booked its gas and nothing else: no entry currency left the solver.
    const onB = (await solverEntriesOf(requestId)).filter((entry) => entry.chainId === chainB.chainId);
    expect(onB).toEqual([
      {
        kind: 'gas_spent',
        chainId: chainB.chainId,
        currency: zeroAddress,
        amount: -(fillReceipt.gasUsed * fillReceipt.effectiveGasPrice),
      },
    ]);
    expect(await ledgerImbalances(gateway.server.database.db)).toEqual({ currencies: [], movements: [] });
    await expectLedgerReconciled(gateway);
  });
});
