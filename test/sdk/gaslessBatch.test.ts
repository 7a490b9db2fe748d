/**
 * Gasless batches with the unmodified reference client: `executeGaslessBatch` of `@relayprotocol/relay-sdk` signs
 * an EIP-7702 authorization to the batch executor the SDK expects (installed there on the devnet by the gateway's
 * own `contracts/BatchExecutor.sol`), signs the quote's calls (approve + deposit) as an EIP-712 batch and posts it
 * to `POST /execute`; the gateway sends it from its origin sender, recovers that gas from the request's output and
 * fills. The user is a fresh account holding only USDC: its ETH balance stays exactly 0.
 *
 * The SDK client is a process-wide singleton, configured once for the file; the cases run in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestClient,
  createWalletClient,
  encodeAbiParameters,
  erc20Abi,
  http,
  keccak256,
  serializeTransaction,
  size,
  toHex,
  type Address,
  type Hex,
  type PrivateKeyAccount,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import {
  convertViemChainToRelayChain,
  createCaliburExecutor,
  createClient,
  getClient,
  type Execute,
} from '@relayprotocol/relay-sdk';
import { devnetViemChain, SDK_BATCH_EXECUTOR, type DevnetChain } from '../../src/chain/devnet.js';
import { devnetGasPriceOracleAbi, stableTokenAbi } from '../../generated/contracts/index.js';
import { DEVNET_L1_BASE_FEE, GAS_PRICE_ORACLE, OP_STACK_DEVNET_CHAIN_ID } from '../../src/chain/devnetContracts.js';
import { getGaslessSubmission } from '../../src/store/gaslessSubmissions.repository.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { publicClientOf, tokenOf } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
const ADMIN_TOKEN = 'gasless-admin-token-0123456789';

beforeAll(async () => {
  gateway = await startTestGateway({
    adminToken: ADMIN_TOKEN,
    gasless: { maxGas: 1_500_000n, keyPerMinute: 3, userPerMinute: 4 },
  });
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  createClient({
    baseApiUrl: gateway.url,
    source: 'gateway-tests',
    // executeGaslessBatch refuses to start without an apiKey, although it never sends it to a self-hosted URL.
    apiKey: 'not-sent-to-self-hosted-urls',
    chains: gateway.devnet.descriptor.chains.map((chain) => convertViemChainToRelayChain(devnetViemChain(chain))),
    pollingInterval: 200,
    maxPollingAttemptsBeforeTimeout: 150,
  });
});
afterAll(async () => {
  await gateway?.stop();
});

const fresh = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;

const usdcBalance = (chain: DevnetChain, owner: Address): Promise<bigint> =>
  publicClientOf(chain).readContract({
    address: tokenOf(chain, 'USDC'),
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [owner],
  });

/** A new key whose only asset is `usdc` USDC on chain A (minted by the devnet's deployer, the token's owner). */
async function userWithOnlyUsdc(usdc: bigint) {
  const account = privateKeyToAccount(generatePrivateKey());
  const deployer = createWalletClient({
    account: privateKeyToAccount(gateway.devnet.descriptor.deployer.privateKey),
    chain: devnetViemChain(chainA),
    transport: http(chainA.rpcUrl),
  });
  const hash = await deployer.writeContract({
    address: tokenOf(chainA, 'USDC'),
    abi: stableTokenAbi,
    functionName: 'mint',
    args: [account.address, usdc],
  });
  await publicClientOf(chainA).waitForTransactionReceipt({ hash });
  const wallet = createWalletClient({ account, chain: devnetViemChain(chainA), transport: http(chainA.rpcUrl) });
  return { account, wallet };
}

async function quoteFor(wallet: Awaited<ReturnType<typeof userWithOnlyUsdc>>['wallet'], recipient: Address) {
  return getClient().actions.getQuote(
    {
      chainId: chainA.chainId,
      toChainId: chainB.chainId,
      currency: tokenOf(chainA, 'USDC'),
      toCurrency: tokenOf(chainB, 'USDC'),
      amount: '25000000',
      tradeType: 'EXACT_INPUT',
      wallet,
      recipient,
    },
    true,
  );
}

/** What the SDK's executeGaslessBatch builds, made by hand so a test can change one part of it. */
async function batchBody(options: {
  eoa: PrivateKeyAccount;
  calls: Array<{ to: Address; value: bigint; data: Hex }>;
  batchSigner?: PrivateKeyAccount;
  authorizationSigner?: PrivateKeyAccount;
  subsidizeFees?: boolean;
  originGasOverhead?: number;
  requestId?: string;
}) {
  const executor = createCaliburExecutor();
  const client = publicClientOf(chainA);
  const nonce = await client.getTransactionCount({ address: options.eoa.address });
  const auth = await (options.authorizationSigner ?? options.eoa).signAuthorization({
    address: SDK_BATCH_EXECUTOR,
    chainId: chainA.chainId,
    nonce,
  });
  const message = executor.buildSignMessage(options.calls, await executor.getNonce(client, options.eoa.address));
  const signature = await (options.batchSigner ?? options.eoa).signTypedData({
    domain: executor.buildSignDomain(chainA.chainId, options.eoa.address),
    types: executor.eip712Types as any,
    primaryType: 'SignedBatchedCall',
    message,
  });
  const wrapped = encodeAbiParameters([{ type: 'bytes' }, { type: 'bytes' }], [signature, '0x']);
  return {
    executionKind: 'rawCalls',
    data: {
      chainId: chainA.chainId,
      to: options.eoa.address,
      data: executor.encodeExecute(message, wrapped),
      value: '0',
      authorizationList: [
        {
          chainId: Number(auth.chainId),
          address: auth.address,
          nonce: auth.nonce,
          yParity: auth.yParity ?? 0,
          r: auth.r,
          s: auth.s,
        },
      ],
    },
    executionOptions: { referrer: 'gateway-tests', subsidizeFees: options.subsidizeFees ?? false },
    originGasOverhead: options.originGasOverhead ?? 80_000,
    ...(options.requestId === undefined ? {} : { requestId: options.requestId }),
  };
}

