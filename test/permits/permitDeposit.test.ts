/**
 * Permit deposits on a real devnet with the real gateway: a `usePermit` quote answers one EIP-712 signature step,
 * `POST /execute/permits` (and GraphQL `submitPermit`) checks the posted signature against the quoted permit and
 * the chain, and the solver's sender deposits through the approval proxy. Every refusal answers a 4xx in the
 * reference's shape and sends nothing: the solver's nonce on the origin chain, the user's balance and the
 * request's status are checked unchanged.
 *
 * The users are fresh keys holding USDC and no ETH; a funded devnet account hands them their USDC.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestClient,
  createWalletClient,
  erc20Abi,
  http,
  parseGwei,
  parseUnits,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { devnetViemChain, type DevnetChain } from '../../src/chain/devnet.js';
import { permitTokenAbi } from '../../generated/contracts/index.js';
import { PERMIT_DEPOSIT_GAS } from '../../src/core/permits/typedData.js';
import { call } from '../helpers/conformance.js';
import { post as graphqlPost } from '../graphql/harness.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { publicClientOf, tokenOf, waitForStatus } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let usdcA: Address;

beforeAll(async () => {
  gateway = await startTestGateway(
    {},
    {
      // MNR is configured as if it supported permits; it does not, and the gateway must notice.
      configure: (config) => {
        for (const chain of config.chains)
          for (const currency of chain.currencies) if (currency.symbol === 'MNR') currency.supportsPermit = true;
        return config;
      },
    },
  );
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  usdcA = tokenOf(chainA, 'USDC');
});
afterAll(async () => {
  await gateway?.stop();
});

const funder = () => gateway.devnet.descriptor.accounts[1]!;
const walletOf = (privateKey: Hex) =>
  createWalletClient({
    account: privateKeyToAccount(privateKey),
    chain: devnetViemChain(chainA),
    transport: http(chainA.rpcUrl),
  });

const usdcBalance = (owner: Address) =>
  publicClientOf(chainA).readContract({ address: usdcA, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });

/** A fresh key holding `usdc` USDC on chain A and no ETH. */
async function freshUser(usdc = '30'): Promise<PrivateKeyAccount> {
  const user = privateKeyToAccount(generatePrivateKey());
  const hash = await walletOf(funder().privateKey).writeContract({
    address: usdcA,
    abi: erc20Abi,
    functionName: 'transfer',
    args: [user.address, parseUnits(usdc, 6)],
  });
  await publicClientOf(chainA).waitForTransactionReceipt({ hash });
  return user;
}

interface SignItem {
  data: {
    sign: { domain: any; types: any; primaryType: string; value: Record<string, string> };
    post: { endpoint: string; method: string; body: { kind: string; requestId: Hex; api: string } };
  };
  check: { endpoint: string };
}

async function permitQuote(user: Address, extra: Record<string, unknown> = {}) {
  const { status, body } = await call(gateway.url, 'getQuote', {
    body: {
      user,
      recipient: '0x00000000000000000000000000000000005d1e02',
      originChainId: chainA.chainId,
      destinationChainId: chainB.chainId,
      originCurrency: usdcA,
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: parseUnits('10', 6).toString(),
      tradeType: 'EXACT_INPUT',
      usePermit: true,
      ...extra,
    },
  });
  expect(status, JSON.stringify(body)).toBe(200);
  const step = body.steps[0];
  return { quote: body, requestId: step.requestId as Hex, item: step.items[0] as SignItem };
}

/** Signs the item's EIP-712 payload, optionally changed first (a tampered message). */
function sign(account: PrivateKeyAccount, item: SignItem, change: Record<string, string> = {}): Promise<Hex> {
  const { domain, types, primaryType, value } = item.data.sign;
  return account.signTypedData({ domain, types, primaryType, message: { ...value, ...change } });
}

const post = (item: SignItem, signature: Hex) =>
  call(gateway.url, 'submitPermit', { query: { signature }, body: item.data.post.body });

const statusOf = async (requestId: Hex) =>
  (await call(gateway.url, 'getIntentStatus', { query: { requestId } })).body.status as string;

/**
 * What a refusal must leave as it was: no transaction of the gateway for the request, the user's USDC, the
 * authorization's nonce unused on the token, the request's status, no permit recorded.
 */
async function snapshot(user: Address, requestId: Hex, nonce: Hex) {
  const db = gateway.server.core.db;
  const [permits, outgoing] = await Promise.all([
    db.selectFrom('permits').select('request_id').where('request_id', '=', requestId.toLowerCase()).execute(),
    db.selectFrom('outgoing_txs').select('id').where('request_id', '=', requestId.toLowerCase()).execute(),
  ]);
  return {
    outgoing: outgoing.length,
    userUsdc: await usdcBalance(user),
    nonceUsed: await publicClientOf(chainA).readContract({
      address: usdcA,
      abi: authorizationStateAbi,
      functionName: 'authorizationState',
      args: [user, nonce],
    }),
    status: await statusOf(requestId),
    permits: permits.length,
  };
}

