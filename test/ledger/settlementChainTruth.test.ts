/**
 * The chain decides, the database remembers, for settlement: a gateway whose database's settlement state is behind
 * the chain (restored from a backup taken before a later run released a filled deposit, or a deposit released by
 * hand with the solver key while no gateway ran) does not try the release again and does not alert an operator.
 * Its settler, refused by the depository (`AlreadyReleased`), reads the release on chain: released to the solver,
 * the item ends `settled` with the chain's transaction and the ledger books it once (and reconciles); released to
 * someone else, the item is `rejected` `ALREADY_RELEASED` with that transaction and a warning. Nothing is sent.
 */
import { cp, mkdtemp, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, http, parseEther, parseEventLogs, zeroAddress, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { depositoryAbi } from '../../generated/contracts/index.js';
import {
  devnetViemChain,
  startDevnet,
  type Devnet,
  type DevnetAccount,
  type DevnetChain,
} from '../../src/chain/devnet.js';
import { DATA_DIR_LOCK_FILE } from '../../src/store/dataDirLock.js';
import { ledgerImbalances } from '../../src/store/ledger.repository.js';
import { listRejectedSettlementItems } from '../../src/store/settlements.repository.js';
import { releasedEvents } from '../helpers/chainReads.js';
import type { TestGateway } from '../helpers/gateway.js';
import { expectLedgerReconciled } from '../helpers/ledger.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus } from '../helpers/quote.js';
import { sharedDevnetGateways } from '../helpers/sharedDevnetGateways.js';

let devnet: Devnet;
let chainA: DevnetChain;

const gateways = sharedDevnetGateways(() => devnet);
/** A gateway on the shared devnet with a PGlite database in `dataDir`, settling at start (and when asked) only. */
const gatewayOn = (dataDir: string, logs: any[] = []) => gateways.start({ dataDir, logs });
const stopAll = () => gateways.stopAll();

beforeAll(async () => {
  devnet = await startDevnet({ basePort: 0 });
  [chainA] = devnet.descriptor.chains as [DevnetChain];
});
afterEach(stopAll);
afterAll(async () => {
  await stopAll();
  await devnet?.stop();
});

const solver = () => devnet.descriptor.solver.address;
const solverNonceOnA = () => publicClientOf(chainA).getTransactionCount({ address: solver() });

/** A native ETH bridge from A to B by `user`, filled: its request id and deposit as the depository recorded it. */
async function filledBridge(gateway: TestGateway, user: DevnetAccount, amount: string) {
  const quote = await requestQuote(gateway, user, {
    originCurrency: zeroAddress,
    destinationCurrency: zeroAddress,
    amount: parseEther(amount).toString(),
  });
  const requestId = quote.steps.at(-1)!.requestId;
  const receipts = await executeSteps(gateway, quote.steps, user);
  expect((await waitForStatus(gateway, requestId, ['success', 'failure', 'refund'])).status).toBe('success');
  await gateway.server.solver!.solver.idle();
  const [event] = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipts.get('deposit')!.logs });
  return {
    requestId,
    depositIndex: event!.args.depositIndex,
    depositor: event!.args.depositor,
    amount: event!.args.amount,
  };
}

/** The gateway's settlement item of the deposit at `depositIndex` on chain A. */
async function itemOf(gateway: TestGateway, depositIndex: bigint) {
  return gateway.server.core.db
    .selectFrom('settlement_items as s')
    .innerJoin('deposits as d', 'd.id', 's.deposit_id')
    .select(['s.status', 's.reason', 's.release_tx_hash'])
    .where('d.chain_id', '=', chainA.chainId)
    .where('d.deposit_index', '=', depositIndex.toString())
    .executeTakeFirst();
}

/** The `settlement` ledger entries of `requestId`, by account. */
async function settlementEntries(gateway: TestGateway, requestId: Hex) {
  const rows = await gateway.server.core.db
    .selectFrom('ledger_entries')
    .select(['account', 'amount'])
    .where('request_id', '=', requestId.toLowerCase())
    .where('kind', '=', 'settlement')
    .orderBy('account')
    .execute();
  return rows.map((row) => ({ account: row.account, amount: BigInt(row.amount) }));
}

/** Log lines at error and above, and any line that hands something to an operator. */
const alerts = (logs: any[]) => logs.filter((line) => line.level >= 50 || /for an operator/.test(String(line.msg)));