/** The quote's transaction items as the SDK batches them. */
const callsOf = (quote: Execute) =>
  quote.steps
    .filter((step) => step.kind === 'transaction')
    .flatMap((step) => step.items)
    .map((item) => ({
      to: item.data.to as Address,
      value: BigInt(item.data.value || '0'),
      data: item.data.data as Hex,
    }));

const execute = (body: unknown, headers: Record<string, string> = {}) =>
  call(gateway.url, 'executeGasless', { body, headers });

const gaslessRows = async (): Promise<number> =>
  Number(
    (
      await gateway.server.core.db
        .selectFrom('outgoing_txs')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('kind', '=', 'gasless')
        .executeTakeFirstOrThrow()
    ).n,
  );

/** A refusal changed nothing: no gasless transaction recorded or sent, the EOA not delegated, the request waiting. */
async function expectNothingSent(rowsBefore: number, eoa: Address, requestId?: string): Promise<void> {
  expect(await gaslessRows()).toBe(rowsBefore);
  expect(await publicClientOf(chainA).getCode({ address: eoa })).toBeUndefined();
  expect(await publicClientOf(chainA).getTransactionCount({ address: eoa })).toBe(0);
  if (requestId !== undefined) {
    const { body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    expect(body.status).toBe('waiting');
  }
}

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };

/** A new API key; `allowance` is its sponsorship allowance in micro-USD (default 0: nothing sponsored). */
async function createKeyWithId(sponsorshipEnabled: boolean, allowance?: string): Promise<{ key: string; id: string }> {
  const created = await call(gateway.url, 'createApiKey', {
    body: {
      name: `gasless-${sponsorshipEnabled}`,
      sponsorshipEnabled,
      ...(allowance === undefined ? {} : { sponsorshipAllowanceUsdMicros: allowance }),
    },
    headers: admin,
  });
  expect(created.status).toBe(201);
  return { key: created.body.key as string, id: created.body.apiKey.id as string };
}

async function createKey(sponsorshipEnabled: boolean, allowance?: string): Promise<string> {
  return (await createKeyWithId(sponsorshipEnabled, allowance)).key;
}

/** The key as the administrator sees it (`GET /admin/api-keys/{id}`). */
async function adminKey(id: string) {
  const { status, body } = await call(gateway.url, 'getApiKey', { path: `/admin/api-keys/${id}`, headers: admin });
  expect(status).toBe(200);
  return body.apiKey as {
    sponsorshipAllowanceUsdMicros: string;
    sponsorshipSpentUsdMicros: string;
    sponsorshipRemainingUsdMicros: string;
  };
}

/** The origin gas recorded on a gasless request (`fees_actual.originGas`). */
async function originGasOf(requestId: string) {
  const request = await gateway.server.core.db
    .selectFrom('requests')
    .select(['fees_actual', 'amount_out', 'status'])
    .where('id', '=', requestId.toLowerCase())
    .executeTakeFirstOrThrow();
  return (request.fees_actual as any)?.originGas as
    { usdMicros: string; sponsored: boolean; recoveredFromOutput: string; sponsorApiKeyId: string | null } | undefined;
}

