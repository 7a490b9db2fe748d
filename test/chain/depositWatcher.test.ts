/**
 * The deposit watcher against a real anvil chain and PGlite: deposits seen, confirmed at the configured depth and
 * handed on exactly once; the cursor across restarts; backfill in bounded ranges; deposits inside another
 * contract's call found by `indexTransaction`; reorgs (snapshot, revert, re-mine); an unreachable RPC.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeFunctionData, erc20Abi, parseEther, parseUnits, toHex, zeroAddress, type Hex } from 'viem';
import { depositoryAbi, multicallerAbi, receiverAbi } from '../../generated/contracts/index.js';
import { createChainClients } from '../../src/chain/clients.js';
import { createDepositWatcher, DEPOSITS_CURSOR } from '../../src/chain/depositWatcher.js';
import type { ChainConfig } from '../../src/core/chains/types.js';
import type { Logger } from '../../src/core/logger.js';
import { GatewayError } from '../../src/core/errors.js';
import type { DepositWatcher } from '../../src/core/ports/solver.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';
import { getCursor } from '../../src/store/cursors.repository.js';
import { createDatabase, type Database } from '../../src/store/database.js';
import { listDepositsForRequest, updateDepositStatus } from '../../src/store/deposits.repository.js';
import type { DepositRecord } from '../../src/records/deposit.js';
import { useDevnet } from '../helpers/anvil.js';
import { truncateAll } from '../helpers/db.js';

const devnet = useDevnet();
let database: Database;

beforeAll(async () => {
  database = await createDatabase();
  await database.migrate();
});
afterAll(async () => {
  await database?.close();
});

const running: DepositWatcher[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((watcher) => watcher.stop()));
  await devnet.testClient.setAutomine(true);
  await truncateAll(database);
  // Each test's first watcher starts at the head: make it a block without the previous test's deposits.
  await devnet.testClient.mine({ blocks: 1 });
});

let idCounter = 0;
/** A fresh request id per deposit. */
const newId = (): Hex => toHex(0xd0_0000 + ++idCounter, { size: 32 });
const user = () => devnet.descriptor.accounts[0]!;
const contracts = () => devnet.chain.contracts;
const usdc = () => devnet.chain.tokens.find((token) => token.id === 'usdc')!.address;

interface LogEntry {
  level: keyof Logger;
  obj: object;
  msg: string | undefined;
}

interface WatcherHarness {
  watcher: DepositWatcher;
  chain: ChainConfig;
  /** What `onConfirmed` received, in order. */
  handed: DepositRecord[];
  logs: LogEntry[];
  /** JSON-RPC calls the watcher's client made. */
  rpc: Array<{ method: string; params: any[] }>;
  /** Settles the consumer's pending writes (when it consumes). */
  settled(): Promise<void>;
}

interface WatcherOptions {
  confirmations?: number;
  rpcUrl?: string;
  startBlock?: bigint;
  pollIntervalMs?: number;
  maxBlockRange?: bigint;
  cursorWriteIntervalMs?: number;
  /** Mark each handed-on deposit `consumed`, as the solver does once it has acted on it. */
  consume?: boolean;
}

