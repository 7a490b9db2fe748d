/**
 * A reorged deposit is never filled: the origin needs 3 confirmations, a deposit is mined and seen, then the
 * origin is reverted to a snapshot taken before it and grows 4 other blocks (a reorg deeper than the deposit,
 * as a real chain would make it). The watcher must drop the deposit, the request must stay `waiting` with
 * nothing sent on the destination, and a deposit made afterwards for the same request is filled once.
 *
 * A reorg deeper than the confirmations, after the fill, takes a used deposit off the origin: the fill stands
 * (the solver paid), the deposit is flagged `removed` with `reorgedAt`, counted in
 * `gateway_deposits_reorged_total`, and its amount booked in the ledger as the solver's loss (`loss:reorg`).
 *
 * A reorg of the destination that drops the solver's mined fill leaves a hole at its nonce: the next fill there
 * would wait behind it for good. The sender finds the dropped fill and sends it again on its nonce; both are mined.
 * When another transaction of the solver's key took that nonce meanwhile, the dropped fill is signed again on a
 * fresh nonce once the watcher sees the reorg.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestClient,
  createWalletClient,
  decodeFunctionData,
  http,
  parseEther,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { onlyOwnerMulticallerAbi } from '../../generated/contracts/index.js';
import { devnetViemChain, startDevnet, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { configFromEnvironment } from '../../src/server/config.js';
import { createServer } from '../../src/server/createServer.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';
import { listDepositsForRequest } from '../../src/store/deposits.repository.js';
import type { DepositRecord } from '../../src/records/deposit.js';
import { listLedgerEntries } from '../../src/store/ledger.repository.js';
import { getLiveOutgoingTx } from '../../src/store/outgoingTxs.repository.js';
import { call } from '../helpers/conformance.js';
import type { TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, waitForStatus } from '../helpers/quote.js';
import { depositEvents, releasedEvents } from '../helpers/chainReads.js';

const ORIGIN_CONFIRMATIONS = 3;

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;

beforeAll(async () => {
  // startTestGateway's overrides cannot reach the chains (they come from the devnet it starts), so the same
  // setup by hand, with the origin's confirmations raised.
  const devnet = await startDevnet({ basePort: 0 });
  try {
    const chains = devnetChainConfigs(devnet.descriptor).map((chain, i) =>
      i === 0 ? { ...chain, confirmations: ORIGIN_CONFIRMATIONS } : chain,
    );
    const config = configFromEnvironment(
      { PORT: '0', GATEWAY_LOG_LEVEL: 'silent' },
      chains,
      devnet.descriptor.solver.privateKey,
    );
    const server = await createServer(config);
    const url = await server.start();
    gateway = {
      devnet,
      server,
      config,
      url,
      async stop() {
        await server.stop();
        await devnet.stop();
      },
    };
  } catch (error) {
    await devnet.stop();
    throw error;
  }
  [chainA, chainB] = devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [alice] = devnet.descriptor.accounts as [DevnetAccount];
});
afterAll(async () => {
  await gateway?.stop();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls the request's deposits (as stored by the watcher) until `done` holds. */
async function depositsUntil(
  requestId: Hex,
  done: (deposits: DepositRecord[]) => boolean,
  timeoutMs = 10_000,
): Promise<DepositRecord[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const deposits = await listDepositsForRequest(gateway.server.database.db, requestId);
    if (done(deposits)) return deposits;
    if (Date.now() > deadline)
      throw new Error(
        `deposits of ${requestId}: ${JSON.stringify(deposits, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))}`,
      );
    await sleep(100);
  }
}

/** Every transaction the solver sent on chain B since `fromBlock` that fills `requestId`. */
async function fillTxs(fromBlock: bigint, requestId: Hex): Promise<Hex[]> {
  const client = publicClientOf(chainB);
  const head = await client.getBlockNumber({ cacheTime: 0 });
  const found: Hex[] = [];
  for (let n = fromBlock; n <= head; n++) {
    const block = await client.getBlock({ blockNumber: n, includeTransactions: true });
    for (const tx of block.transactions) {
      if (tx.from.toLowerCase() !== gateway.devnet.descriptor.solver.address.toLowerCase()) continue;
      if (tx.to?.toLowerCase() !== chainB.contracts.onlyOwnerMulticaller.toLowerCase()) continue;
      const fill = decodeFunctionData({ abi: onlyOwnerMulticallerAbi, data: tx.input });
      if (fill.functionName === 'fill' && fill.args[0].toLowerCase() === requestId.toLowerCase()) found.push(tx.hash);
    }
  }
  return found;
}

