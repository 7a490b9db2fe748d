/**
 * Currency search (`POST /currencies/v2`, `/v1`, GraphQL `currencies`) and token prices
 * (`GET /currencies/token/price`, GraphQL `tokenPrice`) on a real devnet: every filter, v1 grouping, the
 * devnet feeds' prices, a feed update seen after the cache lifetime, a broken feed as 503, and the GraphQL
 * fields answering what REST answers. A second gateway on the same devnet, with chain 31339 hidden, MNR on 31338
 * unverified and not a solver currency, and no deposit-address factory on 31337, covers what the devnet
 * configuration does not exercise.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, http, parseUnits, zeroAddress, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { priceFeedAbi } from '../../generated/contracts/index.js';
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
      ? { ...chain, hidden: true }
      : chain.id === 31338
        ? {
            ...chain,
            currencies: chain.currencies.map((c) => (c.id === 'mnr' ? { ...c, verified: false, solver: false } : c)),
          }
        : { ...chain, contracts: { ...chain.contracts, depositAddressFactory: undefined } },
  );
  // Its own solver key: listing currencies needs none, and it must not share nonces with the main gateway.
  variant = await createServer(
    configFromEnvironment({ PORT: '0', GATEWAY_LOG_LEVEL: 'silent' }, chains, generatePrivateKey()),
  );
  variantUrl = await variant.start();
});
afterAll(async () => {
  await variant?.stop();
  await gateway?.stop();
});

const token = (chainId: number, symbol: string): Address =>
  gateway.devnet.descriptor.chains.find((c) => c.chainId === chainId)!.tokens.find((t) => t.symbol === symbol)!.address;
const feed = (chainId: number, symbol: string): Address => {
  const chain = gateway.devnet.descriptor.chains.find((c) => c.chainId === chainId)!;
  return symbol === 'ETH' ? chain.nativePriceFeed : chain.tokens.find((t) => t.symbol === symbol)!.priceFeed;
};
/** `chainId:SYMBOL` of each item, the shortest readable form of a list. */
const ids = (items: Array<{ chainId: number; symbol: string }>) =>
  items.map((item) => `${item.chainId}:${item.symbol}`);
const each = (symbols: string[], chains = [31337, 31338, 31339]) =>
  chains.flatMap((chainId) => symbols.map((s) => `${chainId}:${s}`));

const v2 = async (body?: unknown, url = gateway.url) => {
  const response = await call(url, 'getCurrencies', body === undefined ? {} : { body });
  expect(response.status).toBe(200);
  return response.body as Array<{
    chainId: number;
    symbol: string;
    address: string;
    metadata: { verified: boolean; isNative: boolean };
  }>;
};

const graphql = async (query: string, variables: Record<string, unknown> = {}) => {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query, variables }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as { data?: any; errors?: any[] };
};

/** Sets a devnet feed's answer (8 decimals) as the deployer, who owns the feeds. */
async function setPrice(chainId: number, symbol: string, usd: string): Promise<void> {
  const chain = gateway.devnet.descriptor.chains.find((c) => c.chainId === chainId)!;
  const wallet = createWalletClient({
    account: privateKeyToAccount(gateway.devnet.descriptor.deployer.privateKey),
    transport: http(chain.rpcUrl),
  });
  const hash = await wallet.writeContract({
    chain: null,
    address: feed(chainId, symbol),
    abi: priceFeedAbi,
    functionName: 'setAnswer',
    args: [parseUnits(usd, 8)],
  });
  await createPublicClient({ transport: http(chain.rpcUrl) }).waitForTransactionReceipt({ hash });
}
/** Waits out the market's price cache: one block time of the chain. */
const afterCacheLifetime = (chainId: number) => {
  const blockTime = gateway.config.chains.find((c) => c.id === chainId)!.blockTime;
  return new Promise((resolve) => setTimeout(resolve, blockTime * 1_000 + 200));
};