describe('a database restored from a backup taken before a later run settled a deposit', () => {
  it('records the deposit settled by the chain’s transaction, sends nothing, alerts no operator, and the ledger reconciles', async () => {
    const alice = devnet.descriptor.accounts[0]!;
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-settle-truth-'));
    const dataDir = path.join(dir, 'data');
    const backup = path.join(dir, 'backup');
    try {
      // A bridge is filled; the backup is taken before any settlement.
      const first = await gatewayOn(dataDir);
      const filled = await filledBridge(first, alice, '0.021');
      await first.stop();
      await cp(dataDir, backup, { recursive: true, filter: (source) => path.basename(source) !== DATA_DIR_LOCK_FILE });

      // A later run on the original directory releases the deposit to the solver.
      const later = await gatewayOn(dataDir);
      await later.server.solver!.settler.settleNow();
      await later.stop();
      const releases = await releasedEvents(chainA, { depositIndex: filled.depositIndex });
      expect(releases.map((event) => event.args.to!.toLowerCase())).toEqual([solver().toLowerCase()]);
      const releaseTx = releases[0]!.transactionHash.toLowerCase();

      // The operator restores the backup: its database believes the deposit is still in the depository.
      await rm(dataDir, { recursive: true, force: true });
      await rename(backup, dataDir);
      const nonceA = await solverNonceOnA();
      const logs: any[] = [];
      const restored = await gatewayOn(dataDir, logs);
      await restored.server.solver!.settler.settleNow();

      expect(await itemOf(restored, filled.depositIndex)).toEqual({
        status: 'settled',
        reason: null,
        release_tx_hash: releaseTx,
      });
      expect(await solverNonceOnA()).toBe(nonceA);
      expect(await releasedEvents(chainA, { depositIndex: filled.depositIndex })).toHaveLength(1);
      expect(alerts(logs)).toEqual([]);
      expect(await listRejectedSettlementItems(restored.server.core.db, { chainId: chainA.chainId })).toEqual([]);
      // Booked once, as the batch's receipt books a release: from the depository to the solver.
      expect(await settlementEntries(restored, filled.requestId)).toEqual([
        { account: 'depository', amount: -filled.amount },
        { account: 'solver', amount: filled.amount },
      ]);
      // The rebuild's rebase ran after the settlement was booked: it holds only the later run's gas, not the release.
      expect(await ledgerImbalances(restored.server.core.db)).toEqual({ currencies: [], movements: [] });
      await expectLedgerReconciled(restored);

      // Nothing more on the next pass.
      await restored.server.solver!.settler.settleNow();
      expect(await solverNonceOnA()).toBe(nonceA);
      expect(await settlementEntries(restored, filled.requestId)).toHaveLength(2);
      expect(alerts(logs)).toEqual([]);
    } finally {
      await stopAll();
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});

describe('a filled deposit released to its depositor while no gateway ran', () => {
  it('records it as not the solver’s to settle with the chain’s transaction and a warning, sends nothing, and the ledger reconciles', async () => {
    const bob = devnet.descriptor.accounts[1]!;
    const dir = await mkdtemp(path.join(tmpdir(), 'gateway-settle-truth-'));
    const dataDir = path.join(dir, 'data');
    try {
      const first = await gatewayOn(dataDir);
      const filled = await filledBridge(first, bob, '0.022');
      await first.stop();

      // The deposit goes back to its depositor by a release the solver key signs outside any gateway (an operator's
      // refund, or a run whose database is gone): the database knows nothing of it.
      const wallet = createWalletClient({
        account: privateKeyToAccount(devnet.descriptor.solver.privateKey),
        chain: devnetViemChain(chainA),
        transport: http(chainA.rpcUrl),
      });
      const hash = await wallet.writeContract({
        address: chainA.contracts.depository,
        abi: depositoryAbi,
        functionName: 'release',
        args: [
          filled.depositIndex,
          filled.requestId,
          filled.depositor,
          zeroAddress,
          filled.amount,
          filled.depositor,
          filled.amount,
        ],
      });
      expect((await publicClientOf(chainA).waitForTransactionReceipt({ hash })).status).toBe('success');

      const nonceA = await solverNonceOnA();
      const logs: any[] = [];
      const restarted = await gatewayOn(dataDir, logs);
      await restarted.server.solver!.settler.settleNow();

      expect(await itemOf(restarted, filled.depositIndex)).toEqual({
        status: 'rejected',
        reason: 'ALREADY_RELEASED',
        release_tx_hash: hash.toLowerCase(),
      });
      const [rejected] = await listRejectedSettlementItems(restarted.server.core.db, { chainId: chainA.chainId });
      expect(rejected!.detail).toBe(
        `AlreadyReleased(${filled.depositIndex}): released to ${filled.depositor.toLowerCase()} by ${hash.toLowerCase()}`,
      );
      expect(await solverNonceOnA()).toBe(nonceA);
      expect(await releasedEvents(chainA, { depositIndex: filled.depositIndex })).toHaveLength(1);
      expect(alerts(logs)).toEqual([]);
      expect(
        logs.filter((line) => line.level === 40 && /released to someone else than the solver/.test(String(line.msg))),
      ).toEqual([expect.objectContaining({ releaseTxHash: hash.toLowerCase() })]);
      // The solver was paid nothing: no settlement is booked.
      expect(await settlementEntries(restarted, filled.requestId)).toEqual([]);
      expect(await ledgerImbalances(restarted.server.core.db)).toEqual({ currencies: [], movements: [] });
      await expectLedgerReconciled(restarted);
    } finally {
      await stopAll();
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