async function waitForSuccess(requestId: string): Promise<void> {
  for (;;) {
    const { body: status } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    if (status.status === 'success') return;
    expect(['depositing', 'pending', 'submitted', 'success']).toContain(status.status);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let paidRequestId: string;

describe('gasless batches (POST /execute) with the unmodified SDK', () => {
  it('a fresh account holding only USDC bridges it: the recipient gets the quoted output less the recovered origin gas, the user keeps 0 ETH', async () => {
    const { account, wallet } = await userWithOnlyUsdc(30_000_000n);
    const recipient = fresh(0x6a5_0001);
    const client = publicClientOf(chainA);
    expect(await client.getBalance({ address: account.address })).toBe(0n);
    const before = await usdcBalance(chainB, recipient);

    const quote = await quoteFor(wallet, recipient);
    expect(quote.steps.map((step) => step.id)).toEqual(['approve', 'deposit']);
    const progress: string[] = [];
    const { requestId } = await getClient().actions.executeGaslessBatch({
      quote,
      walletClient: wallet,
      onProgress: (event) => progress.push(event.status),
    });
    expect(requestId).toBe(quote.steps[1]!.requestId);
    paidRequestId = requestId;
    expect(progress).toEqual(['signing_authorization', 'signing_batch', 'submitting', 'polling', 'success']);

    // The EOA is delegated to the executor at the SDK's address, and paid no gas at all.
    expect((await client.getCode({ address: account.address }))?.toLowerCase()).toBe(
      `0xef0100${SDK_BATCH_EXECUTOR.slice(2).toLowerCase()}`,
    );
    expect(await client.getBalance({ address: account.address })).toBe(0n);
    expect(await usdcBalance(chainA, account.address)).toBe(30_000_000n - 25_000_000n);

    // The gateway's sender paid for a type-4 transaction; what it recovered is in the request's actual fees.
    const { status, body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    expect(status).toBe(200);
    expect(body.status).toBe('success');
    const depositTx = await client.getTransaction({ hash: body.inTxHashes![0] as Hex });
    expect(depositTx.type).toBe('eip7702');
    expect(depositTx.from.toLowerCase()).toBe(gateway.devnet.descriptor.solver.address.toLowerCase());
    expect(depositTx.to?.toLowerCase()).toBe(account.address.toLowerCase());

    const request = await gateway.server.core.db
      .selectFrom('requests')
      .select(['amount_out', 'fees_actual', 'committed_outflow'])
      .where('id', '=', requestId.toLowerCase())
      .executeTakeFirstOrThrow();
    const originGas = (request.fees_actual as any).originGas;
    const recovered = BigInt(originGas.recoveredFromOutput);
    expect(recovered).toBeGreaterThan(0n);
    expect(originGas.sponsored).toBe(false);
    const quoted = BigInt(quote.details!.currencyOut!.amount!);
    expect(BigInt(String(request.amount_out))).toBe(quoted - recovered);
    // What the fill was counted to take from the solver while in flight is the reduced output it paid.
    expect(request.committed_outflow).toEqual([
      { currency: tokenOf(chainB, 'USDC').toLowerCase(), amount: (quoted - recovered).toString() },
    ]);
    expect((await usdcBalance(chainB, recipient)) - before).toBe(quoted - recovered);
  });

  it('sponsored by an API key with sponsorship (x-api-key added with an interceptor on the SDK axios): the output is not reduced, the allowance is drawn', async () => {
    const { key, id } = await createKeyWithId(true, '1000000000');
    const axios = getClient().utils.axios;
    const interceptor = axios.interceptors.request.use((config) => {
      config.headers['x-api-key'] = key;
      return config;
    });
    try {
      const { account, wallet } = await userWithOnlyUsdc(25_000_000n);
      const recipient = fresh(0x6a5_0002);
      const quote = await quoteFor(wallet, recipient);
      const { requestId } = await getClient().actions.executeGaslessBatch({
        quote,
        walletClient: wallet,
        subsidizeFees: true,
      });
      expect(await publicClientOf(chainA).getBalance({ address: account.address })).toBe(0n);
      const quoted = BigInt(quote.details!.currencyOut!.amount!);
      expect(await usdcBalance(chainB, recipient)).toBe(quoted);
      const request = await gateway.server.core.db
        .selectFrom('requests')
        .select(['fees_actual'])
        .where('id', '=', requestId.toLowerCase())
        .executeTakeFirstOrThrow();
      const originGas = (request.fees_actual as any).originGas;
      expect(originGas).toMatchObject({ sponsored: true, recoveredFromOutput: '0', sponsorApiKeyId: id });
      // The key's allowance paid the origin gas's USD value.
      expect(BigInt(originGas.usdMicros)).toBeGreaterThan(0n);
      expect(await adminKey(id)).toMatchObject({
        sponsorshipAllowanceUsdMicros: '1000000000',
        sponsorshipSpentUsdMicros: originGas.usdMicros,
        sponsorshipRemainingUsdMicros: (1_000_000_000n - BigInt(originGas.usdMicros)).toString(),
      });
    } finally {
      axios.interceptors.request.eject(interceptor);
    }
  });
});

describe('metered sponsorship: subsidizeFees draws on the API key allowance', () => {
  /** What one sponsored batch drew (micro-USD), measured by the first case; sizes the race's allowance. */
  let oneBatchUsdMicros: bigint;

  async function sponsoredSetup() {
    const user = await userWithOnlyUsdc(30_000_000n);
    const quote = await quoteFor(user.wallet, fresh(0x6a5_2000));
    const requestId = quote.steps.at(-1)!.requestId!;
    const body = await batchBody({ eoa: user.account, calls: callsOf(quote), subsidizeFees: true });
    return { ...user, requestId, body };
  }

  it('a batch the remaining allowance cannot pay is 400 SPONSOR_BALANCE_TOO_LOW, nothing drawn or sent; after the admin raises it, it goes through', async () => {
    const { key, id } = await createKeyWithId(true, '1');
    const { account, requestId, body } = await sponsoredSetup();
    const rows = await gaslessRows();
    const refused = await execute(body, { 'x-api-key': key });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body).toMatchObject({
      errorCode: 'SPONSOR_BALANCE_TOO_LOW',
      errorData: 'remainingUsdMicros=1',
      statusCode: 400,
    });
    await expectNothingSent(rows, account.address, requestId);
    expect(await adminKey(id)).toMatchObject({ sponsorshipSpentUsdMicros: '0', sponsorshipRemainingUsdMicros: '1' });
    expect(await originGasOf(requestId)).toBeUndefined();

    // The administrator tops the key up over real HTTP; the same signed batch is then accepted and paid for.
    const patched = await call(gateway.url, 'updateApiKey', {
      path: `/admin/api-keys/${id}`,
      headers: admin,
      body: { sponsorshipAllowanceUsdMicros: '50000000' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.apiKey).toMatchObject({ sponsorshipAllowanceUsdMicros: '50000000' });
    const accepted = await execute(body, { 'x-api-key': key });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    await waitForSuccess(requestId);
    const originGas = (await originGasOf(requestId))!;
    expect(originGas).toMatchObject({ sponsored: true, recoveredFromOutput: '0', sponsorApiKeyId: id });
    oneBatchUsdMicros = BigInt(originGas.usdMicros);
    expect(await adminKey(id)).toMatchObject({
      sponsorshipSpentUsdMicros: originGas.usdMicros,
      sponsorshipRemainingUsdMicros: (50_000_000n - oneBatchUsdMicros).toString(),
    });
    expect(await publicClientOf(chainA).getBalance({ address: account.address })).toBe(0n);
  });

  it('refuses a malformed allowance (400, the key unchanged)', async () => {
    const { id } = await createKeyWithId(true, '10');
    for (const sponsorshipAllowanceUsdMicros of ['-1', '1.5', 'lots']) {
      const { status, body } = await call(gateway.url, 'updateApiKey', {
        path: `/admin/api-keys/${id}`,
        headers: admin,
        body: { sponsorshipAllowanceUsdMicros },
      });
      expect(status).toBe(400);
      expect(body).toMatchObject({ errorCode: 'INVALID_INPUT' });
    }
    expect(await adminKey(id)).toMatchObject({ sponsorshipAllowanceUsdMicros: '10' });
  });

  it('racing sponsored batches cannot overdraw: the allowance holds about one and a half batches, three race for it', async () => {
    const allowance = (oneBatchUsdMicros * 3n) / 2n;
    const { key, id } = await createKeyWithId(true, allowance.toString());
    // One after the other: the deployer mints each user's USDC.
    const users = [await sponsoredSetup(), await sponsoredSetup(), await sponsoredSetup()];
    const rows = await gaslessRows();
    const answers = await Promise.all(users.map((user) => execute(user.body, { 'x-api-key': key })));
    const accepted = users.filter((_, i) => answers[i]!.status === 200);
    const refused = users.filter((_, i) => answers[i]!.status !== 200);
    for (const answer of answers.filter((a) => a.status !== 200))
      expect(answer.body, JSON.stringify(answer.body)).toMatchObject({ errorCode: 'SPONSOR_BALANCE_TOO_LOW' });
    expect(accepted.length).toBeGreaterThanOrEqual(1);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    for (const user of accepted) await waitForSuccess(user.requestId);

    // What was drawn is exactly what the accepted batches cost, and never more than the allowance.
    let drawn = 0n;
    for (const user of accepted) drawn += BigInt((await originGasOf(user.requestId))!.usdMicros);
    const after = await adminKey(id);
    expect(BigInt(after.sponsorshipSpentUsdMicros)).toBe(drawn);
    expect(drawn).toBeLessThanOrEqual(allowance);
    expect(await gaslessRows()).toBe(rows + accepted.length);
    for (const user of refused) {
      expect(await publicClientOf(chainA).getCode({ address: user.account.address })).toBeUndefined();
      const { body } = await call(gateway.url, 'getIntentStatus', { query: { requestId: user.requestId } });
      expect(body.status).toBe('waiting');
    }
  });
});

describe('POST /execute refusals: a 4xx, and nothing is sent', () => {
  async function setup(usdc = 30_000_000n) {
    const user = await userWithOnlyUsdc(usdc);
    const quote = await quoteFor(user.wallet, fresh(0x6a5_1000));
    return { ...user, quote, requestId: quote.steps.at(-1)!.requestId!, rows: await gaslessRows() };
  }

  it('a batch that deposits nothing (only the approval)', async () => {
    const { account, quote, requestId, rows } = await setup();
    const body = await batchBody({ eoa: account, calls: callsOf(quote).slice(0, 1) });
    const { status, body: answer } = await execute(body);
    expect(status).toBe(400);
    expect(answer).toMatchObject({ errorCode: 'INVALID_INPUT', statusCode: 400 });
    expect(answer.message).toMatch(/no deposit/);
    await expectNothingSent(rows, account.address, requestId);
  });

  it('a deposit for an unknown request', async () => {
    const { account, quote, requestId, rows } = await setup();
    const unknown = keccak256(toHex('no such request'));
    const calls = callsOf(quote).map((c, i) =>
      i === 1 ? { ...c, data: (c.data.slice(0, -64) + unknown.slice(2)) as Hex } : c,
    );
    const { status, body: answer } = await execute(await batchBody({ eoa: account, calls }));
    expect(status).toBe(404);
    expect(answer).toMatchObject({ errorCode: 'NOT_FOUND' });
    await expectNothingSent(rows, account.address, requestId);
  });

  it('a deposit for a request that is already paid', async () => {
    const { account, quote, requestId, rows } = await setup();
    const calls = callsOf(quote).map((c, i) =>
      i === 1 ? { ...c, data: (c.data.slice(0, -64) + paidRequestId.slice(2)) as Hex } : c,
    );
    const { status, body: answer } = await execute(await batchBody({ eoa: account, calls }));
    expect(status).toBe(409);
    expect(answer).toMatchObject({ errorCode: 'CONFLICT' });
    await expectNothingSent(rows, account.address, requestId);
  });

  it('a batch whose gas (originGasOverhead included) is over the configured cap', async () => {
    const { account, quote, requestId, rows } = await setup();
    const body = await batchBody({ eoa: account, calls: callsOf(quote), originGasOverhead: 1_500_000 });
    const { status, body: answer } = await execute(body);
    expect(status).toBe(400);
    expect(answer).toMatchObject({ errorCode: 'INVALID_INPUT', errorData: 'maxGas=1500000' });
    await expectNothingSent(rows, account.address, requestId);
  });

  it('a batch that reverts in simulation (signed by another key): the decoded revert in the reference shape', async () => {
    const { account, quote, requestId, rows } = await setup();
    const other = privateKeyToAccount(generatePrivateKey());
    const body = await batchBody({ eoa: account, calls: callsOf(quote), batchSigner: other });
    const { status, body: answer } = await execute(body);
    expect(status).toBe(400);
    expect(answer).toMatchObject({
      errorCode: 'SIMULATION_FAILED',
      error: 'INVALID_SIGNATURE',
      requestId,
      details: { revert: { type: 'customError', label: 'INVALID_SIGNATURE', name: 'InvalidSignature', args: {} } },
    });
    expect(answer.details.revert.selector).toBe(keccak256(toHex('InvalidSignature()')).slice(0, 10));
    await expectNothingSent(rows, account.address, requestId);
  });

  it('a batch with a call that reverts only at a real gas price: refused in simulation, which carries the fee caps', async () => {
    // Runtime bytecode installed with anvil_setCode: succeeds when tx.gasprice is 0 (a simulation without fee
    // fields), otherwise burns its gas and reverts. GASPRICE ISZERO PUSH1 0x12 JUMPI; loop: JUMPDEST PUSH2 10000
    // GAS GT PUSH1 0x05 JUMPI (while gas left > 10000); PUSH1 0 DUP1 REVERT; ok: JUMPDEST STOP.
    const trap = fresh(0x6a5_2f01);
    await createTestClient({ mode: 'anvil', chain: devnetViemChain(chainA), transport: http(chainA.rpcUrl) }).setCode({
      address: trap,
      bytecode: '0x3a156012575b6127105a11600557600080fd5b00',
    });
    const { account, quote, requestId, rows } = await setup();
    const body = await batchBody({ eoa: account, calls: [...callsOf(quote), { to: trap, value: 0n, data: '0x' }] });
    const { status, body: answer } = await execute(body);
    expect(status, JSON.stringify(answer)).toBe(400);
    expect(answer).toMatchObject({ errorCode: 'SIMULATION_FAILED', requestId });
    await expectNothingSent(rows, account.address, requestId);
  });

  it('an authorization signed by someone other than data.to', async () => {
    const { account, quote, requestId, rows } = await setup();
    const other = privateKeyToAccount(generatePrivateKey());
    const body = await batchBody({ eoa: account, calls: callsOf(quote), authorizationSigner: other });
    const { status, body: answer } = await execute(body);
    expect(status).toBe(400);
    expect(answer).toMatchObject({ errorCode: 'INVALID_INPUT', errorData: 'authorizationList' });
    await expectNothingSent(rows, account.address, requestId);
  });

  it('subsidizeFees without a key (401) and with a key that has no sponsorship (403)', async () => {
    const { account, quote, requestId, rows } = await setup();
    const body = await batchBody({ eoa: account, calls: callsOf(quote), subsidizeFees: true });
    const anonymous = await execute(body);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toMatchObject({ errorCode: 'UNAUTHORIZED' });
    const plain = await execute(body, { 'x-api-key': await createKey(false) });
    expect(plain.status).toBe(403);
    expect(plain.body).toMatchObject({ errorCode: 'FORBIDDEN' });
    await expectNothingSent(rows, account.address, requestId);
  });

  it('per-user and per-key limits on gasless submissions (429 RATE_LIMITED)', async () => {
    // Fixed one-minute windows: if the attempts straddle a minute boundary the count restarts, so try again.
    for (let attempt = 0; ; attempt++) {
      const { account, quote, requestId, rows } = await setup();
      const body = await batchBody({ eoa: account, calls: callsOf(quote).slice(0, 1) });
      const minute = Math.floor(Date.now() / 60_000);
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++) statuses.push((await execute(body)).status);
      const key = await createKey(false);
      const keyed: number[] = [];
      for (let i = 0; i < 4; i++) {
        const other = await setup();
        const otherBody = await batchBody({ eoa: other.account, calls: callsOf(other.quote).slice(0, 1) });
        keyed.push((await execute(otherBody, { 'x-api-key': key })).status);
      }
      if (Math.floor(Date.now() / 60_000) !== minute && attempt === 0) continue;
      expect(statuses).toEqual([400, 400, 400, 400, 429]);
      expect(keyed).toEqual([400, 400, 400, 429]);
      await expectNothingSent(rows, account.address, requestId);
      break;
    }
  });

  it('the same batch posted twice is sent once', async () => {
    const { account, quote, requestId, rows } = await setup();
    const body = await batchBody({ eoa: account, calls: callsOf(quote) });
    const [first, second] = await Promise.all([execute(body), execute(body)]);
    const statuses = [first.status, second.status].sort();
    // Both answer the same, or the racing one is told the request is already being paid; never two sends.
    expect(statuses[0]).toBe(200);
    expect([200, 409]).toContain(statuses[1]);
    const again = await execute(body);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ message: 'Transaction submitted', requestId });
    expect(await gaslessRows()).toBe(rows + 1);
  });

  it('GraphQL executeGasless runs the same operation: the batch is sent and the request filled', async () => {
    const { account, quote, requestId } = await setup();
    const body = await batchBody({ eoa: account, calls: callsOf(quote) });
    const response = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'mutation($input: ExecuteGaslessInput!) { executeGasless(input: $input) { message requestId } }',
        variables: {
          input: {
            data: body.data,
            executionOptions: { subsidizeFees: false },
            requestId,
            originGasOverhead: '80000',
          },
        },
      }),
    });
    const answer = await response.json();
    expect(answer.errors).toBeUndefined();
    expect(answer.data.executeGasless).toEqual({ message: 'Transaction submitted', requestId });
    for (;;) {
      const { body: status } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
      if (status.status === 'success') break;
      expect(['depositing', 'pending', 'submitted', 'success']).toContain(status.status);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await publicClientOf(chainA).getBalance({ address: account.address })).toBe(0n);
  });
});

