/**
 * `POST /transactions/index`, `POST /transactions/single` and the GraphQL mutations `indexTransaction` /
 * `indexSingleTransaction` on a real devnet gateway whose core is given deposit watchers (in production the
 * composition root does that wiring): a deposit made inside another contract's call is found and handed on
 * once, the SDK's string chain id and JSON-encoded `tx` are accepted, and every failure has its code.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createPublicClient,
  createWalletClient,
  encodeFunctionData,
  http,
  parseEther,
  toHex,
  zeroAddress,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { depositoryAbi, multicallerAbi } from '../../generated/contracts/index.js';
import { createChainClients } from '../../src/chain/clients.js';
import { createDepositWatcher } from '../../src/chain/depositWatcher.js';
import { devnetViemChain } from '../../src/chain/devnet.js';
import type { DepositWatcher } from '../../src/core/ports/solver.js';
import { listDepositsForRequest } from '../../src/store/deposits.repository.js';
import type { DepositRecord } from '../../src/records/deposit.js';
import { post } from '../graphql/harness.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import type { SolverParts, SolverSwitch } from '../../src/core/ports/solverHandle.js';

let gateway: TestGateway;
let watchers: Map<number, DepositWatcher>;
const handed: DepositRecord[] = [];

beforeAll(async () => {
  // The gateway's own solver is off, so the watchers below are its only deposit intake and nothing consumes
  // what they hand on.
  gateway = await startTestGateway({ solverEnabled: false });
  expect(gateway.server.core.solving.running).toBeUndefined();
  const clients = createChainClients(gateway.config.chains);
  // 31337 and 31338 are watched; 31339 is configured but not watched. The watchers are not started: indexing a
  // transaction does not need the polling loop, so every deposit seen here was found by the operation under test.
  watchers = new Map(
    gateway.config.chains
      .filter((chain) => chain.id !== 31339)
      .map((chain) => [
        chain.id,
        createDepositWatcher({
          chain,
          client: clients.get(chain.id)!,
          db: gateway.server.core.db,
          log: gateway.server.core.log,
          now: () => Date.now(),
          onConfirmed: (deposit) => void handed.push(deposit),
        }),
      ]),
  );
});
afterAll(async () => {
  await gateway?.stop();
});
/**
 * The composition root's switch behind `core.solving`: these tests lend it watchers of their own as a running
 * solver would (only the watchers: indexing uses nothing else).
 */
const solverSwitch = () => gateway.server.core.solving as SolverSwitch;
beforeEach(() => {
  solverSwitch().attach({ watchers } as unknown as SolverParts);
});

let idCounter = 0;
const newId = (): Hex => toHex(0xe0_0000 + ++idCounter, { size: 32 });

/** A native deposit made through the public Multicaller, so the Deposit event comes from an internal call. */
async function depositThroughMulticaller(chainId: number, id: Hex, value = parseEther('0.05')): Promise<Hex> {
  const chain = gateway.devnet.descriptor.chains.find((candidate) => candidate.chainId === chainId)!;
  const user = gateway.devnet.descriptor.accounts[0]!;
  const transport = http(chain.rpcUrl);
  const wallet = createWalletClient({
    account: privateKeyToAccount(user.privateKey),
    chain: devnetViemChain(chain),
    transport,
  });
  const data = encodeFunctionData({ abi: depositoryAbi, functionName: 'depositNative', args: [user.address, id] });
  const hash = await wallet.writeContract({
    address: chain.contracts.multicaller,
    abi: multicallerAbi,
    functionName: 'multicall',
    args: [[{ to: chain.contracts.depository, data, value, allowFailure: false }], zeroAddress],
    value,
  });
  const receipt = await createPublicClient({ transport }).waitForTransactionReceipt({ hash, pollingInterval: 50 });
  expect(receipt.status).toBe('success');
  return hash;
}

const unknownHash = toHex(0xdead, { size: 32 });

