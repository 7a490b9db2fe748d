/**
 * One validation for every transport: the same hostile value (negative, zero, beyond uint256, the wrong length, the
 * gateway's own addresses) in the same field of the same operation is refused by REST and by GraphQL with the same
 * 4xx status and the same error code, and changes nothing (no request row, no app-fee claim). The values are a
 * hand-written table, not random: each one is a way a client has got past one transport's schema and not the other's
 * (GraphQL's `BigInt` and `Int` are signed where the OpenAPI schema says `minimum: 0`).
 *
 * One devnet gateway serves both transports; every case is two HTTP calls, nothing is mined.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import type { DevnetChain } from '../../src/chain/devnet.js';
import type { OperationId } from '../../generated/openapi/operations.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

const usdc = (chain: DevnetChain): Address => chain.tokens.find((token) => token.id === 'usdc')!.address;
const user = (): Address => gateway.devnet.descriptor.accounts[0]!.address;
const solver = (): Address => gateway.devnet.descriptor.solver.address;
const depositoryB = (): Address => chainB.contracts.depository;
const someRequestId = `0x${'ab'.repeat(32)}`;

/** How one transport is called with the hostile value in place. */
interface RestCall {
  id: OperationId;
  path?: string;
  query?: Record<string, string>;
  body?: unknown;
}
interface GraphQLCall {
  query: string;
  variables: Record<string, unknown>;
}

/** A field of an operation and the hostile values it must refuse the same way on both transports. */
interface FieldCase {
  operation: string;
  field: string;
  values: () => Array<{ label: string; value: unknown }>;
  rest: (value: unknown) => RestCall;
  graphql: (value: unknown) => GraphQLCall;
}

const TWO_256 = (1n << 256n).toString();
const amounts = (zero: boolean) => () => [
  { label: 'negative', value: '-1' },
  { label: 'the attacker’s negative', value: '-100000000000000' },
  { label: '2^256', value: TWO_256 },
  { label: '78 nines', value: '9'.repeat(78) },
  ...(zero ? [{ label: 'zero', value: '0' }] : []),
];
const malformedAddresses = [
  { label: 'too short', value: '0x1234' },
  { label: '41 hex digits', value: `0x${'a'.repeat(41)}` },
  { label: 'no 0x', value: 'a'.repeat(40) },
];
const addresses = (own: boolean) => () => [
  ...malformedAddresses,
  ...(own ? [{ label: "the solver's address", value: solver() }] : []),
  ...(own ? [{ label: "the destination's depository", value: depositoryB() }] : []),
];
const chainIds = () => [
  { label: 'negative', value: -1 },
  { label: 'zero', value: 0 },
  { label: '2^53', value: 2 ** 53 },
];
const hashes = () => [
  { label: 'too short', value: '0x1234' },
  { label: '65 hex digits', value: `0x${'a'.repeat(65)}` },
];

/** A quote body that REST and GraphQL both accept (`patch` puts the hostile value in). */
function quoteBody(patch: Record<string, unknown> = {}) {
  return {
    user: user(),
    originChainId: chainA.chainId,
    destinationChainId: chainB.chainId,
    originCurrency: usdc(chainA),
    destinationCurrency: usdc(chainB),
    amount: '10000000',
    tradeType: 'EXACT_INPUT',
    ...patch,
  };
}
const quoteQuery = 'query($input: QuoteInput!) { quote(input: $input) { __typename } }';
const quoteCase = (field: string, values: FieldCase['values'], patch: (value: unknown) => Record<string, unknown>) => ({
  operation: 'getQuote',
  field,
  values,
  rest: (value: unknown): RestCall => ({ id: 'getQuote', body: quoteBody(patch(value)) }),
  graphql: (value: unknown): GraphQLCall => ({
    query: quoteQuery,
    variables: { input: quoteBody(patch(value)) },
  }),
});
const target = '0x1111111111111111111111111111111111111111';