const isFilled = (requestId: Hex) =>
  publicClientOf(chainB).readContract({
    address: chainB.contracts.onlyOwnerMulticaller,
    abi: onlyOwnerMulticallerAbi,
    functionName: 'filled',
    args: [requestId],
  });

describe('a deposit reorged away before it is confirmed', () => {
  it('is removed and never filled; the request stays waiting, and a later deposit for it is filled once', async () => {
    const origin = publicClientOf(chainA);
    const originTest = createTestClient({
      mode: 'anvil',
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    });
    const recipient = '0x00000000000000000000000000000000000e0e01' as Address;
    const fromB = await publicClientOf(chainB).getBlockNumber({ cacheTime: 0 });
    const quote = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      recipient,
    });
    const requestId = quote.steps.at(-1)!.requestId;

    const snapshot = await originTest.snapshot();
    const deposited = (await executeSteps(gateway, quote.steps, alice)).get('deposit')!;
    // The watcher has it, one block deep of the three it needs.
    const [seen] = await depositsUntil(requestId, (deposits) => deposits.length === 1);
    expect(seen).toMatchObject({
      status: 'seen',
      txHash: deposited.transactionHash,
      blockNumber: deposited.blockNumber,
    });

    await originTest.revert({ id: snapshot });
    await originTest.mine({ blocks: ORIGIN_CONFIRMATIONS + 1 });
    const head = await origin.getBlockNumber({ cacheTime: 0 });
    expect(head).toBeGreaterThanOrEqual(deposited.blockNumber + BigInt(ORIGIN_CONFIRMATIONS));
    // The deposit's block number now holds another block, and the deposit is nowhere on the chain.
    expect((await origin.getBlock({ blockNumber: deposited.blockNumber })).hash).not.toBe(deposited.blockHash);
    await expect(origin.getTransactionReceipt({ hash: deposited.transactionHash })).rejects.toThrow();

    const [removed] = await depositsUntil(requestId, (deposits) => deposits[0]?.status === 'removed');
    expect(removed!.id).toBe(seen!.id);
    // A few more polls (a quarter second each) change nothing.
    await sleep(1_500);
    const { status, body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: 'waiting', inTxHashes: [], txHashes: [] });
    expect((await listDepositsForRequest(gateway.server.database.db, requestId)).map((d) => d.status)).toEqual([
      'removed',
    ]);
    expect(await fillTxs(fromB, requestId)).toEqual([]);
    expect(await isFilled(requestId)).toBe(false);

    // The same quote deposited again, on the chain as it is now, is filled once it is 3 blocks deep.
    const again = (await executeSteps(gateway, quote.steps, alice)).get('deposit')!;
    await originTest.mine({ blocks: ORIGIN_CONFIRMATIONS - 1 });
    const record = await waitForStatus(gateway, requestId, ['success', 'failure', 'refund']);
    expect(record).toMatchObject({ status: 'success', inTxHashes: [again.transactionHash] });
    expect(await fillTxs(fromB, requestId)).toHaveLength(1);
    expect(await isFilled(requestId)).toBe(true);
    expect(await publicClientOf(chainB).getBalance({ address: recipient })).toBe(
      BigInt(quote.details.currencyOut.amount),
    );
    expect((await listDepositsForRequest(gateway.server.database.db, requestId)).map((d) => d.status)).toEqual([
      'removed',
      'consumed',
    ]);
    // The reorged deposit never reached the depository: nothing to release for it either.
    const released = await releasedEvents(chainA, { id: requestId });
    expect(released).toEqual([]);
  });
});

