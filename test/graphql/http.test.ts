/**
 * GraphQL over HTTP on a real Fastify app (port 0): the catalogue through the core, hidden chains, gateway
 * errors as extensions with HTTP 200, masking of unexpected errors, validation and scalar errors, and the
 * REST side's JSON parsing left intact by the GraphQL routes' pass-through parser.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getChains } from '../../src/core/chains/getChains.js';
import type { Chain } from '../../src/core/chains/types.js';
import { createGraphQL } from '../../src/graphql/createGraphQL.js';
import { addressRole, chainAddress, makeChainConfig } from '../helpers/chainConfig.js';
import { makeCore, post, startGraphQLApp, type GraphQLApp, type GraphQLResponse } from './harness.js';

/** An RPC provider's key, as operators put it in their endpoints' URLs. */
const providerKey = 'sk_live_PROVIDERKEY0123456789';
const { core } = makeCore([
  makeChainConfig(10, {
    explorerQueryParams: { tab: 'overview' },
    tags: ['l2'],
    httpRpcUrl: `https://mainnet.example/v3/${providerKey}`,
    wsRpcUrl: `wss://mainnet.example/ws/v3/${providerKey}`,
  }),
  makeChainConfig(20, {
    hidden: true,
    name: 'private-chain',
    partialDisableLimit: 5_000_000_000_000_000_000n,
    httpRpcUrl: `https://private.example/rpc?apikey=${providerKey}`,
    publicHttpRpcUrl: 'https://public.example/rpc',
    publicWsRpcUrl: 'wss://public.example/ws',
  }),
]);
let server: GraphQLApp;

beforeAll(async () => {
  server = await startGraphQLApp(core, (app) => {
    app.post('/echo', async (request) => ({ received: request.body }));
  });
});
afterAll(async () => {
  await server?.stop();
});

const everyChainField = `
  id name displayName httpRpcUrl wsRpcUrl explorerUrl explorerName
  explorerPaths { transaction address token }
  explorerQueryParams depositEnabled tokenSupport disabled partialDisableLimit blockProductionLagging
  currency { id symbol name address decimals supportsBridging }
  withdrawalFee depositFee surgeEnabled
  featuredTokens { id symbol name address decimals supportsBridging metadata { logoURI } }
  erc20Currencies { id symbol name address decimals supportsBridging supportsPermit withdrawalFee depositFee surgeEnabled }
  solverCurrencies { id symbol name address decimals }
  iconUrl logoUrl brandColor
  contracts { multicall3 multicaller onlyOwnerMulticaller serviceReceiver relayReceiver erc20Router approvalProxy v3 { erc20Router approvalProxy } }
  vmType baseChainId statusMessage solverAddresses tags
  protocol { v2 { chainId depository depositoryVault } }
`;

/** The core's chain as the GraphQL wire shows it: bigints as decimal strings, enums in SCREAMING_CASE. */
const onTheWire = (chain: Chain) => ({
  ...chain,
  partialDisableLimit: chain.partialDisableLimit.toString(),
  vmType: chain.vmType.toUpperCase(),
  tokenSupport: chain.tokenSupport.toUpperCase(),
});