/** A gasless body (its `data` is no batch: a value that passes its own check is refused later, the same way). */
function gaslessBody(patch: { data?: Record<string, unknown>; originGasOverhead?: unknown } = {}) {
  return {
    data: { chainId: chainA.chainId, to: user(), data: '0x', value: '0', ...patch.data },
    executionOptions: { subsidizeFees: false },
    originGasOverhead: patch.originGasOverhead ?? '0',
  };
}
const gaslessQuery = 'mutation($input: ExecuteGaslessInput!) { executeGasless(input: $input) { __typename } }';
const gaslessCase = (
  field: string,
  values: FieldCase['values'],
  patch: (value: unknown) => Parameters<typeof gaslessBody>[0],
) => ({
  operation: 'executeGasless',
  field,
  values,
  rest: (value: unknown): RestCall => ({
    id: 'executeGasless',
    body: { executionKind: 'rawCalls', ...gaslessBody(patch(value)) },
  }),
  graphql: (value: unknown): GraphQLCall => ({ query: gaslessQuery, variables: { input: gaslessBody(patch(value)) } }),
});
const authorization = (patch: Record<string, unknown>) => ({
  authorizationList: [
    {
      chainId: chainA.chainId,
      address: target,
      nonce: 0,
      yParity: 0,
      r: `0x${'11'.repeat(32)}`,
      s: `0x${'22'.repeat(32)}`,
      ...patch,
    },
  ],
});

const claimQuery = 'mutation($input: ClaimAppFeesInput!) { claimAppFees(input: $input) { __typename } }';
function claimCase(field: string, values: FieldCase['values'], patch: (value: unknown) => Record<string, unknown>) {
  const input = (value: unknown) => ({
    wallet: user(),
    chainId: chainB.chainId,
    currency: usdc(chainB),
    recipient: user(),
    ...patch(value),
  });
  return {
    operation: 'claimAppFees',
    field,
    values,
    rest: (value: unknown): RestCall => {
      const { wallet, ...body } = input(value);
      return { id: 'claimAppFees' as const, path: `/app-fees/${String(wallet)}/claim`, body };
    },
    graphql: (value: unknown): GraphQLCall => ({ query: claimQuery, variables: { input: input(value) } }),
  };
}