describe('POST /currencies/v2', () => {
  it('returns the default list (featured currencies, native first) without a body, for {} and for chainIds alone', async () => {
    const list = await v2();
    expect(ids(list)).toEqual(each(['ETH', 'USDC', 'USDT', 'WETH']));
    expect(list[0]).toEqual({
      chainId: 31337,
      address: zeroAddress,
      symbol: 'ETH',
      name: 'Ether',
      decimals: 18,
      vmType: 'evm',
      metadata: { logoURI: '', verified: true, isNative: true },
    });
    expect(list[1]).toMatchObject({ address: token(31337, 'USDC'), decimals: 6, metadata: { isNative: false } });
    expect(await v2({})).toEqual(list);
    expect(ids(await v2({ chainIds: [31338] }))).toEqual(each(['ETH', 'USDC', 'USDT', 'WETH'], [31338]));
    expect(ids(await v2({ defaultList: true, chainIds: [31338, 31339] }))).toEqual(
      each(['ETH', 'USDC', 'USDT', 'WETH'], [31338, 31339]),
    );
  });

  it('looks at the whole list with defaultList false or when searching, and at the default list with defaultList true', async () => {
    // 21 currencies on the three chains: the default limit (20) leaves the last out.
    expect(ids(await v2({ defaultList: false }))).toEqual(
      each(['ETH', 'USDC', 'USDT', 'WETH', 'MNR', 'PUSD', 'LONG']).slice(0, 20),
    );
    expect(ids(await v2({ term: 'mnr' }))).toEqual(each(['MNR']));
    expect(await v2({ term: 'mnr', defaultList: true })).toEqual([]);
  });

  it('limits the answer (default 20, at most 100)', async () => {
    expect(ids(await v2({ defaultList: false, limit: 8 }))).toEqual([
      ...each(['ETH', 'USDC', 'USDT', 'WETH', 'MNR', 'PUSD', 'LONG'], [31337]),
      '31338:ETH',
    ]);
    for (const limit of [0, 101, 2.5]) {
      const { status, body } = await call(gateway.url, 'getCurrencies', { body: { limit } });
      expect(status).toBe(400);
      expect(body).toMatchObject({ errorCode: 'INVALID_INPUT', statusCode: 400 });
    }
  });

  it('filters by chainIds; unknown chains match nothing', async () => {
    expect(ids(await v2({ defaultList: false, chainIds: [31339] }))).toEqual(
      each(['ETH', 'USDC', 'USDT', 'WETH', 'MNR', 'PUSD', 'LONG'], [31339]),
    );
    expect(await v2({ chainIds: [999] })).toEqual([]);
  });

  it('searches symbol and name case-insensitively, exact symbol matches first', async () => {
    // "usd" is inside the symbols USDC, USDT and PUSD (and the names "USD Coin", "Tether USD", "Permit USD").
    expect(ids(await v2({ term: 'USD' }))).toEqual(each(['USDC', 'USDT', 'PUSD']));
    expect(ids(await v2({ term: 'minor' }))).toEqual(each(['MNR']));
    // "eth" is ETH's symbol, inside WETH, and inside the names "Ether", "Wrapped Ether" and "Tether USD".
    expect(ids(await v2({ term: ' eth ' }))).toEqual([...each(['ETH']), ...each(['USDT', 'WETH'])]);
    expect(await v2({ term: 'nothing-like-this' })).toEqual([]);
  });

  it('finds a currency by its address as a term or as the address filter, in any letter case', async () => {
    const usdc = token(31337, 'USDC');
    // The devnet deploys every token at the same address on every chain.
    expect(ids(await v2({ term: usdc.toUpperCase().replace('0X', '0x') }))).toEqual(each(['USDC']));
    expect(ids(await v2({ address: usdc.toLowerCase() }))).toEqual(each(['USDC']));
    expect(ids(await v2({ address: usdc, chainIds: [31339] }))).toEqual(['31339:USDC']);
    expect(ids(await v2({ address: zeroAddress }))).toEqual(each(['ETH']));
  });

  it('filters by currency group id', async () => {
    expect(ids(await v2({ currencyId: 'USDC' }))).toEqual(each(['USDC']));
    expect(ids(await v2({ currencyId: 'weth', chainIds: [31337] }))).toEqual(['31337:WETH']);
  });

  it('filters by chainId:address tokens', async () => {
    const list = await v2({
      tokens: [`31339:${zeroAddress}`, `31338:${token(31338, 'MNR').toLowerCase()}`, '999:0xabc'],
    });
    expect(ids(list)).toEqual(['31338:MNR', '31339:ETH']);
    const { status, body } = await call(gateway.url, 'getCurrencies', { body: { tokens: ['USDC'] } });
    expect(status).toBe(400);
    expect(body.errorCode).toBe('INVALID_INPUT');
  });

  it('returns the matched currencies on every chain with includeAllChains', async () => {
    expect(ids(await v2({ tokens: [`31337:${token(31337, 'USDC')}`], includeAllChains: true }))).toEqual(
      each(['USDC']),
    );
    // The expansion crosses chainIds and reaches non-featured currencies: that is the point of the flag.
    expect(ids(await v2({ term: 'mnr', chainIds: [31338], includeAllChains: true }))).toEqual(each(['MNR']));
    expect(ids(await v2({ chainIds: [31337], includeAllChains: true, defaultList: false }))).toEqual(
      each(['ETH', 'USDC', 'USDT', 'WETH', 'MNR', 'PUSD', 'LONG']).slice(0, 20),
    );
  });

  it('depositAddressOnly keeps the solver currencies of chains with a deposit-address factory; useExternalSearch is ignored', async () => {
    // The devnet: every chain has a factory and every listed currency but LONG (no solver inventory) is a solver
    // currency.
    expect(ids(await v2({ depositAddressOnly: true, defaultList: false, limit: 100 }))).toEqual(
      ids(await v2({ defaultList: false, limit: 100 })).filter((id) => !id.endsWith(':LONG')),
    );
    // The variant: 31337 has no factory, 31339 is hidden, MNR on 31338 is not accepted as input.
    expect(ids(await v2({ depositAddressOnly: true, defaultList: false, limit: 100 }, variantUrl))).toEqual(
      each(['ETH', 'USDC', 'USDT', 'WETH', 'PUSD'], [31338]),
    );
    expect(await v2({ depositAddressOnly: true, term: 'mnr' }, variantUrl)).toEqual([]);
    expect(await v2({ useExternalSearch: true })).toEqual(await v2());
  });

  // Forward compatibility: an unknown field is ignored and named, the answer is as without it.
  it('ignores fields the contract does not declare and names them in x-ignored-fields', async () => {
    const { status, body, headers } = await call(gateway.url, 'getCurrencies', { body: { colour: 'red' } });
    expect(status).toBe(200);
    expect(headers.get('x-ignored-fields')).toBe('colour');
    expect(body).toEqual((await call(gateway.url, 'getCurrencies', { body: {} })).body);
  });

  it('leaves hidden chains out and filters on verified (variant gateway)', async () => {
    expect(ids(await v2({ defaultList: false }, variantUrl))).toEqual(
      each(['ETH', 'USDC', 'USDT', 'WETH', 'MNR', 'PUSD', 'LONG'], [31337, 31338]),
    );
    expect(await v2({ chainIds: [31339] }, variantUrl)).toEqual([]);
    const mnr = await v2({ term: 'mnr' }, variantUrl);
    expect(mnr.map((c) => [c.chainId, c.metadata.verified])).toEqual([
      [31337, true],
      [31338, false],
    ]);
    expect(ids(await v2({ term: 'mnr', verified: true }, variantUrl))).toEqual(['31337:MNR']);
    // `false` does not restrict (docs/api-notes.md).
    expect(await v2({ term: 'mnr', verified: false }, variantUrl)).toEqual(mnr);
    expect(
      ids(await v2({ tokens: [`31337:${token(31337, 'MNR')}`], includeAllChains: true, verified: true }, variantUrl)),
    ).toEqual(['31337:MNR']);
  });
});

