/**
 * Pushed heads (`src/chain/heads.ts`) against a real anvil chain: the feed subscribes over the node's websocket,
 * the deposit watcher acts on a pushed head without waiting for its poll, and when the socket is cut mid-run the
 * watcher's polling finds every deposit until the feed reconnects by itself.
 *
 * The socket is cut by a TCP relay between the feed and anvil (this file's own fault injector: anvil cannot be
 * made to drop one websocket while it keeps serving HTTP). The relay refuses new connections while it is cut.
 */
import { createServer, type Server, type Socket, connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, parseEther, toHex, type Hex } from 'viem';
import { depositoryAbi } from '../../generated/contracts/index.js';
import { createChainClients } from '../../src/chain/clients.js';
import { createDepositWatcher } from '../../src/chain/depositWatcher.js';
import { createHeadFeed, type Head, type HeadFeed } from '../../src/chain/heads.js';
import { EMPTY_TRIE_ROOT } from '../../src/chain/logsBloom.js';
import type { ChainConfig } from '../../src/core/chains/types.js';
import type { Logger } from '../../src/core/logger.js';
import type { DepositWatcher } from '../../src/core/ports/solver.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';
import { createDatabase, type Database } from '../../src/store/database.js';
import { listDepositsForRequest } from '../../src/store/deposits.repository.js';
import type { DepositRecord } from '../../src/records/deposit.js';
import { recordRpcMethods, useDevnet } from '../helpers/anvil.js';
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

const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  await truncateAll(database);
  await devnet.testClient.mine({ blocks: 1 });
});

/** A TCP relay to the chain's RPC port that can cut every connection and refuse new ones until restored. */
interface Relay {
  url: string;
  cut(): void;
  restore(): void;
  connections(): number;
}

async function startRelay(targetUrl: string): Promise<Relay> {
  const target = new URL(targetUrl);
  const open = new Set<Socket>();
  let refusing = false;
  let accepted = 0;
  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    accepted++;
    const upstream = connect(Number(target.port), target.hostname);
    open.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stops.push(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of open) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    cut() {
      refusing = true;
      for (const socket of open) socket.destroy();
      open.clear();
    },
    restore() {
      refusing = false;
    },
    connections: () => accepted,
  };
}

interface LogEntry {
  level: keyof Logger;
  msg: string | undefined;
}

function recordingLogger(): { log: Logger; entries: LogEntry[] } {
  const entries: LogEntry[] = [];
  const at = (level: keyof Logger) => (_obj: object, msg?: string) => void entries.push({ level, msg });
  return { log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, entries };
}

function startFeed(url: string, log: Logger): HeadFeed {
  const feed = createHeadFeed({ chainId: devnet.chain.chainId, url, log, connectTimeoutMs: 1_000 });
  feed.start();
  stops.push(() => feed.stop());
  return feed;
}