describe('a batch that passes simulation and reverts on chain', () => {
  it("the user's USDC moves away before the batch is mined: it reverts, its gas is recorded, nothing is filled, the request stays payable, and the user's next batch is refused for a while", async () => {
    const { account, wallet } = await userWithOnlyUsdc(30_000_000n);
    const recipient = fresh(0x6a5_3001);
    const quote = await quoteFor(wallet, recipient);
    const requestId = quote.steps.at(-1)!.requestId!;
    const quoted = BigInt(quote.details!.currencyOut!.amount!);
    const body = await batchBody({ eoa: account, calls: callsOf(quote) });
    const client = publicClientOf(chainA);
    const testClient = createTestClient({
      mode: 'anvil',
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    });
    const funder = gateway.devnet.descriptor.accounts[1]!;
    const usdcA = tokenOf(chainA, 'USDC');

    // Blocks are mined on demand from here: the batch passes simulation and waits in the pool.
    await testClient.setAutomine(false);
    let batchHash: Hex;
    try {
      const accepted = await execute(body);
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
      const row = await gateway.server.core.db
        .selectFrom('outgoing_txs')
        .selectAll()
        .where('request_id', '=', requestId.toLowerCase())
        .where('kind', '=', 'gasless')
        .executeTakeFirstOrThrow();
      batchHash = row.hashes.at(-1) as Hex;

      // Meanwhile the user signs an EIP-3009 transfer of all their USDC elsewhere; a funded account relays it
      // with a higher tip, so it is mined first, in the same block.
      const nonce = keccak256(toHex(`away-${account.address}`));
      const validBefore = BigInt(Math.floor(Date.now() / 1000) + 3_600);
      const signature = await account.signTypedData({
        domain: { name: 'USD Coin', version: '1', chainId: chainA.chainId, verifyingContract: usdcA },
        types: {
          TransferWithAuthorization: [
            { name: 'from', type: 'address' },
            { name: 'to', type: 'address' },
            { name: 'value', type: 'uint256' },
            { name: 'validAfter', type: 'uint256' },
            { name: 'validBefore', type: 'uint256' },
            { name: 'nonce', type: 'bytes32' },
          ],
        },
        primaryType: 'TransferWithAuthorization',
        message: { from: account.address, to: funder.address, value: 30_000_000n, validAfter: 0n, validBefore, nonce },
      });
      const r: Hex = `0x${signature.slice(2, 66)}`;
      const sPart: Hex = `0x${signature.slice(66, 130)}`;
      const v = parseInt(signature.slice(130, 132), 16);
      const away = await createWalletClient({
        account: privateKeyToAccount(funder.privateKey),
        chain: devnetViemChain(chainA),
        transport: http(chainA.rpcUrl),
      }).writeContract({
        address: usdcA,
        abi: stableTokenAbi,
        functionName: 'transferWithAuthorization',
        args: [account.address, funder.address, 30_000_000n, 0n, validBefore, nonce, v, r, sPart],
        gas: 200_000n,
        maxFeePerGas: 200_000_000_000n,
        maxPriorityFeePerGas: 100_000_000_000n,
      });
      await testClient.mine({ blocks: 1 });
      const [awayReceipt, batchReceipt] = await Promise.all([
        client.getTransactionReceipt({ hash: away }),
        client.getTransactionReceipt({ hash: batchHash }),
      ]);
      expect(awayReceipt.status).toBe('success');
      expect(batchReceipt.blockNumber).toBe(awayReceipt.blockNumber);
      expect(batchReceipt.transactionIndex).toBeGreaterThan(awayReceipt.transactionIndex);
      expect(batchReceipt.status).toBe('reverted');
    } finally {
      await testClient.setAutomine(true);
    }

    // The request is not lost or stuck: it is waiting for its deposit again, with its output restored.
    for (;;) {
      const { body: status } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
      if (status.status === 'waiting') break;
      expect(status.status).toBe('depositing');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const db = gateway.server.core.db;
    const request = await db
      .selectFrom('requests')
      .select(['amount_out', 'fees_actual', 'committed_outflow'])
      .where('id', '=', requestId.toLowerCase())
      .executeTakeFirstOrThrow();
    expect(BigInt(String(request.amount_out))).toBe(quoted);
    expect(request.fees_actual).toBeNull();
    // Its fill would again take the whole quoted output.
    expect(request.committed_outflow).toEqual([
      { currency: tokenOf(chainB, 'USDC').toLowerCase(), amount: quoted.toString() },
    ]);
    expect(await getGaslessSubmission(db, requestId)).toBeUndefined();

    // The gas the solver spent on the reverted batch is recorded: its outgoing row keeps the hash, and the ledger
    // holds the receipt's gas for this request.
    const receipt = await client.getTransactionReceipt({ hash: batchHash! });
    expect(receipt.from.toLowerCase()).toBe(gateway.devnet.descriptor.solver.address.toLowerCase());
    const rows = await db
      .selectFrom('outgoing_txs')
      .select(['kind', 'status', 'hashes'])
      .where('request_id', '=', requestId.toLowerCase())
      .execute();
    expect(rows).toEqual([{ kind: 'gasless', status: 'replaced', hashes: [batchHash!.toLowerCase()] }]);
    const gas = await db
      .selectFrom('ledger_entries')
      .select(['kind', 'amount', 'request_id', 'account'])
      .where('movement_key', '=', `gas:${chainA.chainId}:${batchHash!.toLowerCase()}`)
      .orderBy('id')
      .execute();
    expect(gas.length).toBeGreaterThan(0);
    for (const entry of gas) {
      expect(entry.kind).toBe('gas_spent');
      expect(entry.request_id).toBe(requestId.toLowerCase());
      expect(BigInt(entry.amount) * (BigInt(entry.amount) < 0n ? -1n : 1n)).toBe(
        receipt.gasUsed * receipt.effectiveGasPrice,
      );
    }

    // Nothing was filled.
    expect(await usdcBalance(chainB, recipient)).toBe(0n);
    expect(await client.getBalance({ address: account.address })).toBe(0n);

    // The request stays payable (by a deposit the user sends), but the batch moved nothing of the user's that the
    // solver could keep: the user is refused further gasless batches for a while (429, the reference's error shape),
    // and nothing is sent. The same body posted again would cost the solver the same gas each time.
    const rowsBefore = await gaslessRows();
    const again = await execute(await batchBody({ eoa: account, calls: callsOf(quote) }));
    expect(again.status, JSON.stringify(again.body)).toBe(429);
    expect(again.body).toMatchObject({ errorCode: 'RATE_LIMITED' });
    expect(again.body.errorData).toMatch(/^retryAfterSeconds=\d+$/);
    expect(await gaslessRows()).toBe(rowsBefore);
    const { body: status } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    expect(status.status).toBe('waiting');
    expect(await usdcBalance(chainB, recipient)).toBe(0n);
  });
});

describe('a negative originGasOverhead through GraphQL: the attack that drained the solver', () => {
  /** `Mutation.executeGasless` with the batch of `body` and the given overhead (a decimal string, as BigInt is). */
  async function graphqlExecute(
    body: Awaited<ReturnType<typeof batchBody>>,
    originGasOverhead: string,
    headers: Record<string, string> = {},
  ) {
    const response = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({
        query: 'mutation($input: ExecuteGaslessInput!) { executeGasless(input: $input) { message requestId } }',
        variables: {
          input: {
            data: body.data,
            executionOptions: { subsidizeFees: body.executionOptions.subsidizeFees },
            originGasOverhead,
          },
        },
      }),
    });
    return (await response.json()) as {
      data: unknown;
      errors?: Array<{ message: string; extensions: { code: string; status: number; errorData?: string } }>;
    };
  }

  /**
   * The USDC balances the attack moved: the user's on A, the recipient's and the solver's on B (the solver's on A
   * also moves when earlier deposits are settled, so it says nothing here).
   */
  async function balances(user: Address, recipient: Address) {
    return {
      user: await usdcBalance(chainA, user),
      recipient: await usdcBalance(chainB, recipient),
      solver: await usdcBalance(chainB, gateway.devnet.descriptor.solver.address),
    };
  }

  const amountOutOf = async (requestId: string): Promise<bigint> =>
    BigInt(
      String(
        (
          await gateway.server.core.db
            .selectFrom('requests')
            .select('amount_out')
            .where('id', '=', requestId.toLowerCase())
            .executeTakeFirstOrThrow()
        ).amount_out,
      ),
    );

  async function setup(recipient: Address, subsidizeFees: boolean) {
    const user = await userWithOnlyUsdc(30_000_000n);
    const quote = await quoteFor(user.wallet, recipient);
    const requestId = quote.steps.at(-1)!.requestId!;
    const body = await batchBody({ eoa: user.account, calls: callsOf(quote), subsidizeFees });
    return { ...user, requestId, body };
  }

  it('the batch that would have received 1,000,009 USDC for 10 is refused 400 INVALID_INPUT, as REST refuses it; no balance moves', async () => {
    const recipient = fresh(0x6a5_4001);
    const { account, requestId, body } = await setup(recipient, false);
    const rows = await gaslessRows();
    const before = await balances(account.address, recipient);
    const amountOut = await amountOutOf(requestId);

    // The attacker's overhead: minus enough gas that "recovering" it adds about a million USDC to the output.
    const answer = await graphqlExecute(body, '-100000000000000');
    expect(answer.data).toBeNull();
    expect(answer.errors).toHaveLength(1);
    expect(answer.errors![0]!.extensions).toMatchObject({
      code: 'INVALID_INPUT',
      status: 400,
      errorData: 'originGasOverhead',
    });
    expect(answer.errors![0]!.message).toMatch(/^originGasOverhead must be a whole number from 0 to /);

    // REST refuses the same input with the same status and code.
    const rest = await execute({ ...body, originGasOverhead: -100_000_000_000_000 });
    expect(rest.status).toBe(400);
    expect(rest.body).toMatchObject({ errorCode: 'INVALID_INPUT' });

    await expectNothingSent(rows, account.address, requestId);
    expect(await amountOutOf(requestId)).toBe(amountOut);
    expect(await originGasOf(requestId)).toBeUndefined();
    expect(await balances(account.address, recipient)).toEqual(before);
  });

  it("sponsored: a negative overhead does not reset the sponsor's spent meter; it stays what the honest batch drew", async () => {
    const { key, id } = await createKeyWithId(true, '3000000');
    // An honest sponsored batch first, so the meter has something a negative draw could take back.
    const honest = await setup(fresh(0x6a5_4002), true);
    const accepted = await execute(honest.body, { 'x-api-key': key });
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    const spent = (await adminKey(id)).sponsorshipSpentUsdMicros;
    expect(BigInt(spent)).toBeGreaterThan(0n);
    await waitForSuccess(honest.requestId);

    const recipient = fresh(0x6a5_4003);
    const attacker = await setup(recipient, true);
    const rows = await gaslessRows();
    const before = await balances(attacker.account.address, recipient);
    const amountOut = await amountOutOf(attacker.requestId);
    const answer = await graphqlExecute(attacker.body, '-100000000000000', { 'x-api-key': key });
    expect(answer.errors![0]!.extensions).toMatchObject({
      code: 'INVALID_INPUT',
      status: 400,
      errorData: 'originGasOverhead',
    });
    await expectNothingSent(rows, attacker.account.address, attacker.requestId);
    expect(await adminKey(id)).toMatchObject({
      sponsorshipSpentUsdMicros: spent,
      sponsorshipRemainingUsdMicros: (3_000_000n - BigInt(spent)).toString(),
    });
    expect(await amountOutOf(attacker.requestId)).toBe(amountOut);
    expect(await balances(attacker.account.address, recipient)).toEqual(before);
  });
});