describe('POST /currencies/v1', () => {
  it('groups the same matches by group id, each item with its groupID', async () => {
    const { status, body } = await call(gateway.url, 'getCurrenciesV1');
    expect(status).toBe(200);
    expect(body.map((group: any[]) => ids(group))).toEqual(['ETH', 'USDC', 'USDT', 'WETH'].map((s) => each([s])));
    for (const group of body) expect(new Set(group.map((item: { groupID: string }) => item.groupID)).size).toBe(1);
    expect(body[1][0]).toEqual({ groupID: 'usdc', ...(await v2())[1] });
  });

  it('counts groups, not items, in limit, and applies the same filters', async () => {
    const { body } = await call(gateway.url, 'getCurrenciesV1', { body: { limit: 2, defaultList: false } });
    expect(body.map((group: any[]) => ids(group))).toEqual([each(['ETH']), each(['USDC'])]);
    const search = await call(gateway.url, 'getCurrenciesV1', { body: { term: 'eth', chainIds: [31338] } });
    expect(search.body.map((group: any[]) => ids(group))).toEqual([['31338:ETH'], ['31338:USDT'], ['31338:WETH']]);
    const depositable = await call(gateway.url, 'getCurrenciesV1', {
      body: { limit: 2, defaultList: false, depositAddressOnly: true },
    });
    expect(depositable.body).toEqual(body);
    const variantOnly = await call(variantUrl, 'getCurrenciesV1', {
      body: { term: 'mnr', defaultList: false, depositAddressOnly: true },
    });
    expect(variantOnly.body).toEqual([]);
  });
});