function makeWatcher(options: WatcherOptions = {}): WatcherHarness {
  const base = devnetChainConfigs(devnet.descriptor)[0]!;
  const chain: ChainConfig = {
    ...base,
    confirmations: options.confirmations ?? 3,
    httpRpcUrl: options.rpcUrl ?? base.httpRpcUrl,
  };
  const rpc: WatcherHarness['rpc'] = [];
  const client = createChainClients([chain], {
    timeout: 1_000,
    onFetchRequest: (_request, init) => {
      if (typeof init.body !== 'string') throw new Error('expected viem to post JSON-RPC as text');
      const body = JSON.parse(init.body) as
        { method: string; params: any[] } | Array<{ method: string; params: any[] }>;
      rpc.push(...(Array.isArray(body) ? body : [body]));
    },
  }).get(chain.id)!;
  const logs: LogEntry[] = [];
  const at = (level: keyof Logger) => (obj: object, msg?: string) => void logs.push({ level, obj, msg });
  const handed: DepositRecord[] = [];
  const writes: Promise<unknown>[] = [];
  const watcher = createDepositWatcher({
    chain,
    client,
    db: database.db,
    log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
    now: () => Date.now(),
    pollIntervalMs: options.pollIntervalMs ?? 20,
    ...(options.startBlock === undefined ? {} : { startBlock: options.startBlock }),
    ...(options.maxBlockRange === undefined ? {} : { maxBlockRange: options.maxBlockRange }),
    ...(options.cursorWriteIntervalMs === undefined ? {} : { cursorWriteIntervalMs: options.cursorWriteIntervalMs }),
    onConfirmed: (deposit) => {
      handed.push(deposit);
      if (options.consume) {
        writes.push(
          updateDepositStatus(database.db, deposit.id, {
            status: 'consumed',
            fromStatus: 'confirmed',
            now: Date.now(),
          }),
        );
      }
    },
  });
  running.push(watcher);
  return { watcher, chain, handed, logs, rpc, settled: async () => void (await Promise.all(writes)) };
}

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The one deposit recorded for `requestId`, once it has `status`. */
const depositWith = (requestId: Hex, status: DepositRecord['status']) =>
  waitFor(`deposit ${requestId} ${status}`, async () => {
    const [deposit, ...more] = await listDepositsForRequest(database.db, requestId);
    expect(more).toEqual([]);
    return deposit?.status === status ? deposit : undefined;
  });

/**
 * Lets the watcher made last catch up with the head (the last block it read reaches it; the stored cursor may be
 * behind), plus a few polls.
 */
async function caughtUp(): Promise<void> {
  const head = await devnet.publicClient.getBlockNumber({ cacheTime: 0 });
  const watcher = running.at(-1)!;
  await waitFor('the watcher to read up to the head', async () => (watcher.followedBlock() ?? -1n) >= head);
  await sleep(150);
}

const depositNativeData = (id: Hex) =>
  encodeFunctionData({ abi: depositoryAbi, functionName: 'depositNative', args: [user().address, id] });

function sendDepositNative(id: Hex, value = parseEther('0.01')): Promise<Hex> {
  return devnet.wallet(user()).sendTransaction({ to: contracts().depository, data: depositNativeData(id), value });
}

function sendDepositUsdc(id: Hex, amount: bigint): Promise<Hex> {
  return devnet.wallet(user()).writeContract({
    address: contracts().depository,
    abi: depositoryAbi,
    functionName: 'depositErc20',
    args: [user().address, usdc(), amount, id],
  });
}

function sendForward(id: Hex, value: bigint): Promise<Hex> {
  return devnet
    .wallet(user())
    .writeContract({ address: contracts().receiver, abi: receiverAbi, functionName: 'forward', args: [id], value });
}

const depositNative = async (id: Hex, value?: bigint) => devnet.mined(sendDepositNative(id, value));