const cases: FieldCase[] = [
  quoteCase('amount', amounts(true), (amount) => ({ amount })),
  quoteCase('txs.value', amounts(false), (value) => ({ txs: [{ to: target, value, data: '0x' }] })),
  quoteCase('maxSubsidizationAmount', amounts(false), (value) => ({ maxSubsidizationAmount: value })),
  quoteCase(
    'permitExpiry',
    () => [
      { label: 'negative', value: -1 },
      { label: 'zero', value: 0 },
      { label: 'a week and a second', value: 604_801 },
    ],
    (permitExpiry) => ({ permitExpiry }),
  ),
  quoteCase('originChainId', chainIds, (originChainId) => ({ originChainId })),
  quoteCase('destinationChainId', chainIds, (destinationChainId) => ({ destinationChainId })),
  quoteCase('user', addresses(true), (value) => ({ user: value })),
  quoteCase('recipient', addresses(true), (recipient) => ({ recipient })),
  quoteCase('refundTo', addresses(true), (refundTo) => ({ refundTo })),
  {
    ...quoteCase('appFees.recipient', addresses(true), () => ({})),
    rest: (recipient) => ({ id: 'getQuote', body: quoteBody({ appFees: [{ recipient, fee: '100' }] }) }),
    graphql: (recipient) => ({
      query: quoteQuery,
      variables: { input: quoteBody({ appFees: [{ recipient, fee: 100 }] }) },
    }),
  },
  {
    operation: 'getPrice',
    field: 'amount',
    values: amounts(true),
    rest: (amount) => ({ id: 'getPrice', body: quoteBody({ amount }) }),
    graphql: (amount) => ({
      query: 'query($input: QuoteInput!) { price(input: $input) { __typename } }',
      variables: { input: quoteBody({ amount }) },
    }),
  },
  gaslessCase('originGasOverhead', amounts(false), (originGasOverhead) => ({ originGasOverhead })),
  gaslessCase('data.value', amounts(false), (value) => ({ data: { value } })),
  gaslessCase('data.chainId', chainIds, (chainId) => ({ data: { chainId } })),
  gaslessCase('data.to', addresses(false), (to) => ({ data: { to } })),
  gaslessCase(
    'authorizationList.nonce',
    () => [{ label: 'negative', value: -1 }],
    (nonce) => ({ data: authorization({ nonce }) }),
  ),
  gaslessCase(
    'authorizationList.yParity',
    () => [
      { label: 'two', value: 2 },
      { label: 'negative', value: -1 },
    ],
    (yParity) => ({ data: authorization({ yParity }) }),
  ),
  gaslessCase('authorizationList.address', addresses(false), (address) => ({ data: authorization({ address }) })),
  claimCase('amount', amounts(true), (amount) => ({ amount })),
  claimCase('chainId', chainIds, (chainId) => ({ chainId })),
  claimCase('wallet', addresses(false), (wallet) => ({ wallet })),
  claimCase('currency', addresses(false), (currency) => ({ currency })),
  claimCase('recipient', addresses(true), (recipient) => ({ recipient })),
  {
    operation: 'fastFill',
    field: 'solverInputCurrencyAmount',
    values: amounts(false),
    rest: (amount) => ({ id: 'fastFill', body: { requestId: someRequestId, solverInputCurrencyAmount: amount } }),
    graphql: (amount) => ({
      query: 'mutation($input: FastFillInput!) { fastFill(input: $input) { __typename } }',
      variables: { input: { requestId: someRequestId, solverInputCurrencyAmount: amount } },
    }),
  },
  {
    operation: 'fastFill',
    field: 'requestId',
    values: hashes,
    rest: (requestId) => ({ id: 'fastFill', body: { requestId } }),
    graphql: (requestId) => ({
      query: 'mutation($input: FastFillInput!) { fastFill(input: $input) { __typename } }',
      variables: { input: { requestId } },
    }),
  },
  ...(['chainId', 'txHash'] as const).map((field): FieldCase => ({
    operation: 'indexTransaction',
    field,
    values: field === 'chainId' ? chainIds : hashes,
    rest: (value) => ({
      id: 'indexTransaction',
      body: { chainId: chainA.chainId, txHash: someRequestId, [field]: value },
    }),
    graphql: (value) => ({
      query: 'mutation($input: IndexTransactionInput!) { indexTransaction(input: $input) { __typename } }',
      variables: { input: { chainId: chainA.chainId, txHash: someRequestId, [field]: value } },
    }),
  })),
  {
    operation: 'submitPermit',
    field: 'requestId',
    values: hashes,
    rest: (requestId) => ({
      id: 'submitPermit',
      query: { signature: `0x${'11'.repeat(65)}` },
      body: { kind: 'eip3009', requestId },
    }),
    graphql: (requestId) => ({
      query: 'mutation($input: SubmitPermitInput!) { submitPermit(input: $input) { __typename } }',
      variables: { input: { kind: 'EIP3009', requestId, signature: `0x${'11'.repeat(65)}` } },
    }),
  },
  ...(['chainId', 'address'] as const).map((field): FieldCase => ({
    operation: 'getTokenPrice',
    field,
    values: field === 'chainId' ? chainIds : () => malformedAddresses,
    rest: (value) => ({
      id: 'getTokenPrice',
      query: { chainId: String(chainA.chainId), address: usdc(chainA), [field]: String(value) },
    }),
    graphql: (value) => ({
      query:
        'query($chainId: Int!, $address: Address!) { tokenPrice(chainId: $chainId, address: $address) { __typename } }',
      variables: { chainId: chainA.chainId, address: usdc(chainA), [field]: value },
    }),
  })),
  {
    operation: 'getAppFeeBalances',
    field: 'wallet',
    values: () => malformedAddresses.slice(0, 2),
    rest: (wallet) => ({ id: 'getAppFeeBalances', path: `/app-fees/${String(wallet)}/balances` }),
    graphql: (wallet) => ({
      query: 'query($wallet: Address!) { appFeeBalances(wallet: $wallet) { __typename } }',
      variables: { wallet },
    }),
  },
  {
    operation: 'getAppFeeClaims',
    field: 'limit',
    values: () => [
      { label: 'negative', value: -1 },
      { label: 'zero', value: 0 },
      { label: '101', value: 101 },
    ],
    rest: (limit) => ({ id: 'getAppFeeClaims', path: `/app-fees/${user()}/claims`, query: { limit: String(limit) } }),
    graphql: (limit) => ({
      query: 'query($wallet: Address!, $limit: Int) { appFeeClaims(wallet: $wallet, limit: $limit) { __typename } }',
      variables: { wallet: user(), limit },
    }),
  },
  {
    operation: 'getCurrencies',
    field: 'chainIds',
    values: chainIds,
    rest: (chainId) => ({ id: 'getCurrencies', body: { chainIds: [chainA.chainId, chainId] } }),
    graphql: (chainId) => ({
      query: 'query($input: CurrenciesInput) { currencies(input: $input) { __typename } }',
      variables: { input: { chainIds: [chainA.chainId, chainId] } },
    }),
  },
  {
    operation: 'getRequests',
    field: 'user',
    values: () => malformedAddresses.slice(0, 2),
    rest: (value) => ({ id: 'getRequests', query: { user: String(value) } }),
    graphql: (value) => ({
      query: 'query($filter: RequestFilterInput) { requests(filter: $filter) { __typename } }',
      variables: { filter: { user: value } },
    }),
  },
  {
    operation: 'getRequests',
    field: 'originChainId',
    values: chainIds,
    rest: (value) => ({ id: 'getRequests', query: { originChainId: String(value) } }),
    graphql: (value) => ({
      query: 'query($filter: RequestFilterInput) { requests(filter: $filter) { __typename } }',
      variables: { filter: { originChainId: value } },
    }),
  },
];