describe('GET /currencies/token/price', () => {
  const price = async (chainId: number, address: string) => {
    const response = await call(gateway.url, 'getTokenPrice', { query: { chainId: String(chainId), address } });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body.price as number;
  };

  it('prices one whole unit from the devnet feeds', async () => {
    for (const chainId of [31337, 31338, 31339]) {
      expect(await price(chainId, zeroAddress)).toBe(3000);
      expect(await price(chainId, token(chainId, 'USDC'))).toBe(1);
      expect(await price(chainId, token(chainId, 'USDT'))).toBe(1);
      expect(await price(chainId, token(chainId, 'WETH'))).toBe(3000);
      expect(await price(chainId, token(chainId, 'MNR').toLowerCase())).toBe(0.5);
    }
  });

  it('sees a feed update once the cache lifetime (one block time) has passed', async () => {
    try {
      await setPrice(31338, 'MNR', '0.73125');
      await afterCacheLifetime(31338);
      expect(await price(31338, token(31338, 'MNR'))).toBe(0.73125);
      expect(await price(31337, token(31337, 'MNR'))).toBe(0.5);
    } finally {
      await setPrice(31338, 'MNR', '0.5');
      await afterCacheLifetime(31338);
    }
    expect(await price(31338, token(31338, 'MNR'))).toBe(0.5);
  });

  it('answers 503 PRICE_FETCH_FAILED, retriable, when the feed answers a non-positive price', async () => {
    try {
      await setPrice(31339, 'USDT', '0');
      await afterCacheLifetime(31339);
      const { status, body } = await call(gateway.url, 'getTokenPrice', {
        query: { chainId: '31339', address: token(31339, 'USDT') },
      });
      expect(status).toBe(503);
      expect(body).toMatchObject({ errorCode: 'PRICE_FETCH_FAILED', statusCode: 503 });
      expect(body.message).toContain('USDT');
      const result = await graphql('query($a: Address!) { tokenPrice(chainId: 31339, address: $a) { price } }', {
        a: token(31339, 'USDT'),
      });
      expect(result.errors?.[0]?.extensions).toMatchObject({
        code: 'PRICE_FETCH_FAILED',
        status: 503,
        retriable: true,
      });
    } finally {
      await setPrice(31339, 'USDT', '1');
      await afterCacheLifetime(31339);
    }
    expect(await price(31339, token(31339, 'USDT'))).toBe(1);
  });

  it('answers the reference error codes for bad requests', async () => {
    const cases: Array<[Record<string, string>, number, string]> = [
      [{ chainId: '999', address: zeroAddress }, 400, 'UNSUPPORTED_CHAIN'],
      [{ chainId: '31337', address: '0x00000000000000000000000000000000deadbeef' }, 404, 'NOT_FOUND'],
      [{ chainId: '31337', address: 'not-an-address' }, 400, 'INVALID_ADDRESS'],
      [{ chainId: '31337' }, 400, 'INVALID_INPUT'],
      [{ chainId: 'one', address: zeroAddress }, 400, 'INVALID_INPUT'],
    ];
    for (const [query, status, errorCode] of cases) {
      const response = await call(gateway.url, 'getTokenPrice', { query });
      expect([response.status, response.body.errorCode], JSON.stringify(query)).toEqual([status, errorCode]);
      expect(response.body.statusCode).toBe(status);
    }
  });
});

