import { createServer as createHttpServer } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  createPublicClient,
  createTestClient,
  encodeFunctionData,
  erc20Abi,
  http,
  maxUint256,
  toHex,
  zeroAddress,
  type Address,
  type Hex,
} from 'viem';
import {
  devnetGasPriceOracleBytecode,
  multicall3Abi,
  onlyOwnerMulticallerAbi,
  priceFeedAbi,
  priceFeedBytecode,
} from '../../generated/contracts/index.js';
import { createChainClients, type CreateChainClientsOptions } from '../../src/chain/clients.js';
import { createHeadFeed, type Head } from '../../src/chain/heads.js';
import { GAS_PRICE_ORACLE } from '../../src/chain/devnetContracts.js';
import { createMarketData } from '../../src/chain/market.js';
import { currencyConfig } from '../../src/core/chains/currency.js';
import type { ChainConfig, CurrencyConfig, PriceSource } from '../../src/core/chains/types.js';
import { GatewayError, type ErrorCode } from '../../src/core/errors.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';
import { useDevnet } from '../helpers/anvil.js';

const devnet = useDevnet({ chains: [31337, 31338] });
const A = 31337;
const B = 31338;

let chains: ChainConfig[];
beforeAll(() => {
  chains = devnetChainConfigs(devnet.descriptor);
});

const chainConfig = (id: number): ChainConfig => chains.find((chain) => chain.id === id)!;
const currency = (id: number, currencyId: string): CurrencyConfig =>
  [chainConfig(id).nativeCurrency, ...chainConfig(id).currencies].find((c) => c.id === currencyId)!;
const token = (id: string): Address => currency(A, id).address;
const solver = () => devnet.descriptor.solver;
const user = (i: number) => devnet.descriptor.accounts[i]!;

/** A market over the devnet with its own clients, counting the HTTP requests they send. */
function createMarket(
  options: { blockTime?: number; chains?: ChainConfig[]; clients?: CreateChainClientsOptions } = {},
) {
  let requests = 0;
  const configured = (options.chains ?? chains).map((chain) => ({
    ...chain,
    blockTime: options.blockTime ?? chain.blockTime,
  }));
  const clients = createChainClients(configured, { ...options.clients, onFetchRequest: () => void requests++ });
  const market = createMarketData({ chains: configured, solverAddress: solver().address, clients });
  return { market, requests: () => requests };
}

/** A test currency priced by `price`. */
const priced = (price: PriceSource | undefined, symbol = 'TST'): CurrencyConfig =>
  currencyConfig({ id: symbol.toLowerCase(), symbol, name: 'Test', address: zeroAddress, decimals: 18, price });

