/**
 * The deposit-address watcher on its own, on the devnet and PGlite: 5,000 registered addresses on chain A, and the
 * watcher still finds a plain USDC transfer and a native transfer to two of them, with `eth_getLogs` filters that
 * do not grow with the number of addresses (every JSON-RPC request the watcher makes is read at the transport).
 * Then the reindex's rescan: a transfer made before its address was registered (the watcher had read past its
 * block) is found by `rescan`, and a transfer of an unlisted token is recorded `unsupported`. Last, native value a
 * contract sends by an internal call (no transaction to the address, no log) is found through anvil's traces.
 * And on PGlite's notification path, an address whose notification is lost (a fault injection: the listener never
 * hears it) is still read by the timed fallback, and the blocks read without it are read again for it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  createPublicClient,
  createTestClient,
  createWalletClient,
  custom,
  encodeFunctionData,
  erc20Abi,
  http,
  parseEther,
  zeroAddress,
  type Address,
  type Hex,
  type PublicClient,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { multicall3Abi } from '../../generated/contracts/index.js';
import {
  ADDRESS_READ_FALLBACK_MS,
  createDepositAddressWatcher,
  type DepositAddressWatcher,
} from '../../src/chain/depositAddressWatcher.js';
import { devnetViemChain, startDevnet, type Devnet, type DevnetChain } from '../../src/chain/devnet.js';
import { createHeadFeed, type Head } from '../../src/chain/heads.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';
import type { Database } from '../../src/store/database.js';
import { listTransfers } from '../../src/store/depositAddresses.repository.js';
import type { TransferRecord } from '../../src/records/depositAddress.js';
import { toJson } from '../../src/store/mappers.js';
import { recordRpcMethods } from '../helpers/anvil.js';
import { disposeTestDatabase, openTestDatabase } from '../helpers/db.js';
import { publicClientOf, tokenOf } from '../helpers/quote.js';

const REGISTERED = 5_000;
const silentLog = { debug() {}, info() {}, warn() {}, error() {} } as never;

let devnet: Devnet;
let database: Database;
let chainA: DevnetChain;
let watcher: DepositAddressWatcher;
const confirmed: TransferRecord[] = [];
/** Bodies of every JSON-RPC request the watcher sent. */
const requests: string[] = [];
const addresses: Address[] = [];

const randomAddress = (): Address => `0x${randomBytes(20).toString('hex')}`;

async function register(db: Database['db'], list: readonly Address[], createdAt = Date.now()): Promise<void> {
  for (let i = 0; i < list.length; i += 1_000) {
    await db
      .insertInto('deposit_addresses')
      .values(
        list.slice(i, i + 1_000).map((address) => ({
          chain_id: chainA.chainId,
          address: address.toLowerCase(),
          type: 'strict',
          salt_key: `0x${randomBytes(32).toString('hex')}`,
          recovery_address: null,
          request_id: `0x${randomBytes(32).toString('hex')}`,
          currency: tokenOf(chainA, 'USDC').toLowerCase(),
          refund_to: null,
          params: toJson({}),
          created_at: createdAt,
        })),
      )
      .execute();
  }
}

beforeAll(async () => {
  devnet = await startDevnet({ basePort: 0 });
  chainA = devnet.descriptor.chains[0]!;
  database = await openTestDatabase('pglite');
  for (let i = 0; i < REGISTERED; i++) addresses.push(randomAddress());
  await register(database.db, addresses);
  const client = createPublicClient({
    chain: devnetViemChain(chainA),
    transport: http(chainA.rpcUrl, {
      onFetchRequest: async (request) => void requests.push(await request.clone().text()),
    }),
  }) as PublicClient;
  // MNR is taken off the chain's list: a transfer of it is of an unlisted token.
  const chain = devnetChainConfigs(devnet.descriptor)[0]!;
  watcher = createDepositAddressWatcher({
    chain: { ...chain, currencies: chain.currencies.filter((currency) => currency.symbol !== 'MNR') },
    client,
    db: database.db,
    log: silentLog,
    now: () => Date.now(),
    pollIntervalMs: 100,
    onConfirmed: (transfer) => void confirmed.push(transfer),
  });
  await watcher.start();
}, 180_000);

