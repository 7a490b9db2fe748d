/**
 * Inventory on the devnet: `GET /admin/inventory` reports the solver's balances as the chains hold them, less
 * what fills in flight will take, and a rebalancing plan from configured targets; a quote whose output the
 * available inventory (not the on-chain balance) cannot cover is refused `INSUFFICIENT_LIQUIDITY`.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zeroAddress } from 'viem';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { planRebalance, type InventoryLine } from '../../src/core/inventory/inventory.js';
import { insertRequest, updateRequestStatus } from '../../src/store/requests.repository.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { tokenOf } from '../helpers/quote.js';
import { newRequest } from '../store/requestFixture.js';
import { balanceOf } from '../helpers/chainReads.js';

const adminToken = 'inventory-admin-token-0123456789';
const bearer = { authorization: `Bearer ${adminToken}` };
let gateway: TestGateway;
let chains: DevnetChain[];
let alice: DevnetAccount;

beforeAll(async () => {
  gateway = await startTestGateway(
    { adminToken },
    {
      configure: (config, devnet) => ({
        ...config,
        // The first chain should hold 80% of each currency: it is short, the others give.
        inventory: {
          targetBps: new Map(devnet.descriptor.chains.map((chain, i) => [chain.chainId, i === 0 ? 8_000 : 1_000])),
          thresholdBps: 9_000,
        },
      }),
    },
  );
  chains = gateway.devnet.descriptor.chains;
  [alice] = gateway.devnet.descriptor.accounts as [DevnetAccount];
});
afterAll(async () => {
  await gateway?.stop();
});

describe('inventory', () => {
  it('needs the admin token', async () => {
    expect((await call(gateway.url, 'getInventory')).status).toBe(401);
  });

  it('reports each chain’s balances and a plan that brings the short chain to its target', async () => {
    const { status, body } = await call(gateway.url, 'getInventory', { headers: bearer });
    expect(status).toBe(200);
    const solver = gateway.devnet.descriptor.solver.address;
    for (const chain of chains) {
      const usdc = tokenOf(chain, 'USDC');
      const line = body.inventory.find(
        (l: { chainId: number; currency: string }) => l.chainId === chain.chainId && l.currency === usdc,
      );
      const onChain = await balanceOf(chain, usdc, solver);
      expect(line).toMatchObject({ onChain: String(onChain), committed: '0', available: String(onChain) });
    }
    const usdcShort = body.short.filter((s: { group: string }) => s.group === 'usdc');
    expect(usdcShort.map((s: { chainId: number }) => s.chainId)).toEqual([chains[0]!.chainId]);
    const moves = body.plan.filter((m: { group: string }) => m.group === 'usdc');
    expect(moves.length).toBeGreaterThan(0);
    for (const move of moves) expect(move.to.chainId).toBe(chains[0]!.chainId);
    const moved = moves.reduce((sum: bigint, m: { amount: string }) => sum + BigInt(m.amount), 0n);
    expect(moved).toBe(BigInt(usdcShort[0].shortBy));
  });

  it('prints the same through the CLI (npm run inventory)', async () => {
    const { stdout } = await promisify(execFile)('npx', ['tsx', 'src/server/inventoryCli.ts', gateway.url], {
      env: { ...process.env, GATEWAY_ADMIN_TOKEN: adminToken },
    });
    const rows = stdout.split('\n');
    for (const chain of chains)
      expect(rows.some((row) => row.startsWith(`${chain.chainId}`) && row.includes('USDC'))).toBe(true);
    expect(rows.some((row) => row.startsWith(`short: usdc on ${chains[0]!.chainId}`))).toBe(true);
    expect(rows.some((row) => row.startsWith('move: ') && row.endsWith(`to ${chains[0]!.chainId}`))).toBe(true);
  });

  it('refuses a quote the available inventory cannot cover, though the chain holds enough', async () => {
    const [chainA, chainB] = chains as [DevnetChain, DevnetChain];
    const usdcB = tokenOf(chainB, 'USDC');
    const solverHolds = await balanceOf(chainB, usdcB, gateway.devnet.descriptor.solver.address);
    const quote = () =>
      call(gateway.url, 'getQuote', {
        body: {
          user: alice.address,
          originChainId: chainA.chainId,
          destinationChainId: chainB.chainId,
          originCurrency: tokenOf(chainA, 'USDC'),
          destinationCurrency: usdcB,
          amount: '25000000',
          tradeType: 'EXACT_INPUT',
        },
      });
    expect((await quote()).status).toBe(200);
    // A fill in flight that will take all but 1 USDC of the solver's USDC on B: a request moved to `pending` as
    // the solver moves one when it claims its deposit (stored directly: the test needs it to stay in flight).
    const inFlight = await insertRequest(
      gateway.server.database.db,
      newRequest({
        originChainId: chainA.chainId,
        destinationChainId: chainB.chainId,
        destinationCurrency: usdcB,
        amountOut: solverHolds - 1_000_000n,
        minAmountOut: solverHolds - 1_000_000n,
        createdAt: Date.now(),
      }),
    );
    await updateRequestStatus(gateway.server.database.db, inFlight.id, {
      status: 'pending',
      fromStatus: 'waiting',
      now: Date.now(),
    });
    const report = await call(gateway.url, 'getInventory', { headers: bearer });
    expect(
      report.body.inventory.find(
        (l: { chainId: number; currency: string }) => l.chainId === chainB.chainId && l.currency === usdcB,
      ),
    ).toMatchObject({
      onChain: String(solverHolds),
      committed: String(solverHolds - 1_000_000n),
      available: '1000000',
    });
    // Quotes read the committed amounts at most a second old: the next second's quote sees the fill in flight.
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const refused = await quote();
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ errorCode: 'INSUFFICIENT_LIQUIDITY', errorData: 'available=1000000' });
  });
});

describe('planRebalance', () => {
  const line = (chainId: number, available: bigint, decimals = 6): InventoryLine => ({
    chainId,
    currency: zeroAddress,
    group: 'usdc',
    symbol: 'USDC',
    decimals,
    onChain: available,
    committed: 0n,
    available,
    pendingSettlement: 0n,
    ledger: 0n,
  });

  it('fills a short chain from the largest surpluses, across decimals', () => {
    const { short, plan } = planRebalance(
      [line(1, 10n * 10n ** 6n), line(2, 50n * 10n ** 18n, 18), line(3, 30n * 10n ** 6n)],
      {
        targetBps: new Map(),
        thresholdBps: 5_000,
      },
    );
    // Total 90, target 30 each: chain 1 (10 < 15) is short by 20, taken from chain 2's surplus of 20.
    expect(short).toEqual([
      { group: 'usdc', chainId: 1, currency: zeroAddress, target: 30_000_000n, shortBy: 20_000_000n },
    ]);
    expect(plan).toEqual([
      {
        group: 'usdc',
        from: { chainId: 2, currency: zeroAddress },
        to: { chainId: 1, currency: zeroAddress },
        amount: 20n * 10n ** 18n,
      },
    ]);
  });

  it('plans nothing when every chain is above its threshold', () => {
    expect(planRebalance([line(1, 20n), line(2, 30n)], { targetBps: new Map(), thresholdBps: 5_000 })).toEqual({
      short: [],
      plan: [],
    });
  });
});
