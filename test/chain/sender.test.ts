import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createPublicClient,
  custom,
  encodeFunctionData,
  http,
  keccak256,
  parseTransaction,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Address,
  type Hex,
  zeroAddress,
  type PublicClient,
} from 'viem';
import { ColumnNode, ValueNode, type KyselyPlugin } from 'kysely';
import { privateKeyToAccount } from 'viem/accounts';
import { depositoryAbi } from '../../generated/contracts/index.js';
import { createChainClients } from '../../src/chain/clients.js';
import { createHeadFeed } from '../../src/chain/heads.js';
import { createTransactionSender, type CreateTransactionSenderParameters } from '../../src/chain/sender.js';
import type { ChainConfig } from '../../src/core/chains/types.js';
import type { Logger } from '../../src/core/logger.js';
import { GatewayError, type ErrorCode } from '../../src/core/errors.js';
import type { SendParameters, TransactionSender } from '../../src/core/ports/solver.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';
import { createDatabase, type Database } from '../../src/store/database.js';
import { isUniqueViolation } from '../../src/store/errors.js';
import {
  getLiveOutgoingTx,
  getOutgoingTx,
  insertOutgoingTx,
  outgoingTxRequestKindKey,
} from '../../src/store/outgoingTxs.repository.js';
import type { OutgoingTxRecord } from '../../src/records/outgoingTx.js';
import { useDevnet } from '../helpers/anvil.js';

const devnet = useDevnet();

let database: Database;
let chain: ChainConfig;
let client: PublicClient;
let deadPort: number;
const logs: Array<{ level: string; msg: string | undefined; obj: object }> = [];
const log: Logger = {
  debug: (obj, msg) => void logs.push({ level: 'debug', obj, msg }),
  info: (obj, msg) => void logs.push({ level: 'info', obj, msg }),
  warn: (obj, msg) => void logs.push({ level: 'warn', obj, msg }),
  error: (obj, msg) => void logs.push({ level: 'error', obj, msg }),
};

beforeAll(async () => {
  database = await createDatabase();
  await database.migrate();
  chain = devnetChainConfigs(devnet.descriptor)[0]!;
  client = createChainClients([chain]).get(chain.id)!;
  deadPort = await closedPort();
});
afterAll(async () => {
  await database?.close();
});

const senders: TransactionSender[] = [];
afterEach(async () => {
  await Promise.all(senders.splice(0).map((sender) => sender.stop()));
  await devnet.testClient.setAutomine(true);
});

const solverAccount = () => privateKeyToAccount(devnet.descriptor.solver.privateKey);
const solverAddress = () => devnet.descriptor.solver.address;
const recipient = (): Address => devnet.descriptor.accounts[0]!.address;

function makeSender(overrides: Partial<CreateTransactionSenderParameters> = {}): TransactionSender {
  const sender = createTransactionSender({
    chain,
    client,
    account: solverAccount(),
    db: database.db,
    log,
    now: Date.now,
    pollIntervalMs: 50,
    ...overrides,
  });
  senders.push(sender);
  return sender;
}

const newRequestId = (): Hex => `0x${randomBytes(32).toString('hex')}`;
const payment = (overrides: Partial<SendParameters> = {}): SendParameters => ({
  requestId: newRequestId(),
  kind: 'fill',
  to: recipient(),
  data: '0x',
  value: 1n,
  ...overrides,
});

const pendingNonce = async () =>
  BigInt(await client.getTransactionCount({ address: solverAddress(), blockTag: 'pending' }));
const minedNonce = async () =>
  BigInt(await client.getTransactionCount({ address: solverAddress(), blockTag: 'latest' }));
const payloadOf = (row: OutgoingTxRecord) =>
  row.payload as { raw: Hex; hash: Hex; gas: string; error?: string; bumps: number };
const row = async (id: number) => (await getOutgoingTx(database.db, id))!;