describe('a gasless batch on an OP-stack origin (devnet chain 31339, with a GasPriceOracle predeploy)', () => {
  it("recovers the batch transaction's L1 data fee, read from the predeploy, with its gas", async () => {
    const chainC = gateway.devnet.descriptor.chains[2]!;
    expect(chainC.chainId).toBe(OP_STACK_DEVNET_CHAIN_ID);
    const account = privateKeyToAccount(generatePrivateKey());
    const deployer = createWalletClient({
      account: privateKeyToAccount(gateway.devnet.descriptor.deployer.privateKey),
      chain: devnetViemChain(chainC),
      transport: http(chainC.rpcUrl),
    });
    const minted = await deployer.writeContract({
      address: tokenOf(chainC, 'USDC'),
      abi: stableTokenAbi,
      functionName: 'mint',
      args: [account.address, 30_000_000n],
    });
    await publicClientOf(chainC).waitForTransactionReceipt({ hash: minted });
    const wallet = createWalletClient({ account, chain: devnetViemChain(chainC), transport: http(chainC.rpcUrl) });
    const quote = await getClient().actions.getQuote(
      {
        chainId: chainC.chainId,
        toChainId: chainA.chainId,
        currency: tokenOf(chainC, 'USDC'),
        toCurrency: tokenOf(chainA, 'USDC'),
        amount: '25000000',
        tradeType: 'EXACT_INPUT',
        wallet,
        recipient: fresh(0x6a5_0c01),
      },
      true,
    );
    const { requestId } = await getClient().actions.executeGaslessBatch({ quote, walletClient: wallet });

    const { body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    expect(body.status).toBe('success');
    const sent = await publicClientOf(chainC).getTransaction({ hash: body.inTxHashes![0] as Hex });
    // The bytes priced: the batch's transaction as sent (to the user, its data and authorization), unsigned, at the
    // widest nonce, gas and fee fields; the oracle's documented formula on them.
    const bytes = serializeTransaction({
      type: 'eip7702',
      chainId: chainC.chainId,
      nonce: 0xff_ff_ff,
      gas: 2n ** 32n - 1n,
      maxFeePerGas: 2n ** 40n - 1n,
      maxPriorityFeePerGas: 2n ** 40n - 1n,
      to: sent.to!,
      value: 0n,
      data: sent.input,
      authorizationList: sent.authorizationList!,
    });
    const l1Fee = await publicClientOf(chainC).readContract({
      address: GAS_PRICE_ORACLE,
      abi: devnetGasPriceOracleAbi,
      functionName: 'getL1Fee',
      args: [bytes],
    });
    expect(l1Fee).toBe((BigInt(size(bytes)) + 68n) * 16n * DEVNET_L1_BASE_FEE);

    const request = await gateway.server.core.db
      .selectFrom('requests')
      .select(['fees_actual'])
      .where('id', '=', requestId.toLowerCase())
      .executeTakeFirstOrThrow();
    const originGas = (request.fees_actual as any).originGas;
    expect(BigInt(originGas.l1Fee)).toBe(l1Fee);
    expect(BigInt(originGas.amount)).toBe(BigInt(originGas.gasUnits) * BigInt(originGas.gasPrice) + l1Fee);
  });
});