interface Answer {
  status: number;
  code: string | undefined;
  message: string;
}

async function viaRest(request: RestCall): Promise<Answer> {
  const { status, body } = await call(gateway.url, request.id, {
    ...(request.path === undefined ? {} : { path: request.path }),
    ...(request.query === undefined ? {} : { query: request.query }),
    ...(request.body === undefined ? {} : { body: request.body }),
  });
  return { status, code: body?.errorCode, message: String(body?.message ?? '') };
}

async function viaGraphQL(request: GraphQLCall): Promise<Answer> {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(request),
  });
  const body = (await response.json()) as {
    errors?: Array<{ message: string; extensions?: { code?: string; status?: number } }>;
  };
  const error = body.errors?.[0];
  return {
    status: error?.extensions?.status ?? response.status,
    code: error?.extensions?.code,
    message: error?.message ?? '',
  };
}

/** What a refusal must leave as it was: the requests, the app-fee claims and the solver's transactions. */
async function footprint() {
  const db = gateway.server.core.db;
  const count = async (table: 'requests' | 'app_fee_claims' | 'outgoing_txs') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    requests: await count('requests'),
    claims: await count('app_fee_claims'),
    sent: await count('outgoing_txs'),
  };
}

describe('the same hostile value gets the same 4xx on REST and GraphQL, and changes nothing', () => {
  it('the baseline quote is accepted on both transports (so each refusal below is the hostile value’s)', async () => {
    const before = await footprint();
    const rest = await viaRest({ id: 'getQuote', body: quoteBody() });
    const graphql = await viaGraphQL({ query: quoteQuery, variables: { input: quoteBody() } });
    expect([rest.status, graphql.status], `${rest.message} / ${graphql.message}`).toEqual([200, 200]);
    expect((await footprint()).requests).toBe(before.requests + 2);
  });

  it.each(cases.map((c) => [`${c.operation} ${c.field}`, c] as const))('%s', async (_name, c) => {
    const before = await footprint();
    for (const { label, value } of c.values()) {
      const rest = await viaRest(c.rest(value));
      const graphql = await viaGraphQL(c.graphql(value));
      const context = `${c.operation} ${c.field} = ${label}: REST ${rest.status} ${rest.code} "${rest.message}" / GraphQL ${graphql.status} ${graphql.code} "${graphql.message}"`;
      expect(rest.status, context).toBeGreaterThanOrEqual(400);
      expect(rest.status, context).toBeLessThan(500);
      expect({ status: graphql.status, code: graphql.code }, context).toEqual({ status: rest.status, code: rest.code });
      // The refusal is this field's: both messages name it.
      const name = c.field.split('.').at(-1)!;
      expect(rest.message.toLowerCase(), context).toContain(name.toLowerCase());
      expect(graphql.message.toLowerCase(), context).toContain(name.toLowerCase());
    }
    expect(await footprint()).toEqual(before);
  });

  it('a mixed-case address with a wrong checksum is an address on both transports (letter case is not a checksum here)', async () => {
    const mixed = `0x${'aB'.repeat(20)}`;
    const rest = await viaRest({ id: 'getPrice', body: quoteBody({ recipient: mixed }) });
    const graphql = await viaGraphQL({
      query: 'query($input: QuoteInput!) { price(input: $input) { __typename } }',
      variables: { input: quoteBody({ recipient: mixed }) },
    });
    expect([rest.status, graphql.status], `${rest.message} / ${graphql.message}`).toEqual([200, 200]);
  });
});