async function expectGatewayError(promise: Promise<unknown>, code: ErrorCode): Promise<GatewayError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected ${code}`).toBeInstanceOf(GatewayError);
  expect((error as GatewayError).code, (error as Error).message).toBe(code);
  return error as GatewayError;
}

/** Deploys a fresh 8-decimal feed on chain A (so a test can move it without touching the devnet's feeds). */
async function deployFeed(answer: bigint): Promise<Address> {
  const hash = await devnet.wallet(devnet.descriptor.deployer).deployContract({
    abi: priceFeedAbi,
    bytecode: priceFeedBytecode,
    args: [8, 'TST / USD', answer, devnet.descriptor.deployer.address],
  });
  return (await devnet.mined(hash)).contractAddress!;
}

async function setAnswer(feed: Address, answer: bigint): Promise<void> {
  await devnet.mined(
    devnet
      .wallet(devnet.descriptor.deployer)
      .writeContract({ address: feed, abi: priceFeedAbi, functionName: 'setAnswer', args: [answer] }),
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('usdPrice', () => {
  it('reads the devnet feeds and fixed prices exactly', async () => {
    const { market } = createMarket();
    const price = (id: string) => market.usdPrice(A, currency(A, id));
    expect(await price('eth')).toMatchObject({ answer: 3000_00000000n, decimals: 8 });
    expect(await price('usdc')).toMatchObject({ answer: 1_00000000n, decimals: 8 });
    expect(await price('mnr')).toMatchObject({ answer: 50000000n, decimals: 8 });
    expect(await price('weth')).toMatchObject({ answer: 3000_00000000n, decimals: 8 });
    expect((await price('eth')).updatedAt).toBeGreaterThan(0);

    expect(await market.usdPrice(A, priced({ kind: 'fixed', usd: '1.00' }))).toMatchObject({
      answer: 100n,
      decimals: 2,
    });
    expect(await market.usdPrice(A, priced({ kind: 'fixed', usd: '3000' }))).toMatchObject({
      answer: 3000n,
      decimals: 0,
    });
    expect(await market.usdPrice(A, priced({ kind: 'fixed', usd: '0.000123' }))).toMatchObject({
      answer: 123n,
      decimals: 6,
    });
    await expectGatewayError(market.usdPrice(A, priced({ kind: 'fixed', usd: '0.00' })), 'PRICE_FETCH_FAILED');
  });

  it('fails a currency without a price source and an unknown chain', async () => {
    const { market } = createMarket();
    await expectGatewayError(market.usdPrice(A, priced(undefined)), 'UNSUPPORTED_CURRENCY');
    const unknown = await expectGatewayError(market.usdPrice(1, currency(A, 'usdc')), 'UNSUPPORTED_CHAIN');
    expect(unknown.message).toContain('1');
  });

  it('shares one read among concurrent callers and sees a new answer after one block time', async () => {
    const feed = await deployFeed(1_00000000n);
    const { market, requests } = createMarket({ blockTime: 0.3 });
    const tst = priced({ kind: 'aggregatorV3', feed });

    const prices = await Promise.all(Array.from({ length: 20 }, () => market.usdPrice(A, tst)));
    expect(prices.map((p) => p.answer)).toEqual(Array(20).fill(1_00000000n));
    // decimals() and latestRoundData() of all 20 callers: one Multicall3 eth_call.
    expect(requests()).toBe(1);

    await setAnswer(feed, 99_000000n);
    expect((await market.usdPrice(A, tst)).answer).toBe(1_00000000n);
    expect(requests()).toBe(1);

    await sleep(350);
    expect(await market.usdPrice(A, tst)).toMatchObject({ answer: 99_000000n, decimals: 8 });
    // Only the round is read again: decimals are cached for good.
    expect(requests()).toBe(2);
  });

  it('fails an answer older than maxAgeSeconds by the chain clock', async () => {
    const feed = currency(B, 'mnr').price as Extract<PriceSource, { kind: 'aggregatorV3' }>;
    const strict = priced({ ...feed, maxAgeSeconds: 60 }, 'MNR');
    const lenient = priced(feed, 'MNR');
    expect((await createMarket().market.usdPrice(B, strict)).answer).toBe(50000000n);

    const chainB = devnet.descriptor.chains.find((chain) => chain.chainId === B)!;
    const testClient = createTestClient({ mode: 'anvil', transport: http(chainB.rpcUrl) });
    await testClient.increaseTime({ seconds: 120 });
    await testClient.mine({ blocks: 1 });

    const { market } = createMarket();
    const stale = await expectGatewayError(market.usdPrice(B, strict), 'PRICE_FETCH_FAILED');
    expect(stale.status).toBe(503);
    expect(stale.message).toMatch(/MNR on Devnet B \(chain 31338\).*stale/);
    // Without a limit the same answer is still good.
    expect((await market.usdPrice(B, lenient)).answer).toBe(50000000n);
  });

  it('fails a feed without code, a reverting feed and a non-positive answer', async () => {
    const { market } = createMarket();
    const noCode = await expectGatewayError(
      market.usdPrice(A, priced({ kind: 'aggregatorV3', feed: '0x000000000000000000000000000000000000dEaD' })),
      'PRICE_FETCH_FAILED',
    );
    expect(noCode.message).toMatch(/TST on Devnet A \(chain 31337\).*no data/);

    // A token is not a feed: latestRoundData() reverts.
    const reverting = await expectGatewayError(
      market.usdPrice(A, priced({ kind: 'aggregatorV3', feed: token('usdc') })),
      'PRICE_FETCH_FAILED',
    );
    expect(reverting.message).toContain('reverted with no reason');

    const zero = await expectGatewayError(
      market.usdPrice(A, priced({ kind: 'aggregatorV3', feed: await deployFeed(0n) })),
      'PRICE_FETCH_FAILED',
    );
    expect(zero.message).toContain('answered 0');
    await expectGatewayError(
      market.usdPrice(A, priced({ kind: 'aggregatorV3', feed: await deployFeed(-1n) })),
      'PRICE_FETCH_FAILED',
    );
  });
});

describe('balances and allowances', () => {
  it('reads native and ERC-20 balances and allowances like direct reads', async () => {
    const { market } = createMarket();
    const owner = user(0).address;
    expect(await market.balanceOf(A, owner, zeroAddress)).toBe(
      await devnet.publicClient.getBalance({ address: owner }),
    );
    for (const id of ['usdc', 'usdt', 'weth', 'mnr']) {
      expect(await market.balanceOf(A, owner, token(id))).toBe(await devnet.balanceOf(token(id), owner));
    }
    const fillContract = devnet.chain.contracts.onlyOwnerMulticaller;
    expect(await market.allowance(A, solver().address, token('usdc'), fillContract)).toBe(maxUint256);
    const spender = user(3).address;
    expect(await market.allowance(A, user(2).address, token('usdt'), spender)).toBe(0n);
    await devnet.approve(user(2), token('usdt'), spender, 123n);
    expect(await market.allowance(A, user(2).address, token('usdt'), spender)).toBe(123n);
  });

  it('batches concurrent reads into far fewer RPC requests', async () => {
    const { market, requests } = createMarket();
    const owners = [solver(), user(0), user(1), user(2)].map((account) => account.address);
    const tokens = [zeroAddress, ...['usdc', 'usdt', 'weth', 'mnr'].map(token)];
    const reads = owners.flatMap((owner) =>
      tokens.flatMap((t) => [
        { owner, token: t },
        { owner, token: t },
        { owner, token: t },
      ]),
    );

    const balances = await Promise.all(reads.map(({ owner, token: t }) => market.balanceOf(A, owner, t)));

    expect(reads.length).toBe(60);
    expect(requests()).toBeGreaterThan(0);
    expect(requests()).toBeLessThanOrEqual(2);
    const direct = await Promise.all(
      reads.map(({ owner, token: t }) =>
        t === zeroAddress ? devnet.publicClient.getBalance({ address: owner }) : devnet.balanceOf(t, owner),
      ),
    );
    expect(balances).toEqual(direct);
  });

  it("shares a quote's wallet reads (sameHead) within one pushed head, and reads again at the next", async () => {
    const { market, requests } = createMarket();
    const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
    const feed = createHeadFeed({ chainId: A, url: devnet.chain.wsUrl, log: silent, connectTimeoutMs: 1_000 });
    const heads: Head[] = [];
    feed.onHead((head) => heads.push(head));
    try {
      const owner = user(1).address;
      const usdc = token('usdc');
      const spender = '0x5ca1ab1e00000000000000000000000000000001' as Address;
      const walletReads = () =>
        Promise.all([
          market.balanceOf(A, owner, zeroAddress, { sameHead: true }),
          market.balanceOf(A, owner, usdc, { sameHead: true }),
          market.allowance(A, owner, usdc, spender, { sameHead: true }),
        ]);
      const directReads = async () => [
        await devnet.publicClient.getBalance({ address: owner }),
        await devnet.balanceOf(usdc, owner),
        await devnet.publicClient.readContract({
          address: usdc,
          abi: erc20Abi,
          functionName: 'allowance',
          args: [owner, spender],
        }),
      ];

      // No feed followed yet: every call reads now.
      await walletReads();
      const unfollowed = requests();
      await walletReads();
      expect(requests()).toBeGreaterThan(unfollowed);

      feed.start();
      market.followHeads(new Map([[A, feed]]));
      for (const deadline = Date.now() + 10_000; !feed.live();) {
        if (Date.now() > deadline) throw new Error('the head feed did not subscribe');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // The devnet mines on demand, so no head arrives between these reads: the second set costs no request.
      const first = await walletReads();
      const afterFirst = requests();
      expect(await walletReads()).toEqual(first);
      expect(requests()).toBe(afterFirst);
      expect(first).toEqual(await directReads());
      // Without sameHead (the solver's own checks) a read is always made now.
      await market.balanceOf(A, owner, zeroAddress);
      expect(requests()).toBe(afterFirst + 1);

      // A new block (the approval) is pushed: the next reads see it.
      const headsBefore = heads.length;
      await devnet.approve(user(1), usdc, spender, 777n);
      for (const deadline = Date.now() + 10_000; heads.length === headsBefore;) {
        if (Date.now() > deadline) throw new Error('no head was pushed');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const second = await walletReads();
      expect(second[2]).toBe(777n);
      expect(second).toEqual(await directReads());

      // The feed stops: reads are made now again.
      await feed.stop();
      const stopped = requests();
      await walletReads();
      await walletReads();
      expect(requests()).toBeGreaterThanOrEqual(stopped + 2);
    } finally {
      market.followHeads(undefined);
      await feed.stop();
    }
  });

  it('caches the solver balance until the chain is invalidated', async () => {
    // A long block time, so only invalidation can drop the cache during the test.
    const { market, requests } = createMarket({ blockTime: 60 });
    const usdc = token('usdc');
    const before = await devnet.balanceOf(usdc, solver().address);
    const first = await Promise.all(Array.from({ length: 10 }, () => market.solverBalance(A, usdc)));
    expect(first).toEqual(Array(10).fill(before));
    expect(requests()).toBe(1);

    await devnet.mined(
      devnet
        .wallet(solver())
        .writeContract({ address: usdc, abi: erc20Abi, functionName: 'transfer', args: [user(0).address, 1_000000n] }),
    );
    expect(await market.solverBalance(A, usdc)).toBe(before);
    market.invalidateSolverBalances(B);
    expect(await market.solverBalance(A, usdc)).toBe(before);
    expect(requests()).toBe(1);

    market.invalidateSolverBalances(A);
    expect(await market.solverBalance(A, usdc)).toBe(before - 1_000000n);
    expect(await market.solverBalance(A, zeroAddress)).toBe(
      await devnet.publicClient.getBalance({ address: solver().address }),
    );
  });
});

describe('gasPrice', () => {
  it('reads eth_gasPrice once per block time', async () => {
    const { market, requests } = createMarket({ blockTime: 60 });
    const prices = await Promise.all(Array.from({ length: 5 }, () => market.gasPrice(A)));
    expect(prices[0]).toBe(await devnet.publicClient.getGasPrice());
    expect(new Set(prices).size).toBe(1);
    expect(prices[0]).toBeGreaterThan(0n);
    expect(requests()).toBe(1);
    await expectGatewayError(market.gasPrice(1), 'UNSUPPORTED_CHAIN');
  });
});

describe('estimateGas', () => {
  const transfer = (to: Address, amount: bigint) =>
    encodeFunctionData({ abi: erc20Abi, functionName: 'transfer', args: [to, amount] });
  const transferFrom = (from: Address, to: Address, amount: bigint) =>
    encodeFunctionData({ abi: erc20Abi, functionName: 'transferFrom', args: [from, to, amount] });
  const fill = (calls: Array<{ to: Address; data: Hex }>) =>
    encodeFunctionData({
      abi: onlyOwnerMulticallerAbi,
      functionName: 'fill',
      args: [`0x${'ab'.repeat(32)}`, calls.map((call) => ({ ...call, value: 0n, allowFailure: false }))],
    });

  it("reads an OP-stack chain's L1 data fee from its GasPriceOracle predeploy, and fails one without it", async () => {
    const opStack = chains.map((chain) => (chain.id === B ? { ...chain, feeModel: 'op-stack' as const } : chain));
    const { market } = createMarket({ chains: opStack });
    const tx: Hex = `0x${'ab'.repeat(100)}`;
    // Chain B has no oracle yet: the read fails, naming the predeploy and the fee model.
    const missing = await expectGatewayError(market.l1DataFee(B, tx), 'RPC_HTTP_ERROR');
    expect(missing.message).toContain(GAS_PRICE_ORACLE);
    expect(missing.message).toContain('op-stack');

    // The devnet's oracle installed as the OP-stack devnet chain has it, with an L1 base fee of 2 gwei.
    const transport = http(chainConfig(B).httpRpcUrl);
    const { data: runtime } = await createPublicClient({ transport }).call({ data: devnetGasPriceOracleBytecode });
    const anvil = createTestClient({ mode: 'anvil', transport });
    await anvil.setCode({ address: GAS_PRICE_ORACLE, bytecode: runtime! });
    await anvil.setStorageAt({ address: GAS_PRICE_ORACLE, index: 0, value: toHex(2_000_000_000n, { size: 32 }) });
    expect(await market.l1DataFee(B, tx)).toBe((100n + 68n) * 16n * 2_000_000_000n);
  });

  it('estimates a transaction like the node does', async () => {
    const { market } = createMarket();
    const tx = { from: user(0).address, to: token('usdc'), data: transfer(user(1).address, 5_000000n), value: 0n };
    const gas = await market.estimateGas(A, tx);
    expect(gas).toBeGreaterThan(21_000n);
    expect(gas).toBe(
      await devnet.publicClient.estimateGas({ account: tx.from, to: tx.to, data: tx.data, value: tx.value }),
    );
  });

  it('decodes reverts against our contracts, Error(string), and falls back to the raw data', async () => {
    const { market } = createMarket();
    const fillContract = devnet.chain.contracts.onlyOwnerMulticaller;
    const failed = (from: Address, to: Address, data: Hex) =>
      expectGatewayError(market.estimateGas(A, { from, to, data, value: 0n }), 'DESTINATION_TX_FAILED');

    const notOwner = await failed(user(0).address, fillContract, fill([]));
    expect(notOwner.data).toBe(`Unauthorized(${user(0).address})`);
    expect(notOwner.status).toBe(400);
    expect(notOwner.message).toContain(`Unauthorized(${user(0).address})`);

    // The token's error bubbles up unchanged through the fill contract.
    const pull = { to: token('usdc'), data: transferFrom(user(0).address, solver().address, 7n) };
    const noAllowance = await failed(solver().address, fillContract, fill([pull]));
    expect(noAllowance.data).toBe(`InsufficientAllowance(${fillContract}, 0, 7)`);

    const aggregate = encodeFunctionData({
      abi: multicall3Abi,
      functionName: 'aggregate',
      args: [[{ target: pull.to, callData: pull.data }]],
    });
    const reason = await failed(user(0).address, devnet.chain.contracts.multicall3, aggregate);
    expect(reason.data).toBe('Multicall3: call failed');

    // Runtime code that reverts with an unknown 4-byte error 0xdeadbeef.
    const unknown: Address = '0x00000000000000000000000000000000DeaDBeef';
    await devnet.testClient.setCode({ address: unknown, bytecode: '0x63deadbeef60e01b5f5260045ffd' });
    const raw = await failed(user(0).address, unknown, '0x');
    expect(raw.data).toBe('0xdeadbeef');
  });
});

describe('RPC failures', () => {
  /** A port nothing listens on: the RPC of a chain whose node is down. */
  async function closedPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise((resolve) => server.close(resolve));
    return port;
  }

  it('maps a dead RPC to RPC_HTTP_ERROR for every read', async () => {
    const port = await closedPort();
    const dead = { ...chainConfig(A), httpRpcUrl: `http://127.0.0.1:${port}` };
    const { market } = createMarket({ chains: [dead] });
    const reads: Array<() => Promise<unknown>> = [
      () => market.usdPrice(A, currency(A, 'usdc')),
      () => market.gasPrice(A),
      () => market.balanceOf(A, user(0).address, zeroAddress),
      () => market.solverBalance(A, token('usdc')),
      () => market.allowance(A, user(0).address, token('usdc'), user(1).address),
      () => market.estimateGas(A, { from: user(0).address, to: user(1).address, data: '0x', value: 1n }),
    ];
    for (const read of reads) {
      const error = await expectGatewayError(read(), 'RPC_HTTP_ERROR');
      expect(error.status).toBe(502);
      expect(error.retriable).toBe(true);
      expect(error.message).toContain('Devnet A (chain 31337)');
    }
  });

  it('maps an RPC answering HTTP 500 to RPC_HTTP_ERROR with the status, and a JSON-RPC error to its message', async () => {
    let answer = { status: 500, body: 'overloaded' };
    const failing = createHttpServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(answer.status, { 'content-type': 'text/plain' }).end(answer.body));
    });
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = failing.address() as { port: number };
      const { market } = createMarket({ chains: [{ ...chainConfig(A), httpRpcUrl: `http://127.0.0.1:${port}` }] });
      const error = await expectGatewayError(market.gasPrice(A), 'RPC_HTTP_ERROR');
      expect(error.message).toContain('HTTP 500');
      answer = {
        status: 200,
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32005, message: 'limit exceeded' } }),
      };
      const rpcError = await expectGatewayError(market.balanceOf(A, user(0).address, zeroAddress), 'RPC_HTTP_ERROR');
      expect(rpcError.message).toContain('exceeds defined limit');
    } finally {
      await new Promise((resolve) => failing.close(resolve));
    }
  });

  it('maps an RPC that never answers to REQUEST_TIMED_OUT', async () => {
    // A real socket that accepts and stays silent: a hung RPC, which anvil cannot be made to be on demand.
    const sockets: Socket[] = [];
    const silent = createServer((socket) => void sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = silent.address() as { port: number };
      const hung = { ...chainConfig(A), httpRpcUrl: `http://127.0.0.1:${port}` };
      const { market } = createMarket({ chains: [hung], clients: { timeout: 200 } });
      const error = await expectGatewayError(market.gasPrice(A), 'REQUEST_TIMED_OUT');
      expect(error.status).toBe(504);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