describe('a used deposit reorged away past its confirmations', () => {
  it('leaves the fill standing; the deposit is flagged, counted and booked as the solver loss', async () => {
    const origin = publicClientOf(chainA);
    const originTest = createTestClient({
      mode: 'anvil',
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    });
    const recipient = '0x00000000000000000000000000000000000e0e02' as Address;
    const quote = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.02').toString(),
      recipient,
    });
    const requestId = quote.steps.at(-1)!.requestId;
    const amountIn = BigInt(quote.details.currencyIn.amount);

    const snapshot = await originTest.snapshot();
    const forkedAt = await origin.getBlockNumber({ cacheTime: 0 });
    const deposited = (await executeSteps(gateway, quote.steps, alice)).get('deposit')!;
    await originTest.mine({ blocks: ORIGIN_CONFIRMATIONS - 1 });
    expect(await waitForStatus(gateway, requestId, ['success', 'failure', 'refund'])).toMatchObject({
      status: 'success',
      inTxHashes: [deposited.transactionHash],
    });
    const [used] = await depositsUntil(requestId, (deposits) => deposits[0]?.status === 'consumed');
    expect(used).toMatchObject({ amount: amountIn, reorgedAt: null });

    // The origin forgets the deposit: the fork point's chain grows past the old head (3 confirmations and more).
    const oldHead = await origin.getBlockNumber({ cacheTime: 0 });
    await originTest.revert({ id: snapshot });
    await originTest.mine({ blocks: Number(oldHead - forkedAt) + 2 });
    await expect(origin.getTransactionReceipt({ hash: deposited.transactionHash })).rejects.toThrow();

    const [removed] = await depositsUntil(requestId, (deposits) => deposits[0]?.status === 'removed', 20_000);
    expect(removed!.id).toBe(used!.id);
    expect(removed!.reorgedAt).not.toBeNull();

    // The ledger books the deposit as lost: the depository does not hold it, the solver bears it.
    const entries = await listLedgerEntries(gateway.server.database.db, { requestId });
    const lost = entries.filter((entry) => entry.kind === 'deposit_lost');
    expect(lost.map(({ account, amount, chainId, currency }) => ({ account, amount, chainId, currency }))).toEqual([
      { account: 'loss:reorg', amount: amountIn, chainId: chainA.chainId, currency: zeroAddress },
      { account: 'depository', amount: -amountIn, chainId: chainA.chainId, currency: zeroAddress },
    ]);
    const depository = entries
      .filter((entry) => entry.account === 'depository' && entry.chainId === chainA.chainId)
      .reduce((sum, entry) => sum + entry.amount, 0n);
    expect(depository).toBe(0n);

    // On chain: the recipient was paid on B, and the origin's depository never received anything for the request.
    expect(await isFilled(requestId)).toBe(true);
    expect(await publicClientOf(chainB).getBalance({ address: recipient })).toBe(
      BigInt(quote.details.currencyOut.amount),
    );
    const deposits = await depositEvents(chainA, { id: requestId });
    expect(deposits).toEqual([]);

    const metrics = await (await fetch(`${gateway.url}/metrics`)).text();
    expect(metrics).toContain(`gateway_deposits_reorged_total{chain_id="${chainA.chainId}"} 1`);
  });
});