const authorizationStateAbi = [
  {
    type: 'function',
    name: 'authorizationState',
    stateMutability: 'view',
    inputs: [
      { name: 'authorizer', type: 'address' },
      { name: 'nonce', type: 'bytes32' },
    ],
    outputs: [{ name: '', type: 'bool' }],
  },
] as const;

async function expectRefused(
  user: Address,
  requestId: Hex,
  nonce: Hex,
  attempt: () => Promise<{ status: number; body: any }>,
  expected: { status: number; errorCode: string; errorData?: string },
) {
  const before = await snapshot(user, requestId, nonce);
  const { status, body } = await attempt();
  expect(status, JSON.stringify(body)).toBe(expected.status);
  expect(body).toMatchObject({
    errorCode: expected.errorCode,
    ...(expected.errorData === undefined ? {} : { errorData: expected.errorData }),
  });
  expect(typeof body.message).toBe('string');
  expect(await snapshot(user, requestId, nonce)).toEqual(before);
}

describe('usePermit quotes', () => {
  it('answer one EIP-3009 signature step to the approval proxy, with the gateway-paid origin gas in the fee', async () => {
    const user = await freshUser();
    const { quote, requestId, item } = await permitQuote(user.address);
    expect(quote.steps).toHaveLength(1);
    expect(quote.steps[0]).toMatchObject({ id: 'authorize1', kind: 'signature', requestId });
    expect(item.data.sign).toMatchObject({
      signatureKind: 'eip712',
      primaryType: 'ReceiveWithAuthorization',
      domain: { name: 'USD Coin', version: '1', chainId: chainA.chainId, verifyingContract: usdcA },
      value: {
        from: user.address,
        to: chainA.contracts.approvalProxy,
        value: quote.details.currencyIn.amount,
        validAfter: '0',
      },
    });
    expect(item.data.sign.value.nonce).toMatch(/^0x[0-9a-f]{64}$/);
    // The authorization's nonce is the request id: no other request's message can carry it.
    expect(item.data.sign.value.nonce).toBe(requestId.toLowerCase());
    expect(item.data.post).toEqual({
      endpoint: '/execute/permits',
      method: 'POST',
      body: { kind: 'eip3009', requestId, api: 'bridge' },
    });
    expect(item.check.endpoint).toBe(`/intents/status/v3?requestId=${requestId}`);

    // The same route without usePermit: the user pays origin gas to the network, so the execution fee is lower.
    const { body: plain } = await call(gateway.url, 'getQuote', {
      body: { ...(await permitQuoteBody(user.address)), usePermit: false },
    });
    expect(quote.fees.gas.amount).toBe('0');
    expect(BigInt(plain.fees.gas.amount)).toBeGreaterThan(0n);
    expect(BigInt(quote.fees.relayerGas.amount)).toBeGreaterThan(BigInt(plain.fees.relayerGas.amount));
  });

  it('are refused for currencies without a working permit (native, and MNR configured as if it had one)', async () => {
    const user = await freshUser('1');
    for (const currency of [zeroAddress, tokenOf(chainA, 'MNR')]) {
      const { status, body } = await call(gateway.url, 'getQuote', {
        body: { ...(await permitQuoteBody(user.address)), originCurrency: currency, amount: '1000000000000000000' },
      });
      expect(status, JSON.stringify(body)).toBe(400);
      expect(body).toMatchObject({ errorCode: 'INVALID_INPUT', errorData: 'usePermit' });
    }
  });

  it('refuse a permit valid for less than the minimum (permitExpiry 1, a shorter ttl) on REST and GraphQL alike, storing nothing', async () => {
    const user = await freshUser('1');
    const body = await permitQuoteBody(user.address);
    const stored = async () =>
      (
        await gateway.server.core.db
          .selectFrom('requests')
          .select('id')
          .where('user_address', '=', user.address.toLowerCase())
          .execute()
      ).length;
    // The same refusals whatever the transport: the rule is the core's.
    const QUOTE = 'query Quote($input: QuoteInput!) { quote(input: $input) { steps { requestId } } }';
    for (const [field, extra] of [
      ['permitExpiry', { permitExpiry: 1 }],
      ['permitExpiry', { permitExpiry: 59 }],
      ['ttl', { ttl: 30 }],
    ] as const) {
      const rest = await call(gateway.url, 'getQuote', { body: { ...body, ...extra } });
      expect(rest.status, JSON.stringify(rest.body)).toBe(400);
      expect(rest.body).toMatchObject({ errorCode: 'INVALID_INPUT', errorData: field });
      expect(rest.body.message).toContain('60');

      const graphql = await graphqlPost(gateway.url, QUOTE, { input: { ...body, ...extra } });
      expect(graphql.body.data?.quote ?? null).toBeNull();
      expect(graphql.body.errors?.[0]?.extensions).toMatchObject({
        code: 'INVALID_INPUT',
        status: 400,
        errorData: field,
      });
    }
    expect(await stored()).toBe(0);
    // At the minimum the permit is quoted.
    const { status } = await call(gateway.url, 'getQuote', { body: { ...body, permitExpiry: 60 } });
    expect(status).toBe(200);
    expect(await stored()).toBe(1);
  });

  it('/chains says supportsPermit only for tokens that support one on chain', async () => {
    const { body } = await call(gateway.url, 'getChains');
    const chain = body.chains.find((c: { id: number }) => c.id === chainA.chainId);
    const flags = Object.fromEntries(
      chain.erc20Currencies.map((c: { symbol: string; supportsPermit: boolean }) => [c.symbol, c.supportsPermit]),
    );
    expect(flags).toMatchObject({ USDC: true, USDT: true, WETH: false, MNR: false, PUSD: true });
  });
});

