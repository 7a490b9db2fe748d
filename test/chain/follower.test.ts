/**
 * The chain follower (`src/chain/follower/`) on its own, on a real anvil, with a watcher of every transaction
 * (`follower/txFollower.ts`) as its hooks: reorgs made with `evm_snapshot` / `evm_revert` (before a record's
 * confirmation, of the cursor's own block while following and while stopped, and a transaction mined again in
 * another block), and a crash made by killing a follower's process in the middle of a backfill. The deposit
 * watchers' own reorg and crash tests (`depositWatcher.test.ts`, `test/depositAddresses/`, `test/solver/reorg.test.ts`)
 * run the same follower through their hooks.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  parseEther,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startAnvil, type AnvilInstance } from '../../src/chain/anvil.js';
import type { ChainFollower } from '../../src/chain/follower/follower.js';
import type { Logger } from '../../src/core/logger.js';
import type { Database } from '../../src/store/database.js';
import { getCursor } from '../../src/store/cursors.repository.js';
import { useChildProcesses } from '../helpers/childProcess.js';
import { disposeTestDatabase, openTestDatabase, testDatabaseUrl } from '../helpers/db.js';
import {
  createTxFollower,
  createTxTable,
  listTxs,
  TX_FOLLOWER_CURSOR,
  type FollowedTx,
} from './follower/txFollower.js';

/** A chain id no devnet uses, so no other file's gateway can add blocks to this anvil. */
const CHAIN_ID = 31_391;
/** Anvil's first funded account. */
const KEY: Hex = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const RECIPIENT = '0x000000000000000000000000000000000000dEaD';

const spawnWatched = useChildProcesses();
let anvil: AnvilInstance;
let database: Database;
let client: PublicClient;
const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const followers: ChainFollower<FollowedTx>[] = [];

beforeAll(async () => {
  anvil = await startAnvil({ chainId: CHAIN_ID });
  database = await openTestDatabase('postgres');
  await createTxTable(database.db);
  client = createPublicClient({ transport: http(anvil.rpcUrl), pollingInterval: 20 });
}, 60_000);

afterAll(async () => {
  if (database !== undefined) await disposeTestDatabase(database);
  await anvil?.stop();
});

beforeEach(async () => {
  await sql`truncate table follower_test_txs, chain_cursors`.execute(database.db);
});

afterEach(async () => {
  for (const follower of followers.splice(0)) await follower.stop();
});

const testClient = () => createTestClient({ mode: 'anvil', transport: http(anvil.rpcUrl) });
const wallet = () => createWalletClient({ account: privateKeyToAccount(KEY), transport: http(anvil.rpcUrl) });

/** A transfer signed once, so the very same transaction can be mined again after a reorg. */
async function signTransfer(): Promise<Hex> {
  const signer = wallet();
  const request = await signer.prepareTransactionRequest({
    chain: null,
    to: RECIPIENT,
    value: parseEther('0.001'),
  });
  return signer.signTransaction({ ...request, chain: null });
}

async function send(raw: Hex) {
  const hash = await client.sendRawTransaction({ serializedTransaction: raw });
  return client.waitForTransactionReceipt({ hash, pollingInterval: 20 });
}

function follow(options: { confirmations?: number; reorgWindow?: bigint } = {}) {
  const confirmed: FollowedTx[] = [];
  const rewinds: bigint[] = [];
  const follower = createTxFollower({
    client,
    db: database.db,
    log: quiet,
    chainId: CHAIN_ID,
    confirmations: options.confirmations ?? 3,
    // Kept short, so the rewind never reads back the blocks of an earlier test (their rows are truncated).
    reorgWindow: options.reorgWindow ?? 4n,
    onConfirmed: (tx) => confirmed.push(tx),
    onRewind: (toBlock) => rewinds.push(toBlock),
  });
  followers.push(follower);
  return { follower, confirmed, rewinds };
}

