/**
 * A deposit's watcher hands its request on with it, as the confirmation read it, and the solver does not read the
 * request again before the claim. That record may be old by the time the deposit is claimed (a request's deposits
 * wait for each other in its lane): its status must decide nothing. Here a second deposit is handed on with the
 * request as it was before its first deposit was filled (`waiting`), twice: it must be refunded once on its own
 * (DOUBLE_SPEND), never claimed for the request, never filled.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, parseEventLogs, zeroAddress, type Hex } from 'viem';
import { depositoryAbi } from '../../generated/contracts/index.js';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { depositRules } from '../../src/core/ledger/movements.js';
import { confirmDepositsAtBlocks, getDeposit, insertDeposits } from '../../src/store/deposits.repository.js';
import { getRequest } from '../../src/store/requests.repository.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus } from '../helpers/quote.js';
import { depositNative as sendNativeDeposit } from '../helpers/deposits.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let bob: DevnetAccount;

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  bob = gateway.devnet.descriptor.accounts[1]!;
});
afterAll(async () => {
  await gateway?.stop();
});

let watcherStopped = false;
/** Chain A's watcher stops: the tests record, confirm and hand on deposits themselves. */
async function stopWatcher(): Promise<void> {
  if (!watcherStopped) await gateway.server.solver!.watchers.get(chainA.chainId)!.stop();
  watcherStopped = true;
}

/** A native deposit from bob for `requestId`, recorded and confirmed as the watcher does (`confirmDepositsAtBlocks`). */
async function depositAndConfirm(requestId: Hex, value: bigint) {
  const { db } = gateway.server.core;
  const { hash, receipt, log } = await sendNativeDeposit(chainA, bob, requestId, value);
  const [recorded] = await insertDeposits(db, [
    {
      chainId: chainA.chainId,
      txHash: hash,
      logIndex: log.logIndex,
      blockNumber: receipt.blockNumber,
      blockHash: receipt.blockHash,
      requestId,
      depositor: log.args.depositor,
      token: log.args.token,
      amount: log.args.amount,
      depositIndex: log.args.depositIndex,
      sender: receipt.from,
      now: Date.now(),
    },
  ]);
  const [confirmed] = await confirmDepositsAtBlocks(db, [recorded!.deposit], Date.now(), depositRules.received);
  return { confirmed: confirmed!, hash };
}

describe('the request handed on with a confirmed deposit', () => {
  it('a stale `waiting` record with a second deposit for a filled request: one refund (DOUBLE_SPEND), no second fill', async () => {
    const { db } = gateway.server.core;
    const runtime = gateway.server.solver!;
    const amount = parseEther('0.01');
    const q = await requestQuote(gateway, bob, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: amount.toString(),
    });
    const requestId = q.steps.at(-1)!.requestId;
    const stale = (await getRequest(db, requestId))!;
    expect(stale.status).toBe('waiting');
    const first = (await executeSteps(gateway, q.steps, bob)).get('deposit')!.transactionHash;
    expect(await waitForStatus(gateway, requestId, ['success', 'refund', 'failure'])).toMatchObject({
      status: 'success',
    });

    // Chain A's watcher stops: the second deposit is recorded and confirmed here as it would be, and handed on with
    // the old record instead of the one its confirmation read.
    await stopWatcher();
    const { confirmed, hash } = await depositAndConfirm(requestId, amount);
    const seen = confirmed.deposit;
    // What the watcher would have handed on: the request as it is now.
    expect(confirmed.request).toMatchObject({ id: requestId, status: 'success' });
    expect(hash).not.toBe(first);

    // Twice, as after a restart that hands a confirmed deposit on again.
    runtime.solver.handleDeposit(confirmed.deposit, stale);
    runtime.solver.handleDeposit(confirmed.deposit, stale);
    await runtime.solver.idle();

    // Still filled by its first deposit alone, with one fill.
    expect(await getRequest(db, requestId)).toMatchObject({ status: 'success', inTxHashes: [first.toLowerCase()] });
    expect(await getDeposit(db, seen.id)).toMatchObject({ status: 'consumed' });
    // (This test runs first: the gateway has sent nothing else.)
    const sent = await db.selectFrom('outgoing_txs').selectAll().orderBy('id').execute();
    expect(sent.map((row) => row.kind).sort()).toEqual(['fill', 'refund']);
    const refund = sent.find((row) => row.kind === 'refund')!;
    expect(refund.status).toBe('confirmed');
    const refundReceipt = await publicClientOf(chainA).getTransactionReceipt({ hash: refund.hashes.at(-1) as Hex });
    const released = parseEventLogs({ abi: depositoryAbi, eventName: 'Released', logs: refundReceipt.logs });
    expect(released).toHaveLength(1);
    expect(released[0]!.args.to.toLowerCase()).toBe(bob.address.toLowerCase());
    // The deposit back, less only the refund's gas.
    expect(released[0]!.args.amount).toBeLessThan(amount);
    expect(amount - released[0]!.args.amount).toBeLessThan(parseEther('0.001'));
  });

  it("a record whose fill differs from the claimed row's: the fill's checks are read again for the row, which is filled", async () => {
    const { db } = gateway.server.core;
    const runtime = gateway.server.solver!;
    await stopWatcher();
    const amount = parseEther('0.01');
    const recipient = '0x00000000000000000000000000000000000a11ce';
    const q = await requestQuote(gateway, bob, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: amount.toString(),
      recipient,
    });
    const requestId = q.steps.at(-1)!.requestId;
    const record = (await getRequest(db, requestId))!;
    const { confirmed } = await depositAndConfirm(requestId, amount);
    // Handed on with an output no solver holds: a simulation of that fill reverts, and its reads (started before
    // the claim) must not decide the claimed row's fill.
    runtime.solver.handleDeposit(confirmed.deposit, { ...record, amountOut: 10n ** 30n });
    await runtime.solver.idle();
    expect(await getRequest(db, requestId)).toMatchObject({ status: 'success', failReason: null });
    expect(await publicClientOf(chainB).getBalance({ address: recipient })).toBe(record.amountOut);
  });
});
