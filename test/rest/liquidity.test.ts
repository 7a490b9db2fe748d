/**
 * Solver-facing reads on a real devnet: `GET /chains/liquidity` matches the solver's balances read on chain
 * with viem, values them exactly at the feeds' prices, sees new inventory after the cache lifetime and fails
 * as a whole (503) when a held currency cannot be priced; `GET /swap-sources` lists the inventory and the DEXes. A
 * second gateway on the same devnet, with a fresh solver key (no balances), chain 31339 hidden and without DEX, and
 * MNR on 31338 not a solver currency, covers what the devnet configuration does not exercise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createPublicClient,
  createWalletClient,
  erc20Abi,
  formatUnits,
  http,
  parseUnits,
  zeroAddress,
  type Address,
} from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { priceFeedAbi, stableTokenAbi } from '../../generated/contracts/index.js';
import { SWAP_SOURCE } from '../../src/core/chains/dexSources.js';
import { configFromEnvironment } from '../../src/server/config.js';
import { createServer, type GatewayServer } from '../../src/server/createServer.js';
import { devnetChainConfigs } from '../../src/server/devnetConfig.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;
let variant: GatewayServer;
let variantUrl: string;

beforeAll(async () => {
  gateway = await startTestGateway();
  const chains = devnetChainConfigs(gateway.devnet.descriptor).map((chain) =>
    chain.id === 31339
      ? { ...chain, hidden: true, dex: undefined }
      : chain.id === 31338
        ? { ...chain, currencies: chain.currencies.map((c) => (c.id === 'mnr' ? { ...c, solver: false } : c)) }
        : chain,
  );
  variant = await createServer(
    configFromEnvironment({ PORT: '0', GATEWAY_LOG_LEVEL: 'silent' }, chains, generatePrivateKey()),
  );
  variantUrl = await variant.start();
});
afterAll(async () => {
  await variant?.stop();
  await gateway?.stop();
});

const devnetChain = (chainId: number) => gateway.devnet.descriptor.chains.find((c) => c.chainId === chainId)!;
const publicClient = (chainId: number) => createPublicClient({ transport: http(devnetChain(chainId).rpcUrl) });
const deployerWallet = (chainId: number) =>
  createWalletClient({
    account: privateKeyToAccount(gateway.devnet.descriptor.deployer.privateKey),
    transport: http(devnetChain(chainId).rpcUrl),
  });
const afterCacheLifetime = (chainId: number) =>
  new Promise((resolve) =>
    setTimeout(resolve, gateway.config.chains.find((c) => c.id === chainId)!.blockTime * 1_000 + 200),
  );

/** The devnet feeds' prices in micro-USD per whole unit (WETH uses the native feed). */
const priceMicros: Record<string, bigint> = {
  ETH: 3_000_000_000n,
  WETH: 3_000_000_000n,
  USDC: 1_000_000n,
  USDT: 1_000_000n,
  MNR: 500_000n,
  PUSD: 1_000_000n,
};

/** The solver's balance read on chain: `eth_getBalance` for the native currency, `balanceOf` otherwise. */
async function onChainBalance(chainId: number, address: Address): Promise<bigint> {
  const owner = gateway.devnet.descriptor.solver.address;
  const client = publicClient(chainId);
  return address === zeroAddress
    ? client.getBalance({ address: owner })
    : client.readContract({ address, abi: erc20Abi, functionName: 'balanceOf', args: [owner] });
}