async function until<T>(what: string, read: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const txWith = (hash: string, status: FollowedTx['status']) =>
  until(`${hash} ${status}`, async () =>
    (await listTxs(database.db)).find((tx) => tx.txHash === hash && tx.status === status),
  );

/** Waits until the follower has read up to the chain's head. */
const caughtUp = (follower: ChainFollower<FollowedTx>) =>
  until('the follower at the head', async () => {
    const head = await client.getBlockNumber({ cacheTime: 0 });
    return follower.followedBlock() === head ? head : undefined;
  });

it('confirms a transaction at its depth, once, and a transaction reorged away before it never', async () => {
  await testClient().mine({ blocks: 10 });
  const { follower, confirmed, rewinds } = follow();
  await follower.start();
  const snapshot = await testClient().snapshot();

  const raw = await signTransfer();
  const original = await send(raw);
  const seen = await txWith(original.transactionHash, 'seen');
  expect(seen.blockHash).toBe(original.blockHash);
  await caughtUp(follower);

  // Reorg: the transaction's block is replaced by empty ones, to where it would have been 3 deep.
  await testClient().revert({ id: snapshot });
  await testClient().mine({ blocks: 3 });
  await txWith(original.transactionHash, 'removed');
  expect(rewinds).toHaveLength(1);
  await testClient().mine({ blocks: 3 });
  await caughtUp(follower);
  expect(confirmed).toEqual([]);

  // The same transaction mined again later: seen in its new block, then confirmed there, once.
  const remined = await send(raw);
  expect(remined.blockNumber).toBeGreaterThan(original.blockNumber);
  await until('the transaction seen again', async () =>
    (await listTxs(database.db)).find((tx) => tx.status === 'seen' && tx.blockHash === remined.blockHash),
  );
  await testClient().mine({ blocks: 1 });
  await caughtUp(follower);
  expect(confirmed).toEqual([]);
  await testClient().mine({ blocks: 1 });
  const done = await txWith(original.transactionHash, 'confirmed');
  expect(done).toMatchObject({ blockNumber: remined.blockNumber, blockHash: remined.blockHash });
  await testClient().mine({ blocks: 5 });
  await caughtUp(follower);
  expect(confirmed).toEqual([done]);
});

it('rewinds from a cursor whose block was reorged away while it was stopped', async () => {
  await testClient().mine({ blocks: 10 });
  const first = follow();
  await first.follower.start();
  const snapshot = await testClient().snapshot();
  const original = await send(await signTransfer());
  await txWith(original.transactionHash, 'seen');
  await caughtUp(first.follower);
  await first.follower.stop();
  const stopped = await getCursor(database.db, CHAIN_ID, TX_FOLLOWER_CURSOR);
  expect(stopped).toMatchObject({ blockNumber: original.blockNumber, blockHash: original.blockHash });

  // While stopped, the stored cursor's block is replaced: the next start reads the window before it again.
  await testClient().revert({ id: snapshot });
  const replacement = await send(await signTransfer());
  expect(replacement.blockNumber).toBe(original.blockNumber);
  const second = follow();
  await second.follower.start();
  expect(second.rewinds).toEqual([original.blockNumber - 4n]);
  await txWith(original.transactionHash, 'removed');
  await txWith(replacement.transactionHash, 'seen');
  await testClient().mine({ blocks: 2 });
  await txWith(replacement.transactionHash, 'confirmed');
  await caughtUp(second.follower);
  expect(second.confirmed.map((tx) => tx.txHash)).toEqual([replacement.transactionHash]);
  expect(first.confirmed).toEqual([]);
});

it('after a kill in the middle of a backfill, a restart misses no transaction and confirms none twice', async () => {
  await testClient().mine({ blocks: 10 });
  // The stored cursor starts here: the backfill reads every block after it.
  const seed = follow();
  await seed.follower.start();
  await seed.follower.stop();
  const hashes: string[] = [];
  for (let i = 0; i < 40; i++) hashes.push((await send(await signTransfer())).transactionHash);

  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'follower/followerProcess.ts');
  const env = {
    FOLLOWER_DATABASE_URL: testDatabaseUrl,
    FOLLOWER_SCHEMA: database.schema!,
    FOLLOWER_RPC_URL: anvil.rpcUrl,
    FOLLOWER_CHAIN_ID: String(CHAIN_ID),
  };
  // The script runs in this node process itself (`--import tsx`), not under tsx's CLI, whose relay would leave the
  // script running when the CLI is killed with SIGKILL.
  const killed = spawnWatched(process.execPath, ['--import', 'tsx', script], { env });
  // Killed once it has confirmed a few, with most of the backfill still ahead (one block per range).
  await killed.waitFor(/(confirmed 0x[0-9a-f]+\n){5}/, 60_000);
  killed.child.kill('SIGKILL');
  await killed.exited;
  const before = await listTxs(database.db);
  expect(before.filter((tx) => tx.status === 'confirmed').length).toBeLessThan(hashes.length);

  // More blocks while it is down, then a restart.
  for (let i = 0; i < 5; i++) hashes.push((await send(await signTransfer())).transactionHash);
  await testClient().mine({ blocks: 2 });
  const restarted = spawnWatched(process.execPath, ['--import', 'tsx', script], { env });
  await until(
    'every transaction confirmed',
    async () => {
      const txs = await listTxs(database.db);
      return txs.filter((tx) => tx.status === 'confirmed').length === hashes.length ? txs : undefined;
    },
    60_000,
  );
  restarted.child.kill('SIGKILL');
  await restarted.exited;

  const txs = await listTxs(database.db);
  expect(txs.map((tx) => tx.txHash).sort()).toEqual([...hashes].sort());
  // Each confirmation is handed on by the run whose conditional update made it: once across both runs.
  const handed = [...(killed.output() + restarted.output()).matchAll(/confirmed (0x[0-9a-f]+)/g)].map((m) => m[1]);
  expect(new Set(handed).size).toBe(handed.length);
  expect(handed.every((hash) => hashes.includes(hash!))).toBe(true);
}, 180_000);