describe('following deposits', () => {
  it('records native, ERC-20 and forwarded deposits as seen, confirms them at depth 3 and hands each on once', async () => {
    await devnet.approve(user(), usdc(), contracts().depository, parseUnits('5', 6));
    const { watcher, handed } = makeWatcher({ confirmations: 3 });
    await watcher.start();

    // All three in one block (b): several deposit logs of one block, each its own row.
    const ids = [newId(), newId(), newId()] as const;
    await devnet.testClient.setAutomine(false);
    const hashes = [
      await sendDepositNative(ids[0], parseEther('1')),
      await sendDepositUsdc(ids[1], parseUnits('5', 6)),
      await sendForward(ids[2], parseEther('0.5')),
    ];
    await devnet.testClient.mine({ blocks: 1 });
    await devnet.testClient.setAutomine(true);
    const receipts = await Promise.all(hashes.map((hash) => devnet.mined(hash)));
    const block = receipts[0]!.blockNumber;
    expect(receipts.every((receipt) => receipt.blockNumber === block)).toBe(true);

    const seen = (await Promise.all(ids.map((id) => depositWith(id, 'seen')))) as [
      DepositRecord,
      DepositRecord,
      DepositRecord,
    ];
    const common = {
      chainId: devnet.chain.chainId,
      blockNumber: block,
      blockHash: receipts[0]!.blockHash,
      status: 'seen',
    };
    expect(seen[0]).toMatchObject({
      ...common,
      txHash: hashes[0],
      requestId: ids[0],
      depositor: user().address.toLowerCase(),
      // Read from the transaction, not the event: the solver tells the order's user by it.
      sender: user().address.toLowerCase(),
      token: zeroAddress,
      amount: parseEther('1'),
    });
    expect(typeof seen[0].depositIndex).toBe('bigint');
    expect(seen[1]).toMatchObject({ ...common, txHash: hashes[1], token: usdc().toLowerCase(), amount: 5_000_000n });
    expect(seen[1].depositIndex).toBe(seen[0].depositIndex! + 1n);
    // The receiver forwards native straight to the solver: no depository index.
    expect(seen[2]).toMatchObject({
      ...common,
      txHash: hashes[2],
      token: zeroAddress,
      amount: parseEther('0.5'),
      depositIndex: null,
    });
    expect(new Set(seen.map((deposit) => deposit.logIndex)).size).toBe(3);

    // Depth 1 and 2: not yet.
    await caughtUp();
    expect(handed).toEqual([]);
    await devnet.testClient.mine({ blocks: 1 });
    await caughtUp();
    expect(handed).toEqual([]);
    expect((await listDepositsForRequest(database.db, ids[0]))[0]!.status).toBe('seen');

    // Depth 3: confirmed and handed on, each once, however many blocks follow.
    await devnet.testClient.mine({ blocks: 1 });
    const confirmed = (await Promise.all(ids.map((id) => depositWith(id, 'confirmed')))) as [
      DepositRecord,
      ...DepositRecord[],
    ];
    await devnet.testClient.mine({ blocks: 5 });
    await caughtUp();
    expect(handed.map((deposit) => deposit.id).sort()).toEqual(confirmed.map((deposit) => deposit.id).sort());
    expect(handed.find((deposit) => deposit.id === confirmed[0].id)).toEqual(confirmed[0]);
    // The block's three were confirmed together (one statement, one clock reading) and handed on in log order.
    expect(handed.map((deposit) => deposit.logIndex)).toEqual(
      seen.map((deposit) => deposit.logIndex).sort((a, b) => a - b),
    );
    expect(new Set(handed.map((deposit) => deposit.updatedAt)).size).toBe(1);
  });

  it('keeps its cursor across restarts: nothing handed on twice, nothing missed while stopped', async () => {
    const first = makeWatcher({ confirmations: 1, consume: true });
    await first.watcher.start();
    const before = newId();
    await depositNative(before);
    await depositWith(before, 'consumed');
    await first.watcher.stop();
    await first.settled();
    expect(first.handed.map((deposit) => deposit.requestId)).toEqual([before]);

    // While nobody watches.
    const whileStopped = [newId(), newId()] as const;
    await depositNative(whileStopped[0]);
    await devnet.testClient.mine({ blocks: 10 });
    await depositNative(whileStopped[1]);

    // The restart resumes at the cursor; `start` resolves once it has caught up.
    const second = makeWatcher({ confirmations: 1 });
    await second.watcher.start();
    expect(second.handed.map((deposit) => deposit.requestId)).toEqual(whileStopped);
    expect(second.handed.every((deposit) => deposit.status === 'confirmed')).toBe(true);
    await second.watcher.stop();

    // Handed on but never consumed (a crash before the solver acted): handed on again at the next start, and
    // only those.
    const third = makeWatcher({ confirmations: 1 });
    await third.watcher.start();
    expect(third.handed.map((deposit) => deposit.requestId)).toEqual(whileStopped);
    const later = newId();
    await depositNative(later);
    await depositWith(later, 'confirmed');
    await caughtUp();
    expect(third.handed.map((deposit) => deposit.requestId)).toEqual([...whileStopped, later]);
  });

  it('stores its cursor with the deposits it read, after empty blocks only now and then, and where it stopped', async () => {
    // A minute: no empty block is stored during the test (the first pass may store one, for an older cursor).
    const { watcher } = makeWatcher({ confirmations: 1, cursorWriteIntervalMs: 60_000 });
    await watcher.start();
    const storedBlock = async () => (await getCursor(database.db, devnet.chain.chainId, DEPOSITS_CURSOR))!.blockNumber;
    const storedAtStart = await storedBlock();
    const readAtStart = watcher.followedBlock()!;
    expect(readAtStart).toBeGreaterThanOrEqual(storedAtStart);

    // Empty blocks: read (the last block read moves), not stored.
    await devnet.testClient.mine({ blocks: 5 });
    await caughtUp();
    expect(watcher.followedBlock()).toBe(readAtStart + 5n);
    expect(await storedBlock()).toBe(storedAtStart);

    // A block with a deposit: stored in the deposit's transaction.
    const id = newId();
    const receipt = await depositNative(id);
    await depositWith(id, 'confirmed');
    expect(await storedBlock()).toBeGreaterThanOrEqual(receipt.blockNumber);

    // Empty blocks again, then a stop: the stored cursor is where the watcher stopped.
    await devnet.testClient.mine({ blocks: 3 });
    await caughtUp();
    const followed = watcher.followedBlock()!;
    expect(await storedBlock()).toBeLessThan(followed);
    await watcher.stop();
    expect(await storedBlock()).toBe(followed);
  });

  // Backfill in bounded ranges. anvil 1.7.1 mines ever more slowly as its chain grows (1,000 blocks take ~3 s,
  // 5,000 take ~50 s), so the range is shortened to 100 blocks instead of mining tens of thousands of blocks.
  it('backfills hundreds of blocks in ranges of at most maxBlockRange blocks, one eth_getLogs over both contracts each', async () => {
    const first = makeWatcher({ confirmations: 1 });
    await first.watcher.start();
    await first.watcher.stop();
    const from = (await getCursor(database.db, devnet.chain.chainId, DEPOSITS_CURSOR))!.blockNumber;

    const ids = [newId(), newId(), newId()] as const;
    await depositNative(ids[0]);
    await devnet.testClient.mine({ blocks: 330 });
    await sendForward(ids[1], 1n).then(devnet.mined);
    await devnet.testClient.mine({ blocks: 200 });
    await depositNative(ids[2]);
    const head = await devnet.publicClient.getBlockNumber({ cacheTime: 0 });

    const second = makeWatcher({ confirmations: 1, maxBlockRange: 100n });
    await second.watcher.start();
    expect(second.handed.map((deposit) => deposit.requestId)).toEqual(ids);
    expect((await getCursor(database.db, devnet.chain.chainId, DEPOSITS_CURSOR))!.blockNumber).toBe(head);

    const ranges = second.rpc
      .filter((call) => call.method === 'eth_getLogs')
      .map((call) => ({
        from: BigInt(call.params[0].fromBlock),
        to: BigInt(call.params[0].toBlock),
        address: call.params[0].address,
      }));
    expect(ranges.length).toBe(Math.ceil(Number(head - from) / 100));
    expect(ranges[0]!.from).toBe(from + 1n);
    expect(ranges.at(-1)!.to).toBe(head);
    for (const [i, range] of ranges.entries()) {
      expect(range.to - range.from + 1n).toBeLessThanOrEqual(100n);
      if (i > 0) expect(range.from).toBe(ranges[i - 1]!.to + 1n);
      expect(range.address.map((a: string) => a.toLowerCase()).sort()).toEqual(
        [contracts().depository, contracts().receiver].map((a) => a.toLowerCase()).sort(),
      );
    }
  });

  it('starts at the head on its first run, or at startBlock when configured', async () => {
    const old = newId();
    const { blockNumber } = await depositNative(old);
    await devnet.testClient.mine({ blocks: 3 });

    const fromHead = makeWatcher({ confirmations: 1 });
    await fromHead.watcher.start();
    await fromHead.watcher.stop();
    expect(fromHead.handed).toEqual([]);
    expect(await listDepositsForRequest(database.db, old)).toEqual([]);

    await truncateAll(database);
    const fromStart = makeWatcher({ confirmations: 1, startBlock: blockNumber });
    await fromStart.watcher.start();
    expect(fromStart.handed.map((deposit) => deposit.requestId)).toEqual([old]);
  });
});