async function liquidity(chainId: number, url = gateway.url) {
  const response = await call(url, 'getChainsLiquidity', { query: { chainId: String(chainId) } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return response.body.liquidity as Array<{
    chainId: number;
    currencyId: string;
    symbol: string;
    address: Address;
    decimals: number;
    balance: string;
    amountUsd: string;
  }>;
}

async function send(
  chainId: number,
  request: Parameters<ReturnType<typeof deployerWallet>['writeContract']>[0],
): Promise<void> {
  const hash = await deployerWallet(chainId).writeContract(request);
  await publicClient(chainId).waitForTransactionReceipt({ hash });
}

const setPrice = (chainId: number, feed: Address, usd: string) =>
  send(chainId, {
    chain: null,
    address: feed,
    abi: priceFeedAbi,
    functionName: 'setAnswer',
    args: [parseUnits(usd, 8)],
  });

describe('GET /chains/liquidity', () => {
  it('lists every solver currency, native first, with the balances the chain reports', async () => {
    for (const chainId of [31337, 31338, 31339]) {
      const entries = await liquidity(chainId);
      expect(entries.map((e) => [e.chainId, e.currencyId, e.symbol])).toEqual(
        ['ETH', 'USDC', 'USDT', 'WETH', 'MNR', 'PUSD'].map((symbol) => [chainId, symbol.toLowerCase(), symbol]),
      );
      expect(entries[0]).toMatchObject({ address: zeroAddress, decimals: 18 });
      for (const entry of entries) {
        const token = devnetChain(chainId).tokens.find((t) => t.symbol === entry.symbol);
        if (token) expect([entry.address, entry.decimals]).toEqual([token.address, token.decimals]);
        const balance = await onChainBalance(chainId, entry.address);
        expect(entry.balance, `${chainId} ${entry.symbol}`).toBe(balance.toString());
        // Exact: micro-USD rounded down, as a decimal string.
        const micros = (balance * priceMicros[entry.symbol]!) / 10n ** BigInt(entry.decimals);
        expect(entry.amountUsd, `${chainId} ${entry.symbol}`).toBe(formatUnits(micros, 6));
      }
    }
  });

  it('values the devnet inventory at the feed prices', async () => {
    const bySymbol = Object.fromEntries((await liquidity(31338)).map((e) => [e.symbol, e]));
    expect(bySymbol.USDC).toMatchObject({ balance: parseUnits('10000000', 6).toString(), amountUsd: '10000000' });
    expect(bySymbol.MNR).toMatchObject({ balance: parseUnits('10000000', 18).toString(), amountUsd: '5000000' });
    expect(bySymbol.WETH).toMatchObject({ balance: parseUnits('10000', 18).toString(), amountUsd: '30000000' });
  });

  it('sees new inventory once the cache lifetime (one block time) has passed', async () => {
    const usdc = devnetChain(31339).tokens.find((t) => t.symbol === 'USDC')!.address;
    const before = (await liquidity(31339)).find((e) => e.symbol === 'USDC')!;
    const minted = parseUnits('1234.567891', 6);
    await send(31339, {
      chain: null,
      address: usdc,
      abi: stableTokenAbi,
      functionName: 'mint',
      args: [gateway.devnet.descriptor.solver.address, minted],
    });
    await afterCacheLifetime(31339);
    const after = (await liquidity(31339)).find((e) => e.symbol === 'USDC')!;
    expect(BigInt(after.balance) - BigInt(before.balance)).toBe(minted);
    expect(after.balance).toBe((await onChainBalance(31339, usdc)).toString());
    expect(after.amountUsd).toBe(formatUnits(BigInt(after.balance), 6));
  });

  it('fails as a whole with 503 PRICE_FETCH_FAILED when a held currency cannot be priced', async () => {
    const mnrFeed = devnetChain(31337).tokens.find((t) => t.symbol === 'MNR')!.priceFeed;
    try {
      await setPrice(31337, mnrFeed, '0');
      await afterCacheLifetime(31337);
      const { status, body } = await call(gateway.url, 'getChainsLiquidity', { query: { chainId: '31337' } });
      expect(status).toBe(503);
      expect(body).toMatchObject({ errorCode: 'PRICE_FETCH_FAILED', statusCode: 503 });
      expect(body.message).toContain('MNR');
      // The other chains have their own feeds and are unaffected.
      expect(await liquidity(31338)).toHaveLength(6);
      // A solver with no MNR does not need MNR's price: a zero balance is worth zero at any price.
      const empty = await liquidity(31337, variantUrl);
      expect(empty.map((e) => [e.symbol, e.balance, e.amountUsd])).toEqual(
        ['ETH', 'USDC', 'USDT', 'WETH', 'MNR', 'PUSD'].map((s) => [s, '0', '0']),
      );
    } finally {
      await setPrice(31337, mnrFeed, '0.5');
      await afterCacheLifetime(31337);
    }
    expect(await liquidity(31337)).toHaveLength(6);
  });

  it('leaves out currencies that are not solver currencies, and answers for hidden chains', async () => {
    expect((await liquidity(31338, variantUrl)).map((e) => e.symbol)).toEqual(['ETH', 'USDC', 'USDT', 'WETH', 'PUSD']);
    expect((await liquidity(31339, variantUrl)).map((e) => e.symbol)).toEqual([
      'ETH',
      'USDC',
      'USDT',
      'WETH',
      'MNR',
      'PUSD',
    ]);
  });

  it('answers the reference error codes for bad requests', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ chainId: '999' }, 'UNSUPPORTED_CHAIN'],
      [{}, 'INVALID_INPUT'],
      [{ chainId: 'devnet-a' }, 'INVALID_INPUT'],
    ];
    for (const [query, errorCode] of cases) {
      const { status, body } = await call(gateway.url, 'getChainsLiquidity', { query });
      expect([status, body.errorCode, body.statusCode], JSON.stringify(query)).toEqual([400, errorCode, 400]);
    }
  });
});