describe('chains', () => {
  it('returns the core catalogue with every field over POST, BigInt as a decimal string', async () => {
    const { status, body } = await post(server.url, `{ chains { ${everyChainField} } }`);
    expect(status).toBe(200);
    expect(body.errors).toBeUndefined();
    expect(body.data.chains).toEqual(getChains(core).map(onTheWire));
    const [chain] = body.data.chains;
    expect(chain).toMatchObject({
      id: 10,
      partialDisableLimit: '0',
      vmType: 'EVM',
      tokenSupport: 'LIMITED',
      explorerQueryParams: { tab: 'overview' },
      contracts: { serviceReceiver: chainAddress(10, addressRole.receiver) },
    });
  });

  it("publishes the configured public RPC endpoints, or none, never the operator's (provider keys stay private)", async () => {
    const { body } = await post(server.url, '{ chains(includeChains: ["20"]) { id httpRpcUrl wsRpcUrl } }');
    expect(body.errors).toBeUndefined();
    expect(body.data.chains).toEqual([
      { id: 10, httpRpcUrl: '', wsRpcUrl: '' },
      { id: 20, httpRpcUrl: 'https://public.example/rpc', wsRpcUrl: 'wss://public.example/ws' },
    ]);
    const everything = await post(server.url, `{ chains(includeChains: ["20"]) { ${everyChainField} } }`);
    expect(everything.body.data.chains).toHaveLength(2);
    expect(JSON.stringify(everything.body)).not.toContain(providerKey);
  });

  it('reveals a hidden chain named in includeChains, by id or by name', async () => {
    for (const includeChains of [['20'], ['private-chain'], ['99', ' 20 ']]) {
      const { body } = await post(
        server.url,
        'query($include: [String!]) { chains(includeChains: $include) { id partialDisableLimit } }',
        {
          include: includeChains,
        },
      );
      expect(body.errors).toBeUndefined();
      expect(body.data.chains).toEqual([
        { id: 10, partialDisableLimit: '0' },
        { id: 20, partialDisableLimit: '5000000000000000000' },
      ]);
    }
  });

  it('finds one chain by id, hidden or not, and null for an unknown id', async () => {
    const { body } = await post(
      server.url,
      `{ public: chain(id: 10) { ${everyChainField} } hidden: chain(id: 20) { name } unknown: chain(id: 99) { id } }`,
    );
    expect(body.errors).toBeUndefined();
    expect(body.data).toEqual({
      public: onTheWire(getChains(core)[0]!),
      hidden: { name: 'private-chain' },
      unknown: null,
    });
  });

  it('answers GET queries too', async () => {
    const response = await fetch(`${server.url}/graphql?query=${encodeURIComponent('{ chains { id } }')}`, {
      headers: { accept: 'application/graphql-response+json' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ data: { chains: [{ id: 10 }] } });
  });
});

describe('errors', () => {
  const quoteInput = {
    user: '0x1111111111111111111111111111111111111111',
    originChainId: 10,
    destinationChainId: 20,
    originCurrency: '0x0000000000000000000000000000000000000000',
    destinationCurrency: '0x0000000000000000000000000000000000000000',
    amount: '1000000000000000000',
    tradeType: 'EXACT_INPUT',
  };

  it('keeps sibling fields when one field fails, for queries and mutations', async () => {
    const { status, body } = await post(server.url, '{ chains { id } requestStatus(requestId: "0x01") { status } }');
    expect(status).toBe(200);
    expect(body.data).toEqual({ chains: [{ id: 10 }], requestStatus: null });
    expect(body.errors?.map((e) => [e.path, e.extensions?.code])).toEqual([[['requestStatus'], 'INVALID_INPUT']]);

    // A mutation that fails (a claim on a chain that is not configured) reports its gateway error the same way.
    const mutation = await post(
      server.url,
      'mutation { claimAppFees(input: { wallet: "0x1111111111111111111111111111111111111111", chainId: 999, currency: "0x0000000000000000000000000000000000000000", recipient: "0x1111111111111111111111111111111111111111" }) { __typename } }',
    );
    expect(mutation.status).toBe(200);
    expect(mutation.body.data).toBeNull();
    expect(mutation.body.errors?.[0]).toMatchObject({
      path: ['claimAppFees'],
      extensions: { code: 'UNSUPPORTED_CHAIN', status: 400 },
    });
  });

  it('masks an unexpected error as "Unexpected error." and logs it', async () => {
    const secret = 'connect ECONNREFUSED postgres://admin:hunter2@10.0.0.5/gateway';
    const { core: brokenCore, entries } = makeCore([]);
    Object.defineProperty(brokenCore, 'config', {
      get: () => {
        throw new Error(secret);
      },
    });
    const { yoga } = createGraphQL({ core: brokenCore });
    const response = await yoga.fetch('http://gateway.test/graphql', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ chains { id } }' }),
    });
    const text = await response.text();
    expect(response.status).toBe(200);
    expect(text).not.toContain('hunter2');
    expect(JSON.parse(text)).toEqual({
      data: null,
      errors: [
        {
          message: 'Unexpected error.',
          locations: [{ line: 1, column: 3 }],
          path: ['chains'],
          extensions: { code: 'UNKNOWN_ERROR' },
        },
      ],
    });
    const logged = entries.filter((entry) => entry.level === 'error');
    expect(logged).toHaveLength(1);
    expect(logged[0]!.obj).toMatchObject({ path: 'chains', err: { message: secret } });
  });

  it('answers a malformed operation with GraphQL validation or syntax errors', async () => {
    const unknownField = await post(server.url, '{ chains { id nope } }');
    expect(unknownField.status).toBe(400);
    expect(unknownField.body.data).toBeUndefined();
    expect(unknownField.body.errors?.map((e) => e.message)).toEqual([
      'Cannot query field "nope" on type "Chain". Did you mean "name"?',
    ]);

    const syntax = await post(server.url, '{ chains { id }');
    expect(syntax.status).toBe(400);
    expect(syntax.body.errors?.[0]?.message).toMatch(/^Syntax Error/);

    const missingArgument = await post(server.url, '{ chain { id } }');
    expect(missingArgument.status).toBe(400);
    expect(missingArgument.body.errors?.[0]?.message).toContain('argument "id" of type "Int!" is required');
  });

  it('rejects malformed scalars in variables and literals', async () => {
    const badAddress = await post(
      server.url,
      'query($a: Address!) { tokenPrice(chainId: 10, address: $a) { price } }',
      { a: '0x1234' },
    );
    expect(badAddress.status).toBe(400);
    expect(badAddress.body.errors?.[0]?.message).toContain('Address cannot represent "0x1234"');

    const badAmount = await post(
      server.url,
      'query($input: QuoteInput!) { price(input: $input) { details { rate } } }',
      {
        input: { ...quoteInput, amount: '1.5' },
      },
    );
    expect(badAmount.status).toBe(400);
    expect(badAmount.body.errors?.[0]?.message).toContain('BigInt cannot represent "1.5"');

    const badLiteral = await post(server.url, '{ tokenPrice(chainId: 10, address: 12) { price } }');
    expect(badLiteral.status).toBe(400);
    expect(badLiteral.body.errors?.[0]?.message).toContain('Address cannot represent literal 12');
  });
});