describe('indexTransaction', () => {
  /** Deposits native through the public Multicaller: the Deposit event comes from an internal call. */
  async function depositThroughMulticaller(id: Hex, value: bigint) {
    return devnet.mined(
      devnet.wallet(user()).writeContract({
        address: contracts().multicaller,
        abi: multicallerAbi,
        functionName: 'multicall',
        args: [[{ to: contracts().depository, data: depositNativeData(id), value, allowFailure: false }], zeroAddress],
        value,
      }),
    );
  }

  it('finds a deposit made inside another contract call, confirms it and hands it on once', async () => {
    // Following, but polling rarely: what is found here is found by indexTransaction.
    const { watcher, handed } = makeWatcher({ confirmations: 1, pollIntervalMs: 60_000 });
    await watcher.start();
    const id = newId();
    const receipt = await depositThroughMulticaller(id, parseEther('0.2'));

    const [deposit, ...rest] = await watcher.indexTransaction(receipt.transactionHash);
    expect(rest).toEqual([]);
    expect(deposit).toMatchObject({
      requestId: id,
      txHash: receipt.transactionHash,
      blockNumber: receipt.blockNumber,
      depositor: user().address.toLowerCase(),
      // The outer transaction's sender, though the depository was called by the multicaller.
      sender: user().address.toLowerCase(),
      token: zeroAddress,
      amount: parseEther('0.2'),
      status: 'confirmed',
    });
    expect(handed).toEqual([deposit]);

    // Again: the same record, not handed on twice.
    expect(await watcher.indexTransaction(receipt.transactionHash)).toEqual([deposit]);
    expect(handed).toHaveLength(1);

    // A transaction without deposits, and one the chain does not have.
    const approve = await devnet.mined(
      devnet
        .wallet(user())
        .writeContract({ address: usdc(), abi: erc20Abi, functionName: 'approve', args: [contracts().depository, 1n] }),
    );
    expect(await watcher.indexTransaction(approve.transactionHash)).toEqual([]);
    const missing = await watcher.indexTransaction(toHex(1, { size: 32 })).catch((error: unknown) => error);
    expect(missing).toBeInstanceOf(GatewayError);
    expect(missing).toMatchObject({ code: 'NOT_FOUND', status: 404 });

    // stop() does not wait for the 60 s poll interval.
    const stopping = Date.now();
    await watcher.stop();
    expect(Date.now() - stopping).toBeLessThan(1_000);
  });

  it('records a shallow deposit as seen; the polling loop confirms it at depth', async () => {
    const { watcher, handed } = makeWatcher({ confirmations: 3 });
    const id = newId();
    const receipt = await depositThroughMulticaller(id, parseEther('0.1'));
    // Not started: indexTransaction works on its own.
    expect(await watcher.indexTransaction(receipt.transactionHash)).toMatchObject([{ requestId: id, status: 'seen' }]);
    expect(handed).toEqual([]);

    await watcher.start();
    await devnet.testClient.mine({ blocks: 2 });
    const confirmed = await depositWith(id, 'confirmed');
    await caughtUp();
    expect(handed).toEqual([confirmed]);
  });
});