async function waitFor<T>(what: string, probe: () => T | undefined | false, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function waitForAsync<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

let idCounter = 0;
const newId = (): Hex => toHex(0xfe_0000 + ++idCounter, { size: 32 });
const user = () => devnet.descriptor.accounts[0]!;

const depositNative = (id: Hex) =>
  devnet.mined(
    devnet.wallet(user()).sendTransaction({
      to: devnet.chain.contracts.depository,
      data: encodeFunctionData({ abi: depositoryAbi, functionName: 'depositNative', args: [user().address, id] }),
      value: parseEther('0.01'),
    }),
  );

function startWatcher(feed: HeadFeed, pollIntervalMs: number, log: Logger, confirmations = 1, rpcMethods?: string[]) {
  const base = devnetChainConfigs(devnet.descriptor)[0]!;
  // Automine: `blockTime` 0 would make the backup poll as fast as the fallback; one second is the devnet's.
  const chain: ChainConfig = { ...base, confirmations, blockTime: 1 };
  const onFetchRequest = rpcMethods === undefined ? undefined : recordRpcMethods(rpcMethods);
  const client = createChainClients([chain], { timeout: 1_000, onFetchRequest }).get(chain.id)!;
  const handed: DepositRecord[] = [];
  const watcher: DepositWatcher = createDepositWatcher({
    chain,
    client,
    db: database.db,
    log,
    now: () => Date.now(),
    pollIntervalMs,
    heads: feed,
    onConfirmed: (deposit) => handed.push(deposit),
  });
  stops.push(() => watcher.stop());
  return { watcher, handed };
}

describe('the head feed', () => {
  it('subscribes over the websocket and pushes every new head, in order, with its hash', async () => {
    const { log } = recordingLogger();
    const feed = startFeed(devnet.chain.wsUrl, log);
    await waitFor('the subscription', () => feed.live());
    const heads: Head[] = [];
    feed.onHead((head) => heads.push(head));

    const before = await devnet.publicClient.getBlockNumber({ cacheTime: 0 });
    await devnet.testClient.mine({ blocks: 3 });
    await waitFor('three heads', () => heads.length >= 3);

    expect(heads.map((head) => head.number)).toEqual([before + 1n, before + 2n, before + 3n]);
    const block = await devnet.publicClient.getBlock({ blockNumber: before + 3n });
    expect(heads[2]!.hash).toBe(block.hash.toLowerCase());
  });

  it('hands a deposit on from a pushed head, with polling alone far too slow to have found it', async () => {
    const { log } = recordingLogger();
    const feed = startFeed(devnet.chain.wsUrl, log);
    await waitFor('the subscription', () => feed.live());
    // Polling every 10 minutes: within this test only a pushed head can start the pass that finds the deposit.
    const { watcher, handed } = startWatcher(feed, 600_000, log);
    await watcher.start();

    const id = newId();
    await depositNative(id);
    const deposit = await waitFor('the deposit handed on', () => handed.find((d) => d.requestId === id));
    expect(deposit.status).toBe('confirmed');
  });

  it("reads no logs for a pushed head whose block holds no transaction or none of its contracts' logs, and still finds the next deposit", async () => {
    const { log } = recordingLogger();
    const feed = startFeed(devnet.chain.wsUrl, log);
    await waitFor('the subscription', () => feed.live());
    const rpcMethods: string[] = [];
    const { watcher, handed } = startWatcher(feed, 600_000, log, 1, rpcMethods);
    await watcher.start();
    const seen: Head[] = [];
    feed.onHead((head) => seen.push(head));

    // Empty blocks one at a time, as a chain with a block time mines them (a burst of heads is read as one range of
    // blocks, with eth_getLogs: only a single pushed block is judged by its header).
    rpcMethods.length = 0;
    for (let i = 0; i < 5; i++) {
      const count = seen.length;
      await devnet.testClient.mine({ blocks: 1 });
      await waitFor('the empty head', () => seen.length > count);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(seen.slice(-5).map((head) => head.transactionsRoot)).toEqual(Array(5).fill(EMPTY_TRIE_ROOT));
    expect(rpcMethods.filter((method) => method === 'eth_getLogs')).toEqual([]);

    // A block with another contract's log (a token's Approval): its bloom lacks the depository and the receiver.
    const token = devnet.chain.tokens[0]!.address;
    const count = seen.length;
    await devnet.approve(user(), token, '0x00000000000000000000000000000000deadbeef', 1n);
    await waitFor('the approval head', () => seen.length > count);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(seen.at(-1)!.transactionsRoot).not.toBe(EMPTY_TRIE_ROOT);
    expect(seen.at(-1)!.logsBloom).not.toBe(`0x${'0'.repeat(512)}`);
    expect(rpcMethods.filter((method) => method === 'eth_getLogs')).toEqual([]);

    const id = newId();
    await depositNative(id);
    const deposit = await waitFor('the deposit handed on', () => handed.find((d) => d.requestId === id));
    expect(deposit.status).toBe('confirmed');
    expect(rpcMethods.filter((method) => method === 'eth_getLogs').length).toBeGreaterThanOrEqual(1);
  });

  it('drops a deposit reorged away before its confirmation, acting on pushed heads only', async () => {
    const { log } = recordingLogger();
    const feed = startFeed(devnet.chain.wsUrl, log);
    await waitFor('the subscription', () => feed.live());
    // A rewind reads the last 64 blocks again: earlier tests' deposits (their rows are gone) must lie before them.
    await devnet.testClient.mine({ blocks: 70 });
    const { watcher, handed } = startWatcher(feed, 600_000, log, 3);
    await watcher.start();
    const snapshot = await devnet.testClient.snapshot();

    const id = newId();
    const original = await depositNative(id);
    const statusOf = async () => (await listDepositsForRequest(database.db, id))[0];
    const seen = await waitForAsync('the deposit seen', async () => (await statusOf())?.status === 'seen');
    expect(seen).toBe(true);

    // The deposit's block is replaced by empty ones: the pushed heads carry the new chain, whose parent hash no
    // longer matches the watcher's cursor.
    await devnet.testClient.revert({ id: snapshot });
    await devnet.testClient.mine({ blocks: 4 });
    const removed = await waitForAsync('the deposit removed', async () => {
      const deposit = await statusOf();
      return deposit?.status === 'removed' ? deposit : undefined;
    });
    expect(removed.blockHash).toBe(original.blockHash.toLowerCase());
    expect(handed).toEqual([]);
  });

  it('misses no deposit when the socket is cut mid-run: polling finds them, and the feed reconnects by itself', async () => {
    const relay = await startRelay(devnet.chain.wsUrl);
    const { log, entries } = recordingLogger();
    const feed = startFeed(relay.url, log);
    await waitFor('the subscription', () => feed.live());
    const { watcher, handed } = startWatcher(feed, 100, log);
    await watcher.start();

    const before = newId();
    await depositNative(before);
    await waitFor('the deposit before the cut', () => handed.some((d) => d.requestId === before));

    relay.cut();
    await waitFor('the feed to notice the cut', () => !feed.live());
    const during = [newId(), newId()];
    for (const id of during) await depositNative(id);
    await waitFor('the deposits made while the socket was down', () =>
      during.every((id) => handed.some((d) => d.requestId === id)),
    );
    expect(feed.live()).toBe(false);
    expect(entries.some((entry) => entry.level === 'warn' && /websocket closed/.test(entry.msg ?? ''))).toBe(true);

    const connectionsBefore = relay.connections();
    relay.restore();
    await waitFor('the feed to subscribe again', () => feed.live());
    expect(relay.connections()).toBeGreaterThan(connectionsBefore);
    const after = newId();
    await depositNative(after);
    await waitFor('the deposit after the reconnection', () => handed.some((d) => d.requestId === after));

    // Each deposit handed on exactly once, whichever of the push and the poll found it.
    const ids = handed.map((d) => d.requestId);
    expect(ids.sort()).toEqual([before, ...during, after].sort());
  });

  it('stops cleanly while it cannot connect, and never throws', async () => {
    const { log } = recordingLogger();
    const relay = await startRelay(devnet.chain.wsUrl);
    relay.cut();
    const feed = createHeadFeed({ chainId: devnet.chain.chainId, url: relay.url, log, connectTimeoutMs: 500 });
    feed.start();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(feed.live()).toBe(false);
    await feed.stop();
    expect(feed.live()).toBe(false);
  });
});