async function permitQuoteBody(user: Address) {
  return {
    user,
    recipient: '0x00000000000000000000000000000000005d1e02',
    originChainId: chainA.chainId,
    destinationChainId: chainB.chainId,
    originCurrency: usdcA,
    destinationCurrency: tokenOf(chainB, 'USDC'),
    amount: parseUnits('10', 6).toString(),
    tradeType: 'EXACT_INPUT',
    usePermit: true,
  };
}

describe('POST /execute/permits', () => {
  it('deposits once through the approval proxy (solver pays), waiting → depositing → pending → success; a repeat sends nothing', async () => {
    const user = await freshUser();
    const { quote, requestId, item } = await permitQuote(user.address);
    const signature = await sign(user, item);
    const before = await usdcBalance(user.address);

    const first = await post(item, signature);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(typeof first.body.message).toBe('string');
    const again = await post(item, signature);
    expect(again.status, JSON.stringify(again.body)).toBe(200);

    await waitForStatus(gateway, requestId, ['success']);
    const again2 = await post(item, signature);
    expect(again2.status).toBe(200);

    const events = await gateway.server.core.db
      .selectFrom('request_events')
      .select('status')
      .where('request_id', '=', requestId.toLowerCase())
      .orderBy('id')
      .execute();
    expect(events.map((e) => e.status)).toEqual(['depositing', 'pending', 'submitted', 'success']);

    const deposits = await gateway.server.core.db
      .selectFrom('outgoing_txs')
      .selectAll()
      .where('request_id', '=', requestId.toLowerCase())
      .where('kind', '=', 'deposit')
      .execute();
    expect(deposits).toHaveLength(1);
    expect(before - (await usdcBalance(user.address))).toBe(BigInt(quote.details.currencyIn.amount));
    expect(await publicClientOf(chainA).getBalance({ address: user.address })).toBe(0n);

    const { body: status } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    const receipt = await publicClientOf(chainA).getTransactionReceipt({ hash: status.inTxHashes[0] });
    expect(receipt.from.toLowerCase()).toBe(gateway.devnet.descriptor.solver.address.toLowerCase());
    expect(receipt.to?.toLowerCase()).toBe(chainA.contracts.approvalProxy.toLowerCase());
    // The quote priced this much origin gas: the real deposit must not cost more.
    expect(receipt.gasUsed).toBeLessThanOrEqual(PERMIT_DEPOSIT_GAS.eip3009);
  });

  it('refuses a signature by another key (PERMIT_FAILED, nothing sent)', async () => {
    const user = await freshUser();
    const { requestId, item } = await permitQuote(user.address);
    const other = privateKeyToAccount(generatePrivateKey());
    const signature = await sign(other, item);
    await expectRefused(user.address, requestId, item.data.sign.value.nonce as Hex, () => post(item, signature), {
      status: 400,
      errorCode: 'PERMIT_FAILED',
      errorData: 'INVALID_SIGNATURE',
    });
  });

  it('refuses a signed message with another amount or another payee (PERMIT_FAILED, nothing sent)', async () => {
    const user = await freshUser();
    const { requestId, item } = await permitQuote(user.address);
    const less = (BigInt(item.data.sign.value.value!) - 1n).toString();
    for (const change of <Array<Record<string, string>>>[
      { value: less },
      { to: '0x00000000000000000000000000000000005d1e03' },
      { nonce: `0x${'11'.repeat(32)}` },
    ]) {
      const signature = await sign(user, item, change);
      await expectRefused(user.address, requestId, item.data.sign.value.nonce as Hex, () => post(item, signature), {
        status: 400,
        errorCode: 'PERMIT_FAILED',
        errorData: 'INVALID_SIGNATURE',
      });
    }
  });

  it('refuses an expired permit (PERMIT_FAILED EXPIRED, nothing sent)', async () => {
    const user = await freshUser();
    const { requestId, item } = await permitQuote(user.address, { permitExpiry: 60 });
    const signature = await sign(user, item);
    const core = gateway.server.core;
    const realNow = core.now;
    // The gateway's clock two minutes on: past the permit's validBefore (the request itself is still open).
    core.now = () => realNow() + 120_000;
    try {
      await expectRefused(user.address, requestId, item.data.sign.value.nonce as Hex, () => post(item, signature), {
        status: 400,
        errorCode: 'PERMIT_FAILED',
        errorData: 'EXPIRED',
      });
    } finally {
      core.now = realNow;
    }
  });

  it('refuses a permit posted with less than the minimum validity left, before the solver spends any gas (PERMIT_FAILED EXPIRED)', async () => {
    const user = await freshUser();
    const { requestId, item } = await permitQuote(user.address);
    const signature = await sign(user, item);
    const core = gateway.server.core;
    const realNow = core.now;
    // The gateway's clock 570 s on: 30 s of the permit's 600 are left (the request is open), too few to be sure
    // the deposit is mined before validBefore, so the solver's deposit would revert at its own cost.
    core.now = () => realNow() + 570_000;
    try {
      await gateway.server.solver!.settler.settleNow();
      const solver = gateway.devnet.descriptor.solver.address;
      const solverState = async () => ({
        nonce: await publicClientOf(chainA).getTransactionCount({ address: solver, blockTag: 'pending' }),
        balance: await publicClientOf(chainA).getBalance({ address: solver }),
      });
      const before = await solverState();
      await expectRefused(user.address, requestId, item.data.sign.value.nonce as Hex, () => post(item, signature), {
        status: 400,
        errorCode: 'PERMIT_FAILED',
        errorData: 'EXPIRED',
      });
      expect(await solverState()).toEqual(before);
    } finally {
      core.now = realNow;
    }
  });

  it('refuses a nonce already used on chain (the user cancelled the authorization) (PERMIT_FAILED NONCE_USED)', async () => {
    const user = await freshUser();
    const { requestId, item } = await permitQuote(user.address);
    const signature = await sign(user, item);
    const nonce = item.data.sign.value.nonce as Hex;
    const cancel = await user.signTypedData({
      domain: item.data.sign.domain,
      types: {
        CancelAuthorization: [
          { name: 'authorizer', type: 'address' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'CancelAuthorization',
      message: { authorizer: user.address, nonce },
    });
    const { r, s, v } = parseSig(cancel);
    // Anyone may submit a cancellation; the user has no ETH, so a funded account does.
    const hash = await walletOf(funder().privateKey).writeContract({
      address: usdcA,
      abi: cancelAbi,
      functionName: 'cancelAuthorization',
      args: [user.address, nonce, v, r, s],
    });
    await publicClientOf(chainA).waitForTransactionReceipt({ hash });
    await expectRefused(user.address, requestId, item.data.sign.value.nonce as Hex, () => post(item, signature), {
      status: 400,
      errorCode: 'PERMIT_FAILED',
      errorData: 'NONCE_USED',
    });
  });

  it('refuses a deposit the chain would reject (the user no longer holds the amount) (PERMIT_FAILED)', async () => {
    const user = await freshUser('10');
    const { requestId, item } = await permitQuote(user.address);
    const signature = await sign(user, item);
    // The user spends 1 USDC elsewhere through a signed transfer authorization submitted by someone else.
    const away = await user.signTypedData({
      domain: item.data.sign.domain,
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
      message: {
        from: user.address,
        to: funder().address,
        value: 1_000_000n,
        validAfter: 0n,
        validBefore: 2n ** 40n,
        nonce: `0x${'22'.repeat(32)}`,
      },
    });
    const { r, s, v } = parseSig(away);
    const hash = await walletOf(funder().privateKey).writeContract({
      address: usdcA,
      abi: cancelAbi,
      functionName: 'transferWithAuthorization',
      args: [user.address, funder().address, 1_000_000n, 0n, 2n ** 40n, `0x${'22'.repeat(32)}`, v, r, s],
    });
    await publicClientOf(chainA).waitForTransactionReceipt({ hash });
    await expectRefused(user.address, requestId, item.data.sign.value.nonce as Hex, () => post(item, signature), {
      status: 400,
      errorCode: 'PERMIT_FAILED',
      errorData: 'DEPOSIT_WOULD_FAIL',
    });
  });

  it('bars a user whose permit deposit reverted on chain (funds moved away before it was mined) from permits for the cooldown', async () => {
    const user = await freshUser('10');
    const first = await permitQuote(user.address);
    // Quoted before the revert, posted after it: the bar holds for permits quoted earlier too.
    const queued = await permitQuote(user.address);
    const solver = gateway.devnet.descriptor.solver.address;
    const client = publicClientOf(chainA);
    await gateway.server.solver!.settler.settleNow();
    const fromBlock = (await client.getBlockNumber()) + 1n;
    const solverEth = await client.getBalance({ address: solver });

    // The attack: the deposit is in the mempool (automine off) when the user's 1 USDC leaves through a signed
    // transfer with a far higher tip, mined first: the deposit passed its simulation and reverts on chain.
    const away = await user.signTypedData({
      domain: first.item.data.sign.domain,
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
      message: {
        from: user.address,
        to: funder().address,
        value: 1_000_000n,
        validAfter: 0n,
        validBefore: 2n ** 40n,
        nonce: `0x${'33'.repeat(32)}`,
      },
    });
    const { r, s, v } = parseSig(away);
    const testA = createTestClient({ mode: 'anvil', chain: devnetViemChain(chainA), transport: http(chainA.rpcUrl) });
    const minedNonce = await client.getTransactionCount({ address: solver });
    await testA.setAutomine(false);
    try {
      expect((await post(first.item, await sign(user, first.item))).status).toBe(200);
      for (
        let i = 0;
        (await client.getTransactionCount({ address: solver, blockTag: 'pending' })) === minedNonce;
        i++
      ) {
        if (i > 200) throw new Error('the permit deposit was never broadcast');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      await walletOf(funder().privateKey).writeContract({
        address: usdcA,
        abi: cancelAbi,
        functionName: 'transferWithAuthorization',
        args: [user.address, funder().address, 1_000_000n, 0n, 2n ** 40n, `0x${'33'.repeat(32)}`, v, r, s],
        // Estimated against the pending deposit it would fail; mined before it, it succeeds.
        gas: 200_000n,
        maxPriorityFeePerGas: parseGwei('500'),
        maxFeePerGas: parseGwei('1000'),
      });
      await testA.mine({ blocks: 1 });
    } finally {
      await testA.setAutomine(true);
    }
    const block = await client.getBlock({ blockNumber: fromBlock, includeTransactions: true });
    const deposit = block.transactions.find((tx) => tx.from.toLowerCase() === solver.toLowerCase());
    expect(deposit?.to?.toLowerCase()).toBe(chainA.contracts.approvalProxy.toLowerCase());
    const receipt = await client.getTransactionReceipt({ hash: deposit!.hash });
    expect(receipt.status).toBe('reverted');
    // The solver paid the reverted deposit's gas; the user paid nothing and keeps the rest.
    expect(await client.getBalance({ address: solver })).toBeLessThan(solverEth);
    expect(await usdcBalance(user.address)).toBe(parseUnits('9', 6));
    const failed = async () =>
      (
        await gateway.server.core.db
          .selectFrom('permits')
          .select('status')
          .where('request_id', '=', first.requestId.toLowerCase())
          .executeTakeFirst()
      )?.status;
    for (let i = 0; (await failed()) !== 'failed'; i++) {
      if (i > 200) throw new Error('the reverted permit deposit was not recorded');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(await statusOf(first.requestId)).toBe('waiting');

    // The user holds the amount again: only the bar refuses what follows.
    const refill = await walletOf(funder().privateKey).writeContract({
      address: usdcA,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [user.address, 1_000_000n],
    });
    await client.waitForTransactionReceipt({ hash: refill });
    const quoted = await call(gateway.url, 'getQuote', { body: await permitQuoteBody(user.address) });
    expect(quoted.status, JSON.stringify(quoted.body)).toBe(400);
    expect(quoted.body).toMatchObject({ errorCode: 'INVALID_INPUT', errorData: 'usePermit' });
    await gateway.server.solver!.settler.settleNow();
    const nonceBefore = await client.getTransactionCount({ address: solver, blockTag: 'pending' });
    const signature = await sign(user, queued.item);
    await expectRefused(
      user.address,
      queued.requestId,
      queued.item.data.sign.value.nonce as Hex,
      () => post(queued.item, signature),
      { status: 400, errorCode: 'PERMIT_FAILED', errorData: 'RECENT_REVERT' },
    );
    expect(await client.getTransactionCount({ address: solver, blockTag: 'pending' })).toBe(nonceBefore);
    // A deposit transaction (without usePermit) is still quoted: the user pays its gas.
    const plain = await call(gateway.url, 'getQuote', {
      body: { ...(await permitQuoteBody(user.address)), usePermit: false },
    });
    expect(plain.status, JSON.stringify(plain.body)).toBe(200);
  });

  it('refuses a second, different signature for a request that is no longer waiting (409, nothing sent)', async () => {
    const user = await freshUser();
    const { requestId, item } = await permitQuote(user.address);
    expect((await post(item, await sign(user, item))).status).toBe(200);
    await waitForStatus(gateway, requestId, ['success']);
    const other = await sign(privateKeyToAccount(generatePrivateKey()), item);
    await expectRefused(user.address, requestId, item.data.sign.value.nonce as Hex, () => post(item, other), {
      status: 409,
      errorCode: 'CONFLICT',
      errorData: 'REQUEST_NOT_WAITING',
    });
  });

  it('refuses an unknown request (404), a request quoted without usePermit and an unknown kind (400)', async () => {
    const user = await freshUser();
    const { item } = await permitQuote(user.address);
    const signature = await sign(user, item);
    const unknown = await call(gateway.url, 'submitPermit', {
      query: { signature },
      body: { kind: 'eip3009', requestId: `0x${'ab'.repeat(32)}` },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ errorCode: 'NOT_FOUND' });

    const { body: plain } = await call(gateway.url, 'getQuote', {
      body: { ...(await permitQuoteBody(user.address)), usePermit: false },
    });
    const notPermit = await call(gateway.url, 'submitPermit', {
      query: { signature },
      body: { kind: 'eip3009', requestId: plain.steps[0].requestId },
    });
    expect(notPermit.status).toBe(400);
    expect(notPermit.body).toMatchObject({ errorCode: 'INVALID_INPUT', errorData: 'kind' });

    const badKind = await call(gateway.url, 'submitPermit', {
      query: { signature },
      body: { kind: 'permit9', requestId: item.data.post.body.requestId },
    });
    expect(badKind.status).toBe(400);
    expect(badKind.body).toMatchObject({ errorCode: 'INVALID_INPUT', errorData: 'kind' });
  });
});

describe('GraphQL submitPermit', () => {
  it('accepts the signature like the REST operation and the request succeeds', async () => {
    const user = await freshUser();
    const { requestId, item } = await permitQuote(user.address);
    const signature = await sign(user, item);
    const response = await fetch(`${gateway.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: `mutation($input: SubmitPermitInput!) { submitPermit(input: $input) { message steps { id } } }`,
        variables: { input: { kind: 'EIP3009', requestId, signature } },
      }),
    });
    const body = (await response.json()) as { data?: { submitPermit: { message: string } }; errors?: unknown };
    expect(body.errors, JSON.stringify(body.errors)).toBeUndefined();
    expect(body.data!.submitPermit.message).toMatch(/accepted/i);
    await waitForStatus(gateway, requestId, ['success']);
  });
});

describe('EIP-2612 permits (PUSD: permit without EIP-3009)', () => {
  const pusdA = () => tokenOf(chainA, 'PUSD');
  const erc2612Abi = [
    ...erc20Abi,
    {
      type: 'function',
      name: 'nonces',
      stateMutability: 'view',
      inputs: [{ name: 'owner', type: 'address' }],
      outputs: [{ name: '', type: 'uint256' }],
    },
  ] as const;
  const read = (functionName: 'balanceOf' | 'nonces', owner: Address) =>
    publicClientOf(chainA).readContract({ address: pusdA(), abi: erc2612Abi, functionName, args: [owner] });

  /** A fresh key holding 30 PUSD on chain A and no ETH. */
  async function freshPusdUser(): Promise<PrivateKeyAccount> {
    const user = privateKeyToAccount(generatePrivateKey());
    const hash = await walletOf(funder().privateKey).writeContract({
      address: pusdA(),
      abi: erc20Abi,
      functionName: 'transfer',
      args: [user.address, parseUnits('30', 6)],
    });
    await publicClientOf(chainA).waitForTransactionReceipt({ hash });
    return user;
  }

  async function pusdQuote(user: Address, extra: Record<string, unknown> = {}) {
    return permitQuote(user, { originCurrency: pusdA(), destinationCurrency: tokenOf(chainB, 'PUSD'), ...extra });
  }

  /** What a refused 2612 permit must leave as it was, on chain and in the gateway. */
  async function state(user: Address, requestId: Hex) {
    const db = gateway.server.core.db;
    const [permits, outgoing] = await Promise.all([
      db.selectFrom('permits').select('request_id').where('request_id', '=', requestId.toLowerCase()).execute(),
      db.selectFrom('outgoing_txs').select('id').where('request_id', '=', requestId.toLowerCase()).execute(),
    ]);
    return {
      permits: permits.length,
      outgoing: outgoing.length,
      solverNonce: await publicClientOf(chainA).getTransactionCount({
        address: gateway.devnet.descriptor.solver.address,
        blockTag: 'pending',
      }),
      pusd: await read('balanceOf', user),
      permitNonce: await read('nonces', user),
      allowance: await publicClientOf(chainA).readContract({
        address: pusdA(),
        abi: erc20Abi,
        functionName: 'allowance',
        args: [user, chainA.contracts.approvalProxy],
      }),
      status: await statusOf(requestId),
    };
  }

  async function expect2612Refused(
    user: Address,
    requestId: Hex,
    attempt: () => Promise<{ status: number; body: any }>,
    errorData: string,
  ) {
    // Deposits of earlier tests are due to the solver: settle them first, so that their release (a solver
    // transaction on chain A, otherwise sent by the 5 s settler at any moment) cannot move its nonce between reads.
    await gateway.server.solver!.settler.settleNow();
    const before = await state(user, requestId);
    const { status, body } = await attempt();
    expect(status, JSON.stringify(body)).toBe(400);
    expect(body).toMatchObject({ errorCode: 'PERMIT_FAILED', errorData });
    expect(typeof body.message).toBe('string');
    expect(await state(user, requestId)).toEqual(before);
    expect(before.status).toBe('waiting');
  }

  it('quotes a Permit to the approval proxy (on-chain nonce, deadline) and deposits it once; the deposit costs at most the priced gas', async () => {
    const user = await freshPusdUser();
    const { quote, requestId, item } = await pusdQuote(user.address);
    expect(quote.steps).toHaveLength(1);
    expect(item.data.sign).toMatchObject({
      signatureKind: 'eip712',
      primaryType: 'Permit',
      domain: { name: 'Permit USD', version: '2', chainId: chainA.chainId, verifyingContract: pusdA() },
      value: {
        owner: user.address,
        spender: chainA.contracts.approvalProxy,
        value: quote.details.currencyIn.amount,
        nonce: '0',
      },
    });
    expect(item.data.post.body).toEqual({ kind: 'eip2612', requestId, api: 'bridge' });

    const signature = await sign(user, item);
    expect((await post(item, signature)).status).toBe(200);
    expect((await post(item, signature)).status).toBe(200);
    await waitForStatus(gateway, requestId, ['success']);

    const deposits = await gateway.server.core.db
      .selectFrom('outgoing_txs')
      .selectAll()
      .where('request_id', '=', requestId.toLowerCase())
      .where('kind', '=', 'deposit')
      .execute();
    expect(deposits).toHaveLength(1);
    expect(await read('nonces', user.address)).toBe(1n);
    expect(await read('balanceOf', user.address)).toBe(parseUnits('20', 6));
    expect(await publicClientOf(chainA).getBalance({ address: user.address })).toBe(0n);
    const { body: status } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
    const receipt = await publicClientOf(chainA).getTransactionReceipt({ hash: status.inTxHashes[0] });
    expect(receipt.from.toLowerCase()).toBe(gateway.devnet.descriptor.solver.address.toLowerCase());
    expect(receipt.gasUsed).toBeLessThanOrEqual(PERMIT_DEPOSIT_GAS.eip2612);
  });

  it('refuses an expired deadline (PERMIT_FAILED EXPIRED, nothing sent)', async () => {
    const user = await freshPusdUser();
    const { requestId, item } = await pusdQuote(user.address, { permitExpiry: 60 });
    const signature = await sign(user, item);
    const core = gateway.server.core;
    const realNow = core.now;
    core.now = () => realNow() + 120_000;
    try {
      await expect2612Refused(user.address, requestId, () => post(item, signature), 'EXPIRED');
    } finally {
      core.now = realNow;
    }
  });

  it('refuses a permit signed by another key (PERMIT_FAILED INVALID_SIGNATURE, nothing sent)', async () => {
    const user = await freshPusdUser();
    const { requestId, item } = await pusdQuote(user.address);
    const signature = await sign(privateKeyToAccount(generatePrivateKey()), item);
    await expect2612Refused(user.address, requestId, () => post(item, signature), 'INVALID_SIGNATURE');
  });

  it('refuses a permit for another amount, spender or deadline than the order (PERMIT_FAILED, nothing sent)', async () => {
    const user = await freshPusdUser();
    const { requestId, item } = await pusdQuote(user.address);
    const value = BigInt(item.data.sign.value.value!);
    for (const change of <Array<Record<string, string>>>[
      { value: (value - 1n).toString() },
      { value: (value + 1n).toString() },
      { spender: funder().address },
      { deadline: (BigInt(item.data.sign.value.deadline!) + 1n).toString() },
    ]) {
      const signature = await sign(user, item, change);
      await expect2612Refused(user.address, requestId, () => post(item, signature), 'INVALID_SIGNATURE');
    }
    // The right signature still works afterwards: the refusals used up nothing.
    expect((await post(item, await sign(user, item))).status).toBe(200);
    await waitForStatus(gateway, requestId, ['success']);
  });

  it('accepts a permit someone submitted to the token first (its nonce used, the allowance set): deposited once from that allowance', async () => {
    const user = await freshPusdUser();
    const { quote, requestId, item } = await pusdQuote(user.address);
    const signature = await sign(user, item);
    const { r, s, v } = parseSig(signature);
    const value = BigInt(item.data.sign.value.value!);
    // A third party front-runs the gateway with the user's permit, straight to the token.
    const hash = await walletOf(funder().privateKey).writeContract({
      address: pusdA(),
      abi: permitTokenAbi,
      functionName: 'permit',
      args: [user.address, chainA.contracts.approvalProxy, value, BigInt(item.data.sign.value.deadline!), v, r, s],
    });
    await publicClientOf(chainA).waitForTransactionReceipt({ hash });
    expect(await read('nonces', user.address)).toBe(1n);

    const accepted = await post(item, signature);
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    await waitForStatus(gateway, requestId, ['success']);
    expect(await read('balanceOf', user.address)).toBe(parseUnits('30', 6) - BigInt(quote.details.currencyIn.amount));
    expect(await read('nonces', user.address)).toBe(1n);
  });

  it('gives two quotes of one user, amount and second different messages: A’s signature is refused for B (INVALID_SIGNATURE, nothing sent)', async () => {
    const user = await freshPusdUser();
    const core = gateway.server.core;
    const realNow = core.now;
    // Both quotes in the same second: the token's nonce is the same, so only the gateway can tell them apart.
    const second = realNow();
    core.now = () => second;
    let a: Awaited<ReturnType<typeof pusdQuote>>;
    let b: Awaited<ReturnType<typeof pusdQuote>>;
    try {
      a = await pusdQuote(user.address);
      // B pays someone else: what a signature made for A must never pay.
      b = await pusdQuote(user.address, { recipient: '0x00000000000000000000000000000000005d1e66' });
    } finally {
      core.now = realNow;
    }
    expect(b.item.data.sign.value.nonce).toBe(a.item.data.sign.value.nonce);
    expect(b.item.data.sign.value.value).toBe(a.item.data.sign.value.value);
    expect(b.item.data.sign.value).not.toEqual(a.item.data.sign.value);

    const signatureForA = await sign(user, a.item);
    await expect2612Refused(user.address, b.requestId, () => post(b.item, signatureForA), 'INVALID_SIGNATURE');
    // A's own deposit goes through with it.
    expect((await post(a.item, signatureForA)).status).toBe(200);
    await waitForStatus(gateway, a.requestId, ['success']);
    expect(await statusOf(b.requestId)).toBe('waiting');
  });

  it('refuses a permit whose nonce was used on chain since the quote (PERMIT_FAILED NONCE_USED, nothing sent)', async () => {
    const user = await freshPusdUser();
    const first = await pusdQuote(user.address);
    const second = await pusdQuote(user.address);
    // Both quotes were given the user's current nonce; the first permit spends it.
    expect(second.item.data.sign.value.nonce).toBe(first.item.data.sign.value.nonce);
    expect((await post(first.item, await sign(user, first.item))).status).toBe(200);
    await waitForStatus(gateway, first.requestId, ['success']);
    const signature = await sign(user, second.item);
    await expect2612Refused(user.address, second.requestId, () => post(second.item, signature), 'NONCE_USED');
  });
});

const cancelAbi = [
  {
    type: 'function',
    name: 'cancelAuthorization',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'authorizer', type: 'address' },
      { name: 'nonce', type: 'bytes32' },
      { name: 'v', type: 'uint8' },
      { name: 'r', type: 'bytes32' },
      { name: 's', type: 'bytes32' },
    ],
    outputs: [],
  },
  {
    type: 'function',
    name: 'transferWithAuthorization',
    stateMutability: 'nonpayable',
    inputs: [
      { name: 'from', type: 'address' },
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'validAfter', type: 'uint256' },
      { name: 'validBefore', type: 'uint256' },
      { name: 'nonce', type: 'bytes32' },
      { name: 'v', type: 'uint8' },
      { name: 'r', type: 'bytes32' },
      { name: 's', type: 'bytes32' },
    ],
    outputs: [],
  },
] as const;

function parseSig(signature: Hex): { r: Hex; s: Hex; v: number } {
  return {
    r: `0x${signature.slice(2, 66)}`,
    s: `0x${signature.slice(66, 130)}`,
    v: parseInt(signature.slice(130, 132), 16),
  };
}