/** A local port nothing listens on: a broadcast sent there fails with a real connection refusal. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * A client whose reads go to the devnet but whose `eth_sendRawTransaction` goes to a closed port: the fault
 * (a refused connection, as when the RPC dies between signing and broadcasting) is real; only the routing of
 * one method is test plumbing, because a dead RPC would also fail the reads that come before the broadcast.
 */
function clientWithDeadBroadcast(): PublicClient {
  const live = http(chain.httpRpcUrl)({});
  const dead = http(`http://127.0.0.1:${deadPort}`, { retryCount: 0 })({});
  return createPublicClient({
    transport: custom({
      request: ({ method, params }) => (method === 'eth_sendRawTransaction' ? dead : live).request({ method, params }),
    }),
  });
}

async function expectGatewayError(promise: Promise<unknown>, code: ErrorCode): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected ${code}`).toBeInstanceOf(GatewayError);
  expect((error as GatewayError).code, (error as Error).message).toBe(code);
  return error as GatewayError;
}

async function until(condition: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** A kysely plugin that holds the result of every update until `open()`; `count()` = updates held so far. */
function holdUpdates() {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const updates = new WeakSet<object>();
  let count = 0;
  const plugin: KyselyPlugin = {
    transformQuery({ node, queryId }) {
      if (node.kind === 'UpdateQueryNode') updates.add(queryId);
      return node;
    },
    async transformResult({ result, queryId }) {
      if (updates.has(queryId)) {
        count++;
        await gate;
      }
      return result;
    },
  };
  return { plugin, open: () => open(), count: () => count };
}

/** A kysely plugin that holds the result of the first insert until `open()`; `inserts()` = inserts run so far. */
function holdFirstInsert() {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const inserts = new WeakSet<object>();
  let count = 0;
  const plugin: KyselyPlugin = {
    transformQuery({ node, queryId }) {
      if (node.kind === 'InsertQueryNode') inserts.add(queryId);
      return node;
    },
    async transformResult({ result, queryId }) {
      if (inserts.has(queryId) && ++count === 1) await gate;
      return result;
    },
  };
  return { plugin, open: () => open(), inserts: () => count };
}

/**
 * A kysely plugin that fails the first update writing a non-null `nonce` (a row re-signed on another nonce) before
 * it runs, as a lost database connection would: nothing is written. Fault injection: the real database cannot be
 * made to fail one chosen statement.
 */
function failFirstNonceRewrite() {
  let failed = 0;
  const plugin: KyselyPlugin = {
    transformQuery({ node }) {
      if (node.kind === 'UpdateQueryNode' && failed === 0) {
        const rewritesNonce = (node.updates ?? []).some(
          (update) =>
            ColumnNode.is(update.column) &&
            update.column.column.name === 'nonce' &&
            !(ValueNode.is(update.value) && update.value.value === null),
        );
        if (rewritesNonce) {
          failed++;
          throw new Error('injected: the connection was lost');
        }
      }
      return node;
    },
    transformResult: ({ result }) => Promise.resolve(result),
  };
  return { plugin, failed: () => failed };
}

async function expectNoReceipt(hash: Hex): Promise<void> {
  await expect(client.getTransactionReceipt({ hash })).rejects.toBeInstanceOf(TransactionReceiptNotFoundError);
}

describe('createTransactionSender', () => {
  it('gives sequential and concurrent sends consecutive nonces, records them signed, and all mine', async () => {
    const sender = makeSender();
    const first = await pendingNonce();
    const sequential = [await sender.send(payment()), await sender.send(payment())];
    const concurrent = await Promise.all([1n, 2n, 3n, 4n].map((value) => sender.send(payment({ value }))));
    const rows = [...sequential, ...concurrent];

    expect(rows.map((r) => r.nonce).sort((a, b) => (a! < b! ? -1 : 1))).toEqual(rows.map((_, i) => first + BigInt(i)));
    for (const r of rows) {
      expect(r.status).toBe('broadcast');
      const payload = payloadOf(r);
      expect(r.hashes).toEqual([payload.hash]);
      expect(keccak256(payload.raw)).toBe(payload.hash);
      const signed = parseTransaction(payload.raw);
      expect(BigInt(signed.nonce!)).toBe(r.nonce);
      expect(signed.chainId).toBe(chain.id);
      expect(signed.type).toBe('eip1559');
      // Estimated with a 20% margin over a plain transfer's 21,000.
      expect(BigInt(payload.gas)).toBe(25_200n);
    }

    const receipts = await Promise.all(rows.map((r) => sender.waitForReceipt(r.id)));
    expect(receipts.every((receipt) => receipt.status === 'success')).toBe(true);
    for (const [i, r] of rows.entries()) {
      expect(receipts[i]!.hash).toBe(r.hashes[0]);
      expect((await row(r.id)).status).toBe('confirmed');
    }
    expect(await minedNonce()).toBe(first + 6n);
  });

  it('broadcasts the next send while the previous row is still being marked broadcast', async () => {
    const held = holdUpdates();
    const sender = makeSender({ db: database.db.withPlugin(held.plugin) });
    const first = await pendingNonce();
    try {
      const sends = [sender.send(payment({ value: 1n })), sender.send(payment({ value: 2n }))];
      // Both reach the node while every row update (the marks as `broadcast`) is held: the queue does not wait
      // for a mark, so the second send's nonce, signature, row and broadcast follow the first's broadcast at once.
      await until(async () => (await pendingNonce()) === first + 2n, 3_000);
      // The marks are asked for once the batch is broadcast (both sends may be one batch, whose sends return
      // together): one reaches the held database after the broadcasts, never before them.
      await until(() => Promise.resolve(held.count() >= 1), 3_000);
      held.open();
      // Each send reads its gas and fees before it joins the queue, so either may take the first nonce.
      const rows = (await Promise.all(sends)).sort((a, b) => (a.nonce! < b.nonce! ? -1 : 1));
      expect(rows.map((r) => [r.nonce, r.status])).toEqual([
        [first, 'broadcast'],
        [first + 1n, 'broadcast'],
      ]);
      const receipts = await Promise.all(rows.map((r) => sender.waitForReceipt(r.id)));
      expect(receipts.map((receipt) => receipt.status)).toEqual(['success', 'success']);
    } finally {
      held.open();
    }
  });

  it("returns a send once the node accepted it, before its row's move to broadcast is answered (stop waits for it)", async () => {
    const held = holdUpdates();
    const sender = makeSender({ db: database.db.withPlugin(held.plugin) });
    try {
      // The move's answer is held: before, the send waited for it (this await never resolved until `open`).
      const sent = await sender.send(payment());
      const payload = payloadOf(sent);
      expect(sent).toMatchObject({ status: 'broadcast', hashes: [payload.hash] });
      await until(async () => held.count() === 1);
      let stopped = false;
      const stopping = sender.stop().then(() => (stopped = true));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(stopped).toBe(false);
      held.open();
      await stopping;
      // The record returned is the row as its move wrote it.
      expect(await row(sent.id)).toEqual(sent);
      expect((await makeSender().waitForReceipt(sent.id)).status).toBe('success');
    } finally {
      held.open();
    }
  });

  it("a row whose move to broadcast failed stays 'prepared' and is rebroadcast and finished by its receipt wait", async () => {
    let failed = 0;
    const failFirstUpdate: KyselyPlugin = {
      transformQuery({ node }) {
        if (node.kind === 'UpdateQueryNode' && failed++ === 0) throw new Error('injected: the connection was lost');
        return node;
      },
      transformResult: ({ result }) => Promise.resolve(result),
    };
    const sender = makeSender({ db: database.db.withPlugin(failFirstUpdate) });
    const sent = await sender.send(payment());
    expect(sent.status).toBe('broadcast');
    await until(async () =>
      logs.some(
        (entry) =>
          entry.level === 'warn' &&
          (entry.obj as { outgoingTxId?: number }).outgoingTxId === sent.id &&
          entry.msg?.startsWith('marking a broadcast transaction failed') === true,
      ),
    );
    expect(failed).toBe(1);
    expect((await row(sent.id)).status).toBe('prepared');
    const receipt = await sender.waitForReceipt(sent.id);
    expect(receipt).toMatchObject({ status: 'success', hash: payloadOf(sent).hash });
    expect(await row(sent.id)).toMatchObject({ status: 'confirmed', hashes: [payloadOf(sent).hash] });
  });

  it('records the sends waiting for the queue in one statement; a rejected one in the batch leaves no nonce gap', async () => {
    const held = holdFirstInsert();
    const sender = makeSender({ db: database.db.withPlugin(held.plugin) });
    const first = await pendingNonce();
    try {
      // The first send holds the queue (its row's insert is held) while three more join it.
      const head = sender.send(payment({ value: 1n }));
      await until(async () => held.inserts() === 1, 3_000);
      // More than the solver owns, with an explicit gas limit: the node refuses it at broadcast. It joins first, so
      // the two behind it in the batch were signed on nonces above its own.
      const rejected = newRequestId();
      const refused = expectGatewayError(
        sender.send(payment({ requestId: rejected, value: 10n ** 30n, gas: 21_000n })),
        'INSUFFICIENT_LIQUIDITY',
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const behind = [sender.send(payment({ value: 2n })), sender.send(payment({ value: 3n }))];
      await new Promise((resolve) => setTimeout(resolve, 200));
      held.open();
      await refused;
      const rows = [await head, ...(await Promise.all(behind))];
      // One insert for the head, one for the batch of three.
      expect(held.inserts()).toBe(2);
      expect((await getLiveOutgoingTx(database.db, rejected, 'fill'))!).toMatchObject({
        status: 'failed',
        nonce: null,
      });
      // The two behind the rejected one were re-signed one nonce down: consecutive, and all mine. Each reads its gas
      // and fees before joining the queue, so the two may have joined the batch in either order.
      expect(rows[0]!.nonce).toBe(first);
      expect(rows.map((r) => r.nonce!).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))).toEqual([
        first,
        first + 1n,
        first + 2n,
      ]);
      for (const r of rows) expect(parseTransaction(payloadOf(await row(r.id)).raw).nonce).toBe(Number(r.nonce));
      const receipts = await Promise.all(rows.map((r) => sender.waitForReceipt(r.id)));
      expect(receipts.map((receipt) => receipt.status)).toEqual(['success', 'success', 'success']);
      expect(await minedNonce()).toBe(first + 3n);
    } finally {
      held.open();
    }
  });

  it('hands a nonce released below recorded ones to the next send: no gap is left for the rows above it', async () => {
    const start = await pendingNonce();
    // A live row one nonce above the chain's next (as a batch whose re-signature failed leaves one): the nonce
    // below it is free.
    const above = await insertOutgoingTx(database.db, {
      chainId: chain.id,
      requestId: newRequestId(),
      kind: 'fill',
      signer: solverAddress(),
      nonce: start + 1n,
      status: 'prepared',
      payload: {},
      now: Date.now(),
    });
    try {
      const sender = makeSender();
      const next = await sender.send(payment());
      expect(next.nonce).toBe(start);
      expect((await sender.waitForReceipt(next.id)).status).toBe('success');
    } finally {
      // The stand-in row never reaches the chain: take it out of the signer's live nonces for the tests after.
      await database.db.updateTable('outgoing_txs').set({ status: 'replaced' }).where('id', '=', above.id).execute();
    }
  });

  it('a batch whose re-signature fails leaves the row on its nonce, and the gap goes to the next send: all mine', async () => {
    const held = holdFirstInsert();
    const fault = failFirstNonceRewrite();
    const sender = makeSender({ db: database.db.withPlugin(held.plugin).withPlugin(fault.plugin) });
    const first = await pendingNonce();
    try {
      const head = sender.send(payment({ value: 1n }));
      await until(async () => held.inserts() === 1, 3_000);
      // Rejected at broadcast (more than the solver owns), first in the batch; of the two behind it (each reads its
      // fees first, so they may join in either order) the first one's re-signature onto the released nonce fails,
      // and the other goes on its own recorded nonce.
      const refused = expectGatewayError(
        sender.send(payment({ value: 10n ** 30n, gas: 21_000n })),
        'INSUFFICIENT_LIQUIDITY',
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      const behind = Promise.allSettled([sender.send(payment({ value: 2n })), sender.send(payment({ value: 3n }))]);
      await new Promise((resolve) => setTimeout(resolve, 200));
      held.open();
      await refused;
      const settled = await behind;
      expect(fault.failed()).toBe(1);
      const stranded = settled.filter((result) => result.status === 'rejected');
      const sent = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
      expect(stranded).toHaveLength(1);
      expect(String((stranded[0] as PromiseRejectedResult).reason)).toMatch(/injected/);
      expect(sent).toHaveLength(1);
      const headRow = await head;
      const lastRow = sent[0]!;
      expect(headRow.nonce).toBe(first);
      expect(lastRow.nonce).toBe(first + 3n);
      // The stranded row kept its recorded nonce, never broadcast; the released one below it is free.
      const strandedRow = (await database.db
        .selectFrom('outgoing_txs')
        .select(['id', 'nonce', 'status'])
        .where('chain_id', '=', chain.id)
        .where('nonce', '=', (first + 2n).toString())
        .where('status', '<>', 'replaced')
        .executeTakeFirst())!;
      expect(strandedRow.status).toBe('prepared');
      // The next send takes the gap, and waiting for the stranded row broadcasts it: everything mines.
      const filler = await sender.send(payment({ value: 4n }));
      expect(filler.nonce).toBe(first + 1n);
      const receipts = await Promise.all(
        [headRow.id, filler.id, strandedRow.id, lastRow.id].map((id) => sender.waitForReceipt(Number(id))),
      );
      expect(receipts.map((receipt) => receipt.status)).toEqual(['success', 'success', 'success', 'success']);
      expect(await minedNonce()).toBe(first + 4n);
    } finally {
      held.open();
    }
  });

  it("reads new sends' fee caps once per pushed head (a read ahead included), again after the next head, and per send without a feed", async () => {
    const methods: string[] = [];
    const counted = createChainClients([chain], {
      onFetchRequest: (_request, init) => {
        if (typeof init.body !== 'string') throw new Error('expected viem to post JSON-RPC as text');
        const body = JSON.parse(init.body) as { method: string } | Array<{ method: string }>;
        methods.push(...(Array.isArray(body) ? body : [body]).map((call) => call.method));
      },
    }).get(chain.id)!;
    const feeReads = () => methods.filter((method) => method === 'eth_maxPriorityFeePerGas').length;
    const heads = createHeadFeed({ chainId: chain.id, url: chain.wsRpcUrl, log });
    heads.start();
    try {
      while (!heads.live()) await new Promise((resolve) => setTimeout(resolve, 10));
      // No block while the sends go: one head throughout.
      await devnet.testClient.setAutomine(false);
      const sender = makeSender({ client: counted, heads });
      sender.readAhead();
      const first = await Promise.all([sender.send(payment()), sender.send(payment())]);
      first.push(await sender.send(payment()));
      expect(feeReads()).toBe(1);
      const caps = new Set(first.map((sent) => sent.payload.maxFeePerGas));
      expect(caps.size).toBe(1);
      // A new head: the next send reads them again.
      const version = heads.version();
      await devnet.testClient.mine({ blocks: 1 });
      while (heads.version() === version) await new Promise((resolve) => setTimeout(resolve, 10));
      const next = await sender.send(payment());
      expect(feeReads()).toBe(2);
      await devnet.testClient.setAutomine(true);
      await devnet.testClient.mine({ blocks: 1 });
      await Promise.all([...first, next].map((sent) => sender.waitForReceipt(sent.id)));

      // Without a head feed, each send reads them (a read ahead does nothing).
      const unfed = makeSender({ client: counted });
      unfed.readAhead();
      const before = feeReads();
      for (const sent of [await unfed.send(payment()), await unfed.send(payment())])
        await unfed.waitForReceipt(sent.id);
      expect(feeReads() - before).toBe(2);
    } finally {
      await heads.stop();
    }
  });

  it('refuses a second live transaction of one (request, kind) with CONFLICT without consuming its nonce', async () => {
    const sender = makeSender();
    const requestId = newRequestId();
    const first = await sender.send(payment({ requestId }));
    await expectGatewayError(sender.send(payment({ requestId })), 'CONFLICT');

    // Racing sends: the unique index refuses the second one.
    const raced = newRequestId();
    const outcomes = await Promise.allSettled([
      sender.send(payment({ requestId: raced })),
      sender.send(payment({ requestId: raced })),
    ]);
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect((refused.reason as GatewayError).code).toBe('CONFLICT');
    expect(isUniqueViolation((refused.reason as GatewayError).cause, outgoingTxRequestKindKey)).toBe(true);
    const winner = (outcomes.find((o) => o.status === 'fulfilled') as PromiseFulfilledResult<OutgoingTxRecord>).value;

    // Another kind for the same request is its own slot; the nonces have no gap.
    const refund = await sender.send(payment({ requestId, kind: 'refund' }));
    expect([winner.nonce, refund.nonce]).toEqual([first.nonce! + 1n, first.nonce! + 2n]);
    for (const r of [first, winner, refund]) expect((await sender.waitForReceipt(r.id)).status).toBe('success');
    expect(await minedNonce()).toBe(first.nonce! + 3n);
  });

  it('records the transaction before broadcasting it; a restarted sender rebroadcasts it and finds the receipt', async () => {
    const start = await pendingNonce();
    const broken = makeSender({ client: clientWithDeadBroadcast() });
    const prepared = await broken.send(payment());
    // The broadcast never reached a node, yet the row holds the signed transaction on its nonce.
    expect(prepared.status).toBe('prepared');
    expect(prepared.nonce).toBe(start);
    expect(prepared.hashes).toEqual([]);
    const payload = payloadOf(prepared);
    expect(BigInt(parseTransaction(payload.raw).nonce!)).toBe(start);
    await expect(client.getTransaction({ hash: payload.hash })).rejects.toBeInstanceOf(TransactionNotFoundError);
    expect(await pendingNonce()).toBe(start);
    await broken.stop();

    // After the "restart": the nonce comes from the database (the chain has not seen `start`).
    const restarted = makeSender();
    const next = await restarted.send(payment());
    expect(next.nonce).toBe(start + 1n);
    expect(await minedNonce()).toBe(start); // queued behind the missing nonce

    const recovered = await restarted.recover();
    const again = recovered.find((r) => r.id === prepared.id)!;
    expect(again.status).toBe('broadcast');
    expect(again.hashes).toEqual([payload.hash]);
    const receipt = await restarted.waitForReceipt(prepared.id);
    expect(receipt).toMatchObject({ status: 'success', hash: payload.hash });
    expect((await restarted.waitForReceipt(next.id)).status).toBe('success');
    expect((await row(prepared.id)).status).toBe('confirmed');
    expect(await minedNonce()).toBe(start + 2n);
  });

  it('recovers a transaction that was broadcast and mined before the crash (the rebroadcast is idempotent)', async () => {
    const before = makeSender();
    const sent = await before.send(payment());
    await before.stop(); // "crash" before anyone waited for it

    const after = makeSender();
    const recovered = await after.recover();
    expect(recovered.map((r) => r.id)).toContain(sent.id);
    const receipt = await after.waitForReceipt(sent.id);
    expect(receipt).toMatchObject({ status: 'success', hash: sent.hashes[0] });
    expect(await after.recover()).toEqual([]);
  });

  it('answers CONFLICT, not the failed estimate, for a second send whose gas estimate fails', async () => {
    const sender = makeSender();
    const requestId = newRequestId();
    const first = await sender.send(payment({ requestId }));
    // No row is read before the estimate; when it fails, the live row is looked for and its conflict wins.
    const error = await sender.send(payment({ requestId, to: chain.contracts.depository })).catch((e: unknown) => e);
    expect((error as GatewayError).code).toBe('CONFLICT');
    expect((error as GatewayError).data).toBe(`outgoingTxId=${first.id}`);
    expect((await sender.waitForReceipt(first.id)).status).toBe('success');
  });

  it('releases the nonce of a transaction the node rejects and reuses it for the next send', async () => {
    const sender = makeSender();
    const start = await pendingNonce();
    const requestId = newRequestId();
    // More than the solver owns; an explicit gas limit skips the estimate, so the node itself refuses it.
    await expectGatewayError(
      sender.send(payment({ requestId, value: 10n ** 30n, gas: 21_000n })),
      'INSUFFICIENT_LIQUIDITY',
    );
    const rejected = (await getLiveOutgoingTx(database.db, requestId, 'fill'))!;
    expect(rejected).toMatchObject({ status: 'failed', nonce: null });
    expect(payloadOf(rejected).error).toMatch(/insufficient funds/i);

    const next = await sender.send(payment());
    expect(next.nonce).toBe(start);
    expect((await sender.waitForReceipt(next.id)).status).toBe('success');
    // The failed row keeps its (request, kind) slot until someone marks it replaced on purpose.
    await expectGatewayError(sender.send(payment({ requestId })), 'CONFLICT');
    await expectGatewayError(sender.waitForReceipt(rejected.id), 'DESTINATION_TX_FAILED');
  });

  it('refuses a transaction that would revert before recording it', async () => {
    const sender = makeSender();
    const requestId = newRequestId();
    await expectGatewayError(
      sender.send(payment({ requestId, to: chain.contracts.depository })),
      'DESTINATION_TX_FAILED',
    );
    expect(await getLiveOutgoingTx(database.db, requestId, 'fill')).toBeUndefined();
  });

  it("names a refused transaction's revert by the contract's custom error, never its bytes read as text", async () => {
    const sender = makeSender();
    // The depository's owner releasing a deposit it does not hold: `UnknownDeposit(uint256)`, as a settlement
    // of a deposit a reorg took away (or `AlreadyReleased` for one released elsewhere) reverts.
    const data = encodeFunctionData({
      abi: depositoryAbi,
      functionName: 'release',
      args: [123_456_789n, newRequestId(), recipient(), zeroAddress, 1n, recipient(), 1n],
    });
    const error = (await sender
      .send(payment({ kind: 'settle', to: chain.contracts.depository, data, value: 0n }))
      .catch((e: unknown) => e)) as GatewayError;
    expect(error.code).toBe('DESTINATION_TX_FAILED');
    expect(error.message).toBe(`Chain ${chain.id}: the settle transaction would fail: UnknownDeposit(123456789)`);
  });

  it('records a mined revert as failed with status reverted', async () => {
    const sender = makeSender();
    // Plain native transfers to the depository revert; a given gas limit skips the estimate that would refuse it.
    const sent = await sender.send(payment({ to: chain.contracts.depository, gas: 100_000n }));
    const receipt = await sender.waitForReceipt(sent.id);
    expect(receipt).toMatchObject({ status: 'reverted', hash: sent.hashes[0] });
    expect(receipt.gasUsed).toBeGreaterThan(21_000n);
    expect(receipt.effectiveGasPrice).toBeGreaterThan(0n);
    expect((await row(sent.id)).status).toBe('failed');
    // Waiting again answers from the chain without polling.
    expect(await sender.waitForReceipt(sent.id)).toEqual(receipt);
  });

  it('skips nonces used outside the sender: a fresh sender reads them, a running one re-signs on the next one', async () => {
    const wallet = devnet.wallet(devnet.descriptor.solver);
    await devnet.mined(wallet.sendTransaction({ to: recipient(), value: 1n }));
    const expected = await pendingNonce();
    const fresh = makeSender();
    const first = await fresh.send(payment());
    expect(first.nonce).toBe(expected);
    expect((await fresh.waitForReceipt(first.id)).status).toBe('success');

    // Now the sender's cached next nonce is taken behind its back.
    await devnet.mined(wallet.sendTransaction({ to: recipient(), value: 1n }));
    const second = await fresh.send(payment());
    expect(second.nonce).toBe(first.nonce! + 2n);
    expect(second.status).toBe('broadcast');
    expect(
      logs.some(
        (entry) =>
          entry.msg === 'nonce already used elsewhere; re-signing' &&
          (entry.obj as { outgoingTxId?: number }).outgoingTxId === second.id,
      ),
    ).toBe(true);
    expect(BigInt(parseTransaction(payloadOf(second).raw).nonce!)).toBe(second.nonce);
    expect((await fresh.waitForReceipt(second.id)).status).toBe('success');
  });

  it('replaces a stuck transaction with higher fees on the same nonce, and exactly one of them lands', async () => {
    const sender = makeSender({ stuckAfterMs: 300 });
    const start = await minedNonce();
    await devnet.testClient.setAutomine(false);
    const sent = await sender.send(payment());
    const waiting = sender.waitForReceipt(sent.id);
    await until(async () => (await row(sent.id)).hashes.length >= 2);
    await devnet.testClient.mine({ blocks: 1 });
    await devnet.testClient.setAutomine(true);
    const receipt = await waiting;

    const final = await row(sent.id);
    expect(final.status).toBe('confirmed');
    expect(final.nonce).toBe(sent.nonce);
    expect(receipt.status).toBe('success');
    expect(final.hashes).toContain(receipt.hash);
    expect(receipt.hash).not.toBe(sent.hashes[0]);
    for (const hash of final.hashes) if (hash !== receipt.hash) await expectNoReceipt(hash as Hex);
    expect(await minedNonce()).toBe(start + 1n);

    const mined = await client.getTransaction({ hash: receipt.hash });
    const original = parseTransaction(payloadOf(sent).raw);
    expect(mined.nonce).toBe(Number(sent.nonce));
    expect(mined.maxFeePerGas! * 100n).toBeGreaterThanOrEqual(original.maxFeePerGas! * 125n);
    expect(mined.maxPriorityFeePerGas! * 100n).toBeGreaterThanOrEqual(original.maxPriorityFeePerGas! * 125n);
    expect(Number(payloadOf(final).bumps)).toBeGreaterThanOrEqual(1);
  });

  it('fails a wait whose nonce was used by a transaction it did not record', async () => {
    const broken = makeSender({ client: clientWithDeadBroadcast() });
    const prepared = await broken.send(payment());
    await broken.stop();
    // The key is used on that very nonce by someone else before the recorded transaction got out.
    await devnet.mined(
      devnet
        .wallet(devnet.descriptor.solver)
        .sendTransaction({ to: recipient(), value: 1n, nonce: Number(prepared.nonce) }),
    );

    const sender = makeSender();
    await expectGatewayError(sender.waitForReceipt(prepared.id), 'DESTINATION_TX_FAILED');
    const failed = await row(prepared.id);
    expect(failed.status).toBe('failed');
    expect(payloadOf(failed).error).toMatch(/did not record/);
  });

  it('stops promptly: a pending wait ends and sends are refused', async () => {
    const sender = makeSender();
    await devnet.testClient.setAutomine(false);
    const sent = await sender.send(payment());
    const waiting = sender.waitForReceipt(sent.id);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = Date.now();
    await sender.stop();
    await expectGatewayError(waiting, 'SERVICE_UNAVAILABLE');
    expect(Date.now() - started).toBeLessThan(500);
    await expectGatewayError(sender.send(payment()), 'SERVICE_UNAVAILABLE');
    await devnet.testClient.mine({ blocks: 1 });
  });
});