describe('GET /swap-sources', () => {
  it('lists the solver inventory and the Uniswap deployments of the devnet, on any configured chain', async () => {
    const all = [SWAP_SOURCE, 'uniswap-v3', 'uniswap-v2'];
    for (const query of [{}, { chainId: '31337' }, { chainId: '31339' }] as Array<Record<string, string>>) {
      const { status, body } = await call(gateway.url, 'getSwapSources', { query });
      expect(status).toBe(200);
      expect(body).toEqual({ sources: all });
    }
    expect(SWAP_SOURCE).toBe('solver-inventory');
  });

  it('lists only the inventory on a chain without dex, and the sources of any chain without chainId (variant)', async () => {
    // Hidden chains are still served; the variant's 31339 has no `dex`.
    expect((await call(variantUrl, 'getSwapSources', { query: { chainId: '31339' } })).body).toEqual({
      sources: [SWAP_SOURCE],
    });
    expect((await call(variantUrl, 'getSwapSources', { query: { chainId: '31338' } })).body).toEqual({
      sources: [SWAP_SOURCE, 'uniswap-v3', 'uniswap-v2'],
    });
    expect((await call(variantUrl, 'getSwapSources', {})).body).toEqual({
      sources: [SWAP_SOURCE, 'uniswap-v3', 'uniswap-v2'],
    });
  });

  it('answers the same through GraphQL swapSources', async () => {
    const query = async (url: string, chainId: number | null) => {
      const response = await fetch(`${url}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'query($c: Int) { swapSources(chainId: $c) }', variables: { c: chainId } }),
      });
      return (await response.json()) as { data?: { swapSources: string[] }; errors?: Array<{ extensions: any }> };
    };
    expect((await query(gateway.url, null)).data?.swapSources).toEqual([SWAP_SOURCE, 'uniswap-v3', 'uniswap-v2']);
    expect((await query(variantUrl, 31339)).data?.swapSources).toEqual([SWAP_SOURCE]);
    expect((await query(gateway.url, 1)).errors?.[0]?.extensions.code).toBe('UNSUPPORTED_CHAIN');
  });

  it('answers 400 UNSUPPORTED_CHAIN for a chain the gateway does not serve', async () => {
    const { status, body } = await call(gateway.url, 'getSwapSources', { query: { chainId: '1' } });
    expect(status).toBe(400);
    expect(body).toMatchObject({ errorCode: 'UNSUPPORTED_CHAIN', statusCode: 400 });
  });
});