afterAll(async () => {
  await watcher?.stop();
  if (database !== undefined) await disposeTestDatabase(database);
  await devnet?.stop();
});

const bob = () => devnet.descriptor.accounts[1]!;
function wallet() {
  return createWalletClient({
    account: privateKeyToAccount(bob().privateKey),
    chain: devnetViemChain(chainA),
    transport: http(chainA.rpcUrl),
  });
}
async function sendToken(symbol: string, to: Address, amount: bigint): Promise<{ hash: Hex; blockNumber: bigint }> {
  const hash = await wallet().writeContract({
    address: tokenOf(chainA, symbol),
    abi: erc20Abi,
    functionName: 'transfer',
    args: [to, amount],
  });
  const receipt = await publicClientOf(chainA).waitForTransactionReceipt({ hash });
  return { hash, blockNumber: receipt.blockNumber };
}
async function waitFor<T>(what: string, read: () => T | undefined | Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

it(`finds a USDC and a native transfer among ${REGISTERED} registered addresses; the log filter does not list them`, async () => {
  const usdcTo = addresses[REGISTERED - 1]!;
  const nativeTo = addresses[1234]!;
  const usdc = await sendToken('USDC', usdcTo, 5_000_000n);
  const nativeHash = await wallet().sendTransaction({ to: nativeTo, value: parseEther('0.001') });
  await publicClientOf(chainA).waitForTransactionReceipt({ hash: nativeHash });

  const seen = await waitFor('both transfers confirmed', () => (confirmed.length >= 2 ? confirmed : undefined));
  expect(
    seen.map((t) => [t.address, t.token, t.amount, t.txHash]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
  ).toEqual(
    [
      [usdcTo.toLowerCase(), tokenOf(chainA, 'USDC').toLowerCase(), 5_000_000n, usdc.hash],
      [nativeTo.toLowerCase(), zeroAddress, parseEther('0.001'), nativeHash],
    ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
  );

  const logRequests = requests.filter((body) => body.includes('eth_getLogs'));
  expect(logRequests.length).toBeGreaterThan(0);
  // 5,000 addresses as topics would be over 300 kB per request; the filter names the listed tokens only.
  for (const body of logRequests) expect(body.length).toBeLessThan(2_000);
  expect(logRequests.some((body) => body.toLowerCase().includes(usdcTo.slice(2).toLowerCase()))).toBe(false);
});

it('rescan finds a transfer made before its address was registered, and records an unlisted token unsupported', async () => {
  const late = randomAddress();
  const missed = await sendToken('USDC', late, 3_000_000n);
  const unlisted = await sendToken('MNR', late, 1_000n);
  // The watcher reads past both blocks while the address is unknown.
  await waitFor('the watcher past the transfers', () => {
    const read = watcher.followedBlock();
    return read !== undefined && read >= unlisted.blockNumber ? read : undefined;
  });
  await register(database.db, [late]);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(await listTransfers(database.db, { chainId: chainA.chainId, address: late })).toEqual([]);

  const first = watcher.rescan(late, 50n);
  // One rescan at a time per chain (the reindex endpoint answers 429 meanwhile).
  expect(watcher.rescanning()).toBe(true);
  await expect(watcher.rescan(late, 50n)).rejects.toThrow(/already running/);
  expect(await first).toBe(2);
  expect(watcher.rescanning()).toBe(false);
  const found = await waitFor('the missed transfer confirmed', () => confirmed.find((t) => t.txHash === missed.hash));
  expect(found).toMatchObject({ address: late.toLowerCase(), amount: 3_000_000n, status: 'confirmed' });
  const transfers = await listTransfers(database.db, { chainId: chainA.chainId, address: late });
  expect(transfers.find((t) => t.txHash === unlisted.hash)).toMatchObject({
    status: 'unsupported',
    token: tokenOf(chainA, 'MNR').toLowerCase(),
    amount: 1_000n,
  });
  // A second rescan records nothing again.
  expect(await watcher.rescan(late, 50n)).toBe(0);
});

it('finds native value a contract sends to an address by an internal call (traces), and not a reverted one', async () => {
  const to = addresses[42]!;
  const multicall3 = chainA.contracts.multicall3;
  const value = parseEther('0.002');
  const send = async (calls: Array<{ target: Address; allowFailure: boolean; value: bigint; callData: Hex }>) => {
    const hash = await wallet().writeContract({
      address: multicall3,
      abi: multicall3Abi,
      functionName: 'aggregate3Value',
      args: [calls],
      value: calls.reduce((sum, call) => sum + call.value, 0n),
    });
    await publicClientOf(chainA).waitForTransactionReceipt({ hash });
    return hash;
  };
  // Value sent to the address inside a call that then reverts moves nothing: an inner aggregate pays the address,
  // then fails (the depository refuses a plain call); the outer one allows the failure, so the transaction succeeds.
  const refused = await send([
    {
      target: multicall3,
      allowFailure: true,
      value: 1_000n,
      callData: encodeFunctionData({
        abi: multicall3Abi,
        functionName: 'aggregate3Value',
        args: [
          [
            { target: to, allowFailure: false, value: 1_000n, callData: '0x' },
            { target: chainA.contracts.depository, allowFailure: false, value: 0n, callData: '0x' },
          ],
        ],
      }),
    },
  ]);
  expect((await publicClientOf(chainA).getTransactionReceipt({ hash: refused })).status).toBe('success');
  const hash = await send([{ target: to, allowFailure: false, value, callData: '0x' }]);
  const found = await waitFor('the internal transfer confirmed', () => confirmed.find((t) => t.txHash === hash));
  expect(found).toMatchObject({
    address: to.toLowerCase(),
    token: zeroAddress,
    amount: value,
    depositor: multicall3.toLowerCase(),
  });
  expect(found.logIndex).toBeLessThan(-1);
  expect(confirmed.some((t) => t.txHash === refused)).toBe(false);
});

it('on a node without trace_block, still finds a native transaction sent to an address (block transactions)', async () => {
  const own = await openTestDatabase('pglite');
  const to = randomAddress();
  const probes: string[] = [];
  const direct = http(chainA.rpcUrl);
  // The devnet's RPC, except that `trace_block` answers "method not found", as on many hosted nodes.
  const client = createPublicClient({
    chain: devnetViemChain(chainA),
    transport: custom({
      async request({ method, params }) {
        if (method === 'trace_block') {
          probes.push(method);
          throw Object.assign(new Error('the method trace_block does not exist/is not available'), { code: -32601 });
        }
        return direct({ chain: devnetViemChain(chainA) }).request({ method, params });
      },
    }),
  }) as PublicClient;
  const seen: TransferRecord[] = [];
  const plain = createDepositAddressWatcher({
    chain: devnetChainConfigs(devnet.descriptor)[0]!,
    client,
    db: own.db,
    log: silentLog,
    now: () => Date.now(),
    pollIntervalMs: 100,
    onConfirmed: (transfer) => void seen.push(transfer),
  });
  try {
    await register(own.db, [to]);
    await plain.start();
    const hash = await wallet().sendTransaction({ to, value: parseEther('0.001') });
    await publicClientOf(chainA).waitForTransactionReceipt({ hash });
    const found = await waitFor('the native transfer', () => seen.find((t) => t.txHash === hash));
    expect(found).toMatchObject({ address: to.toLowerCase(), amount: parseEther('0.001'), logIndex: -1 });
    expect(probes).toEqual(['trace_block']);
  } finally {
    await plain.stop();
    await disposeTestDatabase(own);
  }
});

it('reads no block of a pushed head that holds no transaction, and still finds the next transfer', async () => {
  const own = await openTestDatabase('pglite');
  const to = randomAddress();
  const methods: string[] = [];
  const client = createPublicClient({
    chain: devnetViemChain(chainA),
    transport: http(chainA.rpcUrl, { onFetchRequest: recordRpcMethods(methods) }),
  }) as PublicClient;
  const feed = createHeadFeed({ chainId: chainA.chainId, url: chainA.wsUrl, log: silentLog });
  const heads: Head[] = [];
  feed.onHead((head) => void heads.push(head));
  const seen: TransferRecord[] = [];
  // Polling every 10 minutes: within this test only the pushed heads start passes.
  const watching = createDepositAddressWatcher({
    chain: devnetChainConfigs(devnet.descriptor)[0]!,
    client,
    db: own.db,
    log: silentLog,
    now: () => Date.now(),
    pollIntervalMs: 600_000,
    heads: feed,
    onConfirmed: (transfer) => void seen.push(transfer),
  });
  const mine = async () => {
    const count = heads.length;
    await createTestClient({ mode: 'anvil', chain: devnetViemChain(chainA), transport: http(chainA.rpcUrl) }).mine({
      blocks: 1,
    });
    await waitFor('the pushed head', () => (heads.length > count ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 100));
  };
  try {
    await register(own.db, [to]);
    feed.start();
    await waitFor('the subscription', () => (feed.live() ? true : undefined));
    await watching.start();
    methods.length = 0;
    // Empty blocks one at a time, as a chain with a block time mines them.
    for (let i = 0; i < 3; i++) await mine();
    const blockReads = ['eth_getBlockByNumber', 'trace_block', 'eth_getLogs'];
    expect(methods.filter((method) => blockReads.includes(method))).toEqual([]);

    const hash = await wallet().sendTransaction({ to, value: parseEther('0.001') });
    await publicClientOf(chainA).waitForTransactionReceipt({ hash });
    await mine();
    const found = await waitFor('the native transfer', () => seen.find((t) => t.txHash === hash));
    expect(found).toMatchObject({ address: to.toLowerCase(), amount: parseEther('0.001') });
    expect(methods.some((method) => blockReads.includes(method))).toBe(true);
  } finally {
    await watching.stop();
    await feed.stop();
    await disposeTestDatabase(own);
  }
});

it('on the notification path, an address whose notification was lost is read after the fallback interval, with its earlier blocks', async () => {
  const own = await openTestDatabase('pglite');
  const to = randomAddress();
  const warnings: string[] = [];
  let skew = 0;
  let listening = 0;
  const seen: TransferRecord[] = [];
  const announced = createDepositAddressWatcher({
    chain: devnetChainConfigs(devnet.descriptor)[0]!,
    client: publicClientOf(chainA),
    db: own.db,
    log: {
      debug() {},
      info() {},
      error() {},
      warn: (_context: unknown, message: string) => void warnings.push(message),
    },
    now: () => Date.now() + skew,
    pollIntervalMs: 100,
    onConfirmed: (transfer) => void seen.push(transfer),
    // The fault: the watcher listens, and no notification ever reaches it (`register` inserts without one anyway).
    onAddressCreated: async () => {
      listening++;
      return () => undefined;
    },
  });
  try {
    await announced.start();
    expect(listening).toBe(1);
    await register(own.db, [to]);
    const usdc = await sendToken('USDC', to, 2_000_000n);
    // The watcher reads the transfer's block while the address is not in its set.
    await waitFor('the watcher past the transfer', () => {
      const read = announced.followedBlock();
      return read !== undefined && read >= usdc.blockNumber ? read : undefined;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await listTransfers(own.db, { chainId: chainA.chainId, address: to })).toEqual([]);

    // The fallback interval passes (the watcher's clock), and the next block's pass reads the addresses.
    skew += ADDRESS_READ_FALLBACK_MS;
    await publicClientOf(chainA).request({ method: 'evm_mine' as never, params: [] as never });
    const found = await waitFor('the transfer found after the fallback', () =>
      seen.find((t) => t.txHash === usdc.hash),
    );
    expect(found).toMatchObject({ address: to.toLowerCase(), amount: 2_000_000n });
    expect(warnings.some((message) => message.includes('not announced'))).toBe(true);
  } finally {
    await announced.stop();
    await disposeTestDatabase(own);
  }
});
