/**
 * The solver's background jobs (settlement, app-fee claim payouts, ledger reconciliation) leave a chain out of
 * service alone: no transaction is sent there, no read fails there each pass, one log line says it is skipped. The
 * other chain keeps settling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, http, parseEther, zeroAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { depositoryAbi } from '../../generated/contracts/index.js';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { getClaim, insertClaim } from '../../src/store/appFeeClaims.repository.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;
const logLines: Array<{ level: number; msg?: string; chainId?: number; [key: string]: unknown }> = [];

beforeAll(async () => {
  // Long intervals: the test runs each job's pass itself.
  gateway = await startTestGateway(
    {
      logLevel: 'info',
      logFormat: 'json',
      settlement: { intervalMs: 600_000, maxBatch: 50 },
      reconciliation: { intervalMs: 600_000 },
    },
    { server: { logDestination: { write: (line: string) => void logLines.push(JSON.parse(line)) } } },
  );
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [alice] = gateway.devnet.descriptor.accounts as [DevnetAccount];
});
afterAll(async () => {
  await gateway?.stop();
});

/** A filled native request from `origin` to the other chain: its deposit on `origin` is due for settlement. */
async function filledFrom(origin: DevnetChain, destination: DevnetChain): Promise<Hex> {
  const quote = await requestQuote(gateway, alice, {
    originChainId: origin.chainId,
    destinationChainId: destination.chainId,
    originCurrency: zeroAddress,
    destinationCurrency: zeroAddress,
    amount: parseEther('0.01').toString(),
  });
  await executeSteps(gateway, quote.steps, alice);
  const requestId = quote.steps.at(-1)!.requestId;
  await waitForStatus(gateway, requestId, ['success']);
  return requestId;
}

const releases = (chain: DevnetChain, requestId: Hex) =>
  publicClientOf(chain).getContractEvents({
    address: chain.contracts.depository,
    abi: depositoryAbi,
    eventName: 'Released',
    args: { id: requestId },
    fromBlock: 0n,
  });

describe('background jobs on a chain out of service', () => {
  it('send nothing there and log one line each, while the other chain settles', async () => {
    const solver = gateway.devnet.descriptor.solver;
    const runtime = gateway.server.solver!;
    const onA = await filledFrom(chainA, chainB);
    const onB = await filledFrom(chainB, chainA);

    // An authorized claim payable on chain A (written as the claim flow leaves it: `pending`).
    const claimId = `0x${'c1'.repeat(32)}`;
    const now = Date.now();
    await insertClaim(gateway.server.core.db, {
      id: claimId,
      wallet: alice.address,
      recipient: alice.address,
      chainId: chainA.chainId,
      currency: zeroAddress,
      usdMicros: 1_000_000n,
      feeUsdMicros: 0n,
      amount: 1n,
      message: 'claim',
      expiresAt: now + 600_000,
      now,
    });
    await gateway.server.core.db
      .updateTable('app_fee_claims')
      .set({ status: 'pending' })
      .where('id', '=', claimId)
      .execute();

    // Another gateway's work with the solver key on chain A (a call to the depository this database did not send):
    // the key watch takes chain A out of service.
    const other = createWalletClient({
      account: privateKeyToAccount(solver.privateKey),
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    });
    await publicClientOf(chainA).waitForTransactionReceipt({
      hash: await other.sendTransaction({ to: chainA.contracts.depository, data: '0xdeadbeef', gas: 100_000n }),
    });
    await runtime.keyWatch.check();
    expect(gateway.server.chainChecks.chainBlocked(chainA.chainId)).toMatch(/another gateway uses the solver key/);
    const nonceA = await publicClientOf(chainA).getTransactionCount({ address: solver.address });
    const blocked = logLines.length;

    for (let pass = 0; pass < 3; pass++) {
      await runtime.settler.settleNow();
      await runtime.claimPayer.payNow();
      const reconciled = await runtime.reconciler.reconcileNow();
      expect(reconciled.map((result) => result.chainId)).toEqual(
        gateway.config.chains.map((chain) => chain.id).filter((id) => id !== chainA.chainId),
      );
    }

    // Chain B settles; chain A gets no transaction: the deposit stays in its depository, the claim stays pending.
    expect(await releases(chainB, onB)).toHaveLength(1);
    expect(await releases(chainA, onA)).toHaveLength(0);
    expect(await publicClientOf(chainA).getTransactionCount({ address: solver.address })).toBe(nonceA);
    expect((await getClaim(gateway.server.core.db, claimId))?.status).toBe('pending');

    const after = logLines.slice(blocked);
    expect(after.filter((line) => line.level >= 50)).toEqual([]);
    const skips = after.filter((line) => line.msg?.includes(`chain ${chainA.chainId} is out of service`));
    expect(skips.map((line) => line.msg)).toEqual([
      `settlement: chain ${chainA.chainId} is out of service; skipped there until it is back`,
      `app-fee claims: chain ${chainA.chainId} is out of service; skipped there until it is back`,
      `ledger reconciliation: chain ${chainA.chainId} is out of service; skipped there until it is back`,
    ]);
    expect(skips.every((line) => line.level === 40 && String(line.reason).includes('another gateway'))).toBe(true);
  });
});