describe('GraphQL', () => {
  it('`tokenPrice` answers what REST answers, as an exact decimal string', async () => {
    const result = await graphql(
      `query($usdc: Address!, $mnr: Address!) {
        eth: tokenPrice(chainId: 31337, address: "${zeroAddress}") { chainId address price }
        usdc: tokenPrice(chainId: 31338, address: $usdc) { chainId address price }
        mnr: tokenPrice(chainId: 31339, address: $mnr) { chainId address price }
      }`,
      { usdc: token(31338, 'USDC').toLowerCase(), mnr: token(31339, 'MNR') },
    );
    expect(result.errors).toBeUndefined();
    expect(result.data).toEqual({
      eth: { chainId: 31337, address: zeroAddress, price: '3000' },
      usdc: { chainId: 31338, address: token(31338, 'USDC'), price: '1' },
      mnr: { chainId: 31339, address: token(31339, 'MNR'), price: '0.5' },
    });
  });

  it('`tokenPrice` fails with the REST codes in extensions', async () => {
    const result = await graphql(`{
      chain: tokenPrice(chainId: 999, address: "${zeroAddress}") { price }
    }`);
    expect(result.errors?.[0]?.extensions).toMatchObject({ code: 'UNSUPPORTED_CHAIN', status: 400, retriable: false });
    const missing = await graphql(
      '{ tokenPrice(chainId: 31337, address: "0x00000000000000000000000000000000deadbeef") { price } }',
    );
    expect(missing.errors?.[0]?.extensions).toMatchObject({ code: 'NOT_FOUND', status: 404 });
  });

  it('`currencies` answers the v2 list with each group id', async () => {
    const fields = 'groupId chainId address symbol name decimals vmType metadata { logoURI verified isNative }';
    const inputs = [
      undefined,
      { term: 'eth', limit: 4 },
      { currencyId: 'mnr', includeAllChains: true },
      { defaultList: false, chainIds: [31339] },
    ];
    for (const input of inputs) {
      const result = await graphql(`query($input: CurrenciesInput) { currencies(input: $input) { ${fields} } }`, {
        input,
      });
      expect(result.errors).toBeUndefined();
      const rest = await v2(input);
      const groups = (
        await call(gateway.url, 'getCurrenciesV1', input === undefined ? {} : { body: { ...input, limit: 100 } })
      ).body.flat();
      const groupOf = (item: { chainId: number; address: string }) =>
        groups.find(
          (g: { chainId: number; address: string }) => g.chainId === item.chainId && g.address === item.address,
        ).groupID;
      expect(result.data.currencies).toEqual(rest.map((item) => ({ groupId: groupOf(item), ...item, vmType: 'EVM' })));
    }
  });

  it('`currencies` checks what GraphQL types cannot: limit and tokens', async () => {
    const badLimit = await graphql('{ currencies(input: { limit: 0 }) { symbol } }');
    expect(badLimit.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
    const badToken = await graphql('{ currencies(input: { tokens: ["usdc"] }) { symbol } }');
    expect(badToken.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
  });
});