describe('reorgs', () => {
  it('removes a deposit whose block was reorged away before its depth, and revives it when re-mined', async () => {
    // The rewind reads the last 64 blocks again: keep earlier tests' deposits (unknown to the emptied database)
    // out of that window.
    await devnet.testClient.mine({ blocks: 70 });
    const { watcher, handed, logs } = makeWatcher({ confirmations: 3 });
    await watcher.start();
    const wallet = devnet.wallet(user());
    const id = newId();
    const snapshot = await devnet.testClient.snapshot();

    // Signed once, so the very same transaction can be mined again after the reorg.
    const request = await wallet.prepareTransactionRequest({
      to: contracts().depository,
      data: depositNativeData(id),
      value: parseEther('0.3'),
    });
    const raw = await wallet.signTransaction(request);
    const original = await devnet.mined(devnet.publicClient.sendRawTransaction({ serializedTransaction: raw }));
    const seen = await depositWith(id, 'seen');
    expect(seen.blockHash).toBe(original.blockHash);

    // Reorg: the deposit's block is replaced by empty ones, to where it would have been 3 deep.
    await devnet.testClient.revert({ id: snapshot });
    await devnet.testClient.mine({ blocks: 3 });
    const removed = await depositWith(id, 'removed');
    expect(removed.id).toBe(seen.id);
    await devnet.testClient.mine({ blocks: 3 });
    await caughtUp();
    expect(handed).toEqual([]);
    expect((await listDepositsForRequest(database.db, id))[0]!.status).toBe('removed');
    expect(logs.some((entry) => entry.level === 'warn' && entry.msg === 'deposit removed by a reorg')).toBe(true);

    // The same transaction re-included later: the same log, seen again in its new block, then confirmed once.
    const remined = await devnet.mined(devnet.publicClient.sendRawTransaction({ serializedTransaction: raw }));
    expect(remined.transactionHash).toBe(original.transactionHash);
    expect(remined.blockNumber).toBeGreaterThan(original.blockNumber);
    const revived = await waitFor('the deposit seen again', async () => {
      const [deposit] = await listDepositsForRequest(database.db, id);
      return deposit?.status === 'seen' && deposit.blockHash === remined.blockHash ? deposit : undefined;
    });
    expect(revived).toMatchObject({ id: seen.id, blockNumber: remined.blockNumber });
    await devnet.testClient.mine({ blocks: 2 });
    const confirmed = await depositWith(id, 'confirmed');
    await caughtUp();
    expect(handed).toEqual([confirmed]);
    expect(confirmed.blockHash).toBe(remined.blockHash);
  });
});