describe('POST /transactions/index', () => {
  it('records the deposit made inside a contract call, confirms it and hands it on once', async () => {
    const id = newId();
    const txHash = await depositThroughMulticaller(31337, id);

    const first = await call(gateway.url, 'indexTransaction', {
      body: { chainId: '31337', txHash, requestId: id, referrer: 'sdk' },
    });
    expect(first.status).toBe(200);
    expect(first.body.message).toBe(`Transaction ${txHash} on chain 31337 indexed: 1 deposit(s) for ${id} (confirmed)`);
    const [deposit, ...more] = await listDepositsForRequest(gateway.server.core.db, id);
    expect(more).toEqual([]);
    expect(deposit).toMatchObject({ chainId: 31337, txHash, status: 'confirmed', amount: parseEther('0.05') });
    expect(handed.filter((d) => d.requestId === id)).toEqual([deposit]);

    // Again, with a numeric chain id: accepted, and not handed on twice.
    const again = await call(gateway.url, 'indexTransaction', { body: { chainId: 31337, txHash } });
    expect(again.status).toBe(200);
    expect(handed.filter((d) => d.requestId === id)).toHaveLength(1);
  });

  it('says so when the transaction has no deposit, or none for the given request', async () => {
    const id = newId();
    const txHash = await depositThroughMulticaller(31338, id);
    const other = newId();
    const response = await call(gateway.url, 'indexTransaction', {
      body: { chainId: '31338', txHash, requestId: other },
    });
    expect(response.status).toBe(200);
    expect(response.body.message).toContain(`none of them is for request ${other}`);
  });

  it.each([
    ['an unknown transaction', { chainId: '31337', txHash: unknownHash }, 404, 'NOT_FOUND'],
    ['an unsupported chain', { chainId: '999', txHash: unknownHash }, 400, 'UNSUPPORTED_CHAIN'],
    ['a configured chain nobody watches', { chainId: 31339, txHash: unknownHash }, 503, 'SERVICE_UNAVAILABLE'],
    ['a short hash', { chainId: '31337', txHash: '0x1234' }, 400, 'INVALID_INPUT'],
    ['a missing hash', { chainId: '31337' }, 400, 'INVALID_INPUT'],
  ])('answers %s with %i %s', async (_case, body, status, errorCode) => {
    const response = await call(gateway.url, 'indexTransaction', { body });
    expect(response.status).toBe(status);
    expect(response.body).toMatchObject({ errorCode, statusCode: status });
  });

  it('answers 503 SERVICE_UNAVAILABLE when the gateway runs no watchers', async () => {
    solverSwitch().detach();
    const response = await call(gateway.url, 'indexTransaction', { body: { chainId: '31337', txHash: unknownHash } });
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({
      errorCode: 'SERVICE_UNAVAILABLE',
      message: expect.stringContaining('no deposit watchers'),
    });
  });
});

