/**
 * The ledger's reconciliation with the chains, on the devnet and from outside: the job takes each chain's
 * opening balance when the solver starts; after bridges, their settlement and an app-fee claim, the drift it
 * reports (`GET /admin/inventory`, `/metrics`, `npm run inventory`) is 0 for every chain and currency; a USDC
 * transfer signed with the solver's key behind the gateway's back then shows as exactly that drift (and its gas
 * as the native currency's), and a transaction the database holds as broadcast whose nonce the chain has used is
 * in flight, not drift.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, erc20Abi, http, parseEther, zeroAddress, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { createSolverStateReader } from '../../src/chain/solverState.js';
import { createReconciler } from '../../src/core/reconciliation/reconciler.js';
import { ledgerImbalances, listLedgerEntries } from '../../src/store/ledger.repository.js';
import { insertOutgoingTx } from '../../src/store/outgoingTxs.repository.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';

const adminToken = 'reconciliation-admin-token-0123456789';
const bearer = { authorization: `Bearer ${adminToken}` };
const appAccount = privateKeyToAccount(generatePrivateKey());
const claimRecipient = '0x00000000000000000000000000000000c1a1e002' as Address;
const outsider = '0x00000000000000000000000000000000bac4d00e' as Address;

interface Check {
  chainId: number;
  currency: string;
  onChain: string;
  ledger: string;
  incoming: string;
  drift: string;
  checkedAt: number;
  inFlightAt: number | null;
}

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;

beforeAll(async () => {
  gateway = await startTestGateway({
    adminToken,
    // Short intervals, so the test sees the jobs run on their own.
    settlement: { intervalMs: 1_000, maxBatch: 50 },
    reconciliation: { intervalMs: 1_000 },
  });
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [alice] = gateway.devnet.descriptor.accounts as [DevnetAccount];
});
afterAll(async () => {
  await gateway?.stop();
});

const inventory = async () => {
  const { status, body } = await call(gateway.url, 'getInventory', { headers: bearer });
  expect(status).toBe(200);
  return body as { inventory: Array<Record<string, any>>; reconciliation: Check[] };
};

/** Polls `GET /admin/inventory` until every chain was compared (not in flight) after `since`. */
async function checkedAfter(since: number): Promise<Check[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const { reconciliation } = await inventory();
    if (
      reconciliation.length > 0 &&
      reconciliation.every((check) => check.checkedAt > since && check.inFlightAt === null)
    )
      return reconciliation;
    if (Date.now() > deadline)
      throw new Error(`no settled reconciliation after ${since}: ${JSON.stringify(reconciliation)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

async function until(what: string, condition: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const metric = async (chainId: number, symbol: string): Promise<number | undefined> => {
  const text = await (await fetch(`${gateway.url}/metrics`)).text();
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`gateway_ledger_drift{chain_id="${chainId}",currency="${symbol}"}`));
  return line === undefined ? undefined : Number(line.split(' ').at(-1));
};

describe('ledger reconciliation', () => {
  it('opens each chain and currency once, from the balance on chain when the solver starts', async () => {
    const entries = await listLedgerEntries(gateway.server.database.db, { account: 'solver' });
    const openings = entries.filter((entry) => entry.kind === 'opening');
    const currencies = gateway.config.chains.flatMap((chain) => [
      `${chain.id}:${zeroAddress}`,
      ...chain.currencies.map((currency) => `${chain.id}:${currency.address.toLowerCase()}`),
    ]);
    expect(openings.map((entry) => `${entry.chainId}:${entry.currency}`).sort()).toEqual([...currencies].sort());
    const usdcB = tokenOf(chainB, 'USDC');
    const opening = openings.find(
      (entry) => entry.chainId === chainB.chainId && entry.currency === usdcB.toLowerCase(),
    );
    // The devnet mints 10,000,000 USDC to the solver; $1 each.
    expect(opening).toMatchObject({ amount: 10_000_000_000_000n, usdMicros: 10_000_000_000_000n });
  });

  it('reports no drift after bridges, their settlement and a claim', async () => {
    const usdcA = tokenOf(chainA, 'USDC');
    const usdcB = tokenOf(chainB, 'USDC');
    const native = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.02').toString(),
    });
    await executeSteps(gateway, native.steps, alice);
    const withAppFee = await requestQuote(gateway, alice, {
      originCurrency: usdcA,
      destinationCurrency: usdcB,
      amount: '25000000',
      appFees: [{ recipient: appAccount.address, fee: '100' }],
    });
    await executeSteps(gateway, withAppFee.steps, alice);
    await waitForStatus(gateway, native.steps.at(-1)!.requestId, ['success']);
    await waitForStatus(gateway, withAppFee.steps.at(-1)!.requestId, ['success']);
    // Settlement returns the deposits to the solver on its own interval.
    await until('settlement', async () =>
      (await inventory()).inventory.every((line) => line.pendingSettlement === '0'),
    );

    // The app wallet claims its 0.25 USD in USDC on chain B.
    const claim = await call(gateway.url, 'claimAppFees', {
      path: `/app-fees/${appAccount.address}/claim`,
      body: { chainId: chainB.chainId, currency: usdcB, recipient: claimRecipient },
    });
    expect(claim.status).toBe(200);
    const step = claim.body.steps[0];
    const signature = await appAccount.signMessage({ message: { raw: step.items[0].data.sign.message } });
    const posted = await call(gateway.url, 'submitPermit', {
      query: { signature },
      body: { kind: 'claim', requestId: step.requestId },
    });
    expect(posted.status).toBe(200);
    await until('the claim paid', async () => {
      const { body } = await call(gateway.url, 'getAppFeeClaims', { path: `/app-fees/${appAccount.address}/claims` });
      return body.claims.some((c: { status: string }) => c.status === 'success');
    });
    expect(
      await publicClientOf(chainB).readContract({
        address: usdcB,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [claimRecipient],
      }),
    ).toBe(250_000n);

    const checks = await checkedAfter(Date.now());
    expect(checks).toHaveLength(gateway.config.chains.reduce((n, chain) => n + 1 + chain.currencies.length, 0));
    for (const check of checks) expect(check, `${check.chainId} ${check.currency}`).toMatchObject({ drift: '0' });
    // The ledger's solver account is the balance on chain (its opening balance and every movement since).
    const { inventory: lines } = await inventory();
    for (const line of lines) expect(line.ledger, `${line.chainId} ${line.symbol}`).toBe(line.onChain);
    expect(await metric(chainB.chainId, 'USDC')).toBe(0);
    expect(await metric(chainA.chainId, 'ETH')).toBe(0);
    expect(await ledgerImbalances(gateway.server.database.db)).toEqual({ currencies: [], movements: [] });
  });

  it('reports exactly what the solver’s key moved behind the gateway’s back', async () => {
    const usdcB = tokenOf(chainB, 'USDC');
    const wallet = createWalletClient({
      account: privateKeyToAccount(gateway.devnet.descriptor.solver.privateKey),
      chain: devnetViemChain(chainB),
      transport: http(chainB.rpcUrl),
    });
    const hash = await wallet.writeContract({
      address: usdcB,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [outsider, 1_234_567n],
    });
    const receipt = await publicClientOf(chainB).waitForTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    const gas = receipt.gasUsed * receipt.effectiveGasPrice;

    const checks = await checkedAfter(Date.now());
    const drift = (chain: DevnetChain, currency: Address) =>
      checks.find((c) => c.chainId === chain.chainId && c.currency === currency.toLowerCase())?.drift;
    expect(drift(chainB, usdcB)).toBe('-1234567');
    expect(drift(chainB, zeroAddress)).toBe(String(-gas));
    const others = checks.filter(
      (c) => c.chainId !== chainB.chainId || (c.currency !== usdcB.toLowerCase() && c.currency !== zeroAddress),
    );
    for (const check of others) expect(check.drift, `${check.chainId} ${check.currency}`).toBe('0');
    expect(await metric(chainB.chainId, 'USDC')).toBe(-1.234567);

    // The CLI prints it.
    const { stdout } = await promisify(execFile)('npx', ['tsx', 'src/server/inventoryCli.ts', gateway.url], {
      env: { ...process.env, GATEWAY_ADMIN_TOKEN: adminToken },
    });
    expect(stdout).toMatch(
      new RegExp(`reconciliation: USDC on ${chainB.chainId} at block \\d+ \\(.*\\): drift -1\\.234567\\n`),
    );
  });

  it('does not count a transaction mined without its recorded receipt as drift: it is in flight', async () => {
    // Fault injection: the database holds a transaction as broadcast with the nonce the outside transfer used
    // (as the sender leaves one between its mining and the receipt's record).
    const db = gateway.server.database.db;
    const nonce = BigInt(
      await publicClientOf(chainB).getTransactionCount({ address: gateway.devnet.descriptor.solver.address }),
    );
    const record = await insertOutgoingTx(db, {
      chainId: chainB.chainId,
      requestId: `0x${'ab'.repeat(32)}`,
      kind: 'claim',
      signer: gateway.devnet.descriptor.solver.address,
      nonce: nonce - 1n,
      status: 'broadcast',
      payload: {},
      now: Date.now(),
    });
    const reconciler = createReconciler({
      ctx: gateway.server.core,
      reader: createSolverStateReader(clientsOf(), gateway.devnet.descriptor.solver.address),
      settings: { intervalMs: 60_000 },
    });
    const results = await reconciler.reconcileNow();
    expect(results.find((r) => r.chainId === chainB.chainId)).toMatchObject({ outcome: 'in-flight' });
    expect(results.find((r) => r.chainId === chainA.chainId)).toMatchObject({ outcome: 'settled', opened: 0 });
    const { reconciliation } = await inventory();
    for (const check of reconciliation.filter((c) => c.chainId === chainB.chainId))
      expect(check.inFlightAt).not.toBeNull();
    // Once the database knows it was not ours (replaced), the drift is back.
    await db.updateTable('outgoing_txs').set({ status: 'replaced' }).where('id', '=', record.id).execute();
    const again = await reconciler.reconcileNow();
    const settled = again.find((r) => r.chainId === chainB.chainId);
    expect(settled).toMatchObject({ outcome: 'settled', opened: 0 });
    await reconciler.stop();
  });
});

/** The devnet's chain clients, for a second reconciler (as a new leader would build it). */
function clientsOf() {
  return new Map(
    gateway.devnet.descriptor.chains.map((chain) => [chain.chainId, publicClientOf(chain)] as const),
  ) as unknown as Parameters<typeof createSolverStateReader>[0];
}