describe("a solver's mined transaction dropped by a reorg", () => {
  /** A native A -> B request to `recipient`, deposited and filled; its fill's hash and nonce. */
  async function fillOne(recipient: Address) {
    const originTest = createTestClient({
      mode: 'anvil',
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    });
    const quote = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      recipient,
    });
    const requestId = quote.steps.at(-1)!.requestId;
    await executeSteps(gateway, quote.steps, alice);
    await originTest.mine({ blocks: ORIGIN_CONFIRMATIONS - 1 });
    const record = await waitForStatus(gateway, requestId, ['success', 'failure', 'refund']);
    expect(record.status).toBe('success');
    const row = await getLiveOutgoingTx(gateway.server.database.db, requestId, 'fill');
    return { requestId, amountOut: BigInt(quote.details.currencyOut.amount), row: row! };
  }

  it('is sent again on its nonce, so the next transaction on that chain is mined', async () => {
    const destination = publicClientOf(chainB);
    const destinationTest = createTestClient({
      mode: 'anvil',
      chain: devnetViemChain(chainB),
      transport: http(chainB.rpcUrl),
    });
    const solver = gateway.devnet.descriptor.solver.address;
    const first = '0x00000000000000000000000000000000000e0e03' as Address;
    const second = '0x00000000000000000000000000000000000e0e04' as Address;

    const snapshot = await destinationTest.snapshot();
    const dropped = await fillOne(first);
    const droppedHash = dropped.row.hashes.at(-1)! as Hex;
    const droppedNonce = dropped.row.nonce!;
    expect(await destination.getTransactionCount({ address: solver, blockTag: 'latest' })).toBe(
      Number(droppedNonce) + 1,
    );
    // The destination forgets the fill (and no node keeps it): the solver's account is back at the fill's nonce.
    await destinationTest.revert({ id: snapshot });
    await destinationTest.dropTransaction({ hash: droppedHash });
    await destinationTest.mine({ blocks: 2 });
    await expect(destination.getTransactionReceipt({ hash: droppedHash })).rejects.toThrow();
    expect(await destination.getTransactionCount({ address: solver, blockTag: 'latest' })).toBe(Number(droppedNonce));
    expect(await isFilled(dropped.requestId)).toBe(false);
    expect(await destination.getBalance({ address: first })).toBe(0n);

    // The next fill on B takes the nonce after the dropped one, and is mined all the same.
    const next = await fillOne(second);
    expect(next.row.nonce).toBe(droppedNonce + 1n);
    expect(await isFilled(next.requestId)).toBe(true);
    expect(await destination.getBalance({ address: second })).toBe(next.amountOut);

    // The dropped fill was sent again on its own nonce: mined, and its recipient paid once.
    const resent = await destination.getTransactionReceipt({ hash: droppedHash });
    expect(resent.status).toBe('success');
    const mined = await destination.getTransaction({ hash: droppedHash });
    expect(BigInt(mined.nonce)).toBe(droppedNonce);
    expect(await isFilled(dropped.requestId)).toBe(true);
    expect(await destination.getBalance({ address: first })).toBe(dropped.amountOut);
    expect(await destination.getTransactionCount({ address: solver, blockTag: 'latest' })).toBe(
      Number(droppedNonce) + 2,
    );
  });

  it('is signed again on a fresh nonce when another transaction of the key took its nonce', async () => {
    const destination = publicClientOf(chainB);
    const destinationTest = createTestClient({
      mode: 'anvil',
      chain: devnetViemChain(chainB),
      transport: http(chainB.rpcUrl),
    });
    const solverAccount = privateKeyToAccount(gateway.devnet.descriptor.solver.privateKey);
    const recipient = '0x00000000000000000000000000000000000e0e05' as Address;

    const snapshot = await destinationTest.snapshot();
    const dropped = await fillOne(recipient);
    const droppedHash = dropped.row.hashes.at(-1)! as Hex;
    const droppedNonce = dropped.row.nonce!;
    const { blockNumber: fillBlock } = await destination.getTransactionReceipt({ hash: droppedHash });
    // The watcher of B has read the fill's block, so the fork below replaces a block it knows.
    const watcher = gateway.server.solver!.watchers.get(chainB.chainId)!;
    while ((watcher.followedBlock() ?? 0n) < fillBlock) await sleep(50);

    await destinationTest.revert({ id: snapshot });
    await destinationTest.dropTransaction({ hash: droppedHash });
    // The solver's key is used elsewhere on the fill's nonce (an operator's own transfer): the nonce is spent.
    const other = await createWalletClient({
      account: solverAccount,
      chain: devnetViemChain(chainB),
      transport: http(chainB.rpcUrl),
    }).sendTransaction({ to: solverAccount.address, value: 0n, nonce: Number(droppedNonce) });
    expect((await destination.waitForTransactionReceipt({ hash: other })).status).toBe('success');
    await destinationTest.mine({ blocks: 2 });
    expect(await isFilled(dropped.requestId)).toBe(false);

    // The dropped fill is signed again on the next nonce and mined: its recipient is paid once.
    const deadline = Date.now() + 20_000;
    while (!(await isFilled(dropped.requestId))) {
      if (Date.now() > deadline) throw new Error('the dropped fill was not sent again');
      await sleep(100);
    }
    const row = await getLiveOutgoingTx(gateway.server.database.db, dropped.requestId, 'fill');
    expect(row!.nonce).toBe(droppedNonce + 1n);
    const resent = await destination.getTransactionReceipt({ hash: row!.hashes.at(-1)! as Hex });
    expect(resent.status).toBe('success');
    expect(await destination.getBalance({ address: recipient })).toBe(dropped.amountOut);
    expect(await fillTxs(0n, dropped.requestId)).toEqual([resent.transactionHash]);
  });
});