describe('POST /transactions/single', () => {
  /** What the reference SDK sends: the step item's data plus the hash, JSON-encoded. */
  const encodedTx = (txHash: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ from: zeroAddress, to: zeroAddress, data: '0x', value: '0', chainId: 31337, txHash, ...extra });

  it('indexes the transaction named in the JSON-encoded tx', async () => {
    const id = newId();
    const txHash = await depositThroughMulticaller(31337, id);
    const response = await call(gateway.url, 'indexSingleTransaction', {
      body: { requestId: id, chainId: '31337', tx: encodedTx(txHash) },
    });
    expect(response.status).toBe(200);
    expect(response.body.message).toContain(`${id} (confirmed)`);
    expect(handed.filter((d) => d.requestId === id)).toHaveLength(1);

    // A hex chain id in the transaction (as wallets write it) is the same chain.
    const hexChain = await call(gateway.url, 'indexSingleTransaction', {
      body: { requestId: id, chainId: '31337', tx: encodedTx(txHash, { chainId: '0x7a69' }) },
    });
    expect(hexChain.status).toBe(200);
    expect(handed.filter((d) => d.requestId === id)).toHaveLength(1);
  });

  it.each([
    ['tx that is not JSON', 'not json', 'tx must be a JSON-encoded transaction object'],
    ['tx that is a JSON array', '[1]', 'tx must be a JSON-encoded transaction object'],
    ['tx without txHash', JSON.stringify({ to: zeroAddress }), 'tx has no txHash'],
    ['tx with a malformed txHash', JSON.stringify({ txHash: '0xabc' }), 'txHash must be 32 bytes of hex'],
    [
      'tx of another chain',
      JSON.stringify({ txHash: unknownHash, chainId: 31338 }),
      'is not the chainId of the request body',
    ],
  ])('rejects a %s with 400 INVALID_INPUT', async (_case, tx, message) => {
    const response = await call(gateway.url, 'indexSingleTransaction', {
      body: { requestId: newId(), chainId: '31337', tx },
    });
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ errorCode: 'INVALID_INPUT', message: expect.stringContaining(message) });
  });

  it('answers 404 NOT_FOUND for a transaction the chain does not have', async () => {
    const response = await call(gateway.url, 'indexSingleTransaction', {
      body: { requestId: newId(), chainId: '31337', tx: encodedTx(unknownHash) },
    });
    expect(response.status).toBe(404);
    expect(response.body.errorCode).toBe('NOT_FOUND');
  });
});

describe('GraphQL mutations', () => {
  const indexTransaction = 'mutation ($input: IndexTransactionInput!) { indexTransaction(input: $input) { message } }';
  const indexSingleTransaction =
    'mutation ($input: IndexSingleTransactionInput!) { indexSingleTransaction(input: $input) { message } }';

  it('indexTransaction records and hands on the deposit, like REST', async () => {
    const id = newId();
    const txHash = await depositThroughMulticaller(31338, id);
    const { status, body } = await post(gateway.url, indexTransaction, {
      input: { chainId: 31338, txHash, requestId: id },
    });
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data.indexTransaction.message).toBe(
      `Transaction ${txHash} on chain 31338 indexed: 1 deposit(s) for ${id} (confirmed)`,
    );
    expect(handed.filter((d) => d.requestId === id)).toHaveLength(1);
  });

  it('indexSingleTransaction takes the hash directly', async () => {
    const id = newId();
    const txHash = await depositThroughMulticaller(31337, id);
    const { body } = await post(gateway.url, indexSingleTransaction, {
      input: { chainId: 31337, txHash, requestId: id },
    });
    expect(body.data.indexSingleTransaction.message).toContain(`${id} (confirmed)`);
    expect(handed.filter((d) => d.requestId === id)).toHaveLength(1);
  });

  it.each([
    ['an unknown transaction', indexTransaction, { chainId: 31337, txHash: unknownHash }, 'NOT_FOUND'],
    ['an unsupported chain', indexTransaction, { chainId: 999, txHash: unknownHash }, 'UNSUPPORTED_CHAIN'],
    [
      'a chain nobody watches',
      indexSingleTransaction,
      { chainId: 31339, txHash: unknownHash, requestId: unknownHash },
      'SERVICE_UNAVAILABLE',
    ],
    ['a short hash', indexTransaction, { chainId: 31337, txHash: '0x12' }, 'INVALID_INPUT'],
    [
      'a malformed request id',
      indexSingleTransaction,
      { chainId: 31337, txHash: unknownHash, requestId: 'abc' },
      'INVALID_INPUT',
    ],
  ])('fails for %s with its code', async (_case, query, input, code) => {
    const { status, body } = await post(gateway.url, query, { input });
    expect(status).toBe(200);
    expect(body.data).toBeNull();
    expect(body.errors).toHaveLength(1);
    expect(body.errors![0]!.extensions).toMatchObject({ code });
  });
});