describe('an unreachable RPC', () => {
  /**
   * A TCP forwarder in front of anvil. Closing it makes the RPC port refuse connections (a real network failure
   * that anvil itself cannot produce without losing its chain); reopening it on the same port brings it back.
   */
  async function startProxy(target: string) {
    let server: Server | undefined;
    let port = 0;
    const up = async () => {
      const relay = async (request: IncomingMessage, response: ServerResponse) => {
        const chunks: Buffer[] = [];
        for await (const chunk of request) chunks.push(chunk as Buffer);
        try {
          const upstream = await fetch(target, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: Buffer.concat(chunks),
          });
          response.writeHead(upstream.status, { 'content-type': 'application/json' }).end(await upstream.text());
        } catch {
          response.destroy();
        }
      };
      server = createServer((request, response) => void relay(request, response));
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    };
    const down = async () => {
      const closing = server;
      server = undefined;
      if (closing === undefined) return;
      closing.closeAllConnections();
      await new Promise((resolve) => closing.close(resolve));
    };
    await up();
    return { url: () => `http://127.0.0.1:${port}`, up, down };
  }

  it('logs and retries while the RPC is down, never throws, and catches up when it is back', async () => {
    const proxy = await startProxy(devnet.chain.rpcUrl);
    try {
      const { watcher, handed, logs } = makeWatcher({ confirmations: 1, rpcUrl: proxy.url() });
      await proxy.down();
      // start() does not fail on an unreachable RPC: it logs and keeps trying.
      await watcher.start();
      expect(logs.filter((entry) => entry.level === 'warn').map((entry) => entry.msg)).toEqual([
        'deposit watcher poll failed; retrying on the next poll',
      ]);

      const first = newId();
      await depositNative(first);
      await sleep(300);
      expect(await listDepositsForRequest(database.db, first)).toEqual([]);

      await proxy.up();
      await depositWith(first, 'confirmed');
      // Logged when the pass that stored the deposit ends, which may be just after the row is visible.
      await vi.waitFor(() =>
        expect(logs.some((entry) => entry.msg === 'deposit watcher: RPC answers again')).toBe(true),
      );

      // Down again while following: the deposit made meanwhile is found once it is back.
      await proxy.down();
      const second = newId();
      await depositNative(second);
      await devnet.testClient.mine({ blocks: 5 });
      await sleep(300);
      expect(await listDepositsForRequest(database.db, second)).toEqual([]);
      await proxy.up();
      await depositWith(second, 'confirmed');
      expect(handed.map((deposit) => deposit.requestId)).toEqual([first, second]);
      // Repeated failures during one outage are logged once at warn.
      expect(logs.filter((entry) => entry.level === 'warn')).toHaveLength(2);

      // stop() while the RPC is down returns promptly.
      await proxy.down();
      await sleep(100);
      const stopping = Date.now();
      await watcher.stop();
      expect(Date.now() - stopping).toBeLessThan(2_500);
    } finally {
      await proxy.down();
    }
  });
});