describe('the HTTP surface', () => {
  it('leaves JSON body parsing of the other routes intact', async () => {
    const response = await fetch(`${server.url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '1', nested: { ok: true } }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: { amount: '1', nested: { ok: true } } });
  });

  it('lets yoga read and check the raw body: broken JSON is a 400, an oversized body a 413', async () => {
    const broken = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query": ',
    });
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as GraphQLResponse).errors?.[0]?.message).toMatch(/JSON/);

    const query = `{ chains { id } } # ${'x'.repeat(1_100_000)}`;
    const oversized = await fetch(`${server.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query }),
    });
    expect(oversized.status).toBe(413);
  });

  it('answers a CORS preflight on /graphql', async () => {
    const response = await fetch(`${server.url}/graphql`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type,x-api-key',
      },
    });
    expect(response.status).toBeLessThan(300);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });

  it('serves the contract, descriptions included, to introspection', async () => {
    const { body } = await post(
      server.url,
      `{
      bigInt: __type(name: "BigInt") { description }
      query: __type(name: "Query") { description fields { name } }
      subscription: __type(name: "Subscription") { fields { name } }
    }`,
    );
    expect(body.data.bigInt.description).toMatch(/^An integer amount in a currency's smallest units/);
    expect(body.data.query.description).toContain('getIntentStatus');
    expect(body.data.query.fields.map((f: { name: string }) => f.name)).toEqual([
      'chains',
      'chain',
      'quote',
      'price',
      'request',
      'requestStatus',
      'requests',
      'requestSignature',
      'tokenPrice',
      'currencies',
      'swapSources',
      'appFeeBalances',
      'appFeeClaims',
      'inventory',
    ]);
    expect(body.data.subscription.fields.map((f: { name: string }) => f.name)).toEqual([
      'requestStatus',
      'requestUpdates',
    ]);
  });
});
