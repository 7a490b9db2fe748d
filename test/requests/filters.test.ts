/**
 * The request history's search filters on a real gateway and devnet, one by one: `term`, the deposit / fill /
 * refund hashes, the currency filters, the `amountUsd` bounds and `requestType` on `GET /requests/v3`; v2's
 * `user` (sender or recipient) and `hash`; address checks; and the JSON filter groups (`filters`), with the
 * malformed or oversized ones answering 400 naming them instead of an unfiltered page. Requests come from real quotes;
 * statuses and outgoing transactions are recorded through the store's repositories, as the solver records them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zeroAddress } from 'viem';
import { insertDeposit } from '../../src/store/deposits.repository.js';
import { insertOutgoingTx, updateOutgoingTx } from '../../src/store/outgoingTxs.repository.js';
import { claimDepositForRequest, type UpdateRequestStatusParameters } from '../../src/store/requests.repository.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { A, B, C, fixtures, randomHash } from './fixtures.js';

let gateway: TestGateway;
const { token, account, quote, usdcBridge, move, graphql } = fixtures(() => gateway);

const q: Record<string, { requestId: string; quote: any }> = {};
const hashes = { deposit: randomHash(), fill: randomHash(), refundDeposit: randomHash(), refund: randomHash() };

/**
 * A deposit of the request seen at `seenAt` in `block` of chain A, claimed for it as the watcher does: the claim's
 * statement records the deposit's block on the request.
 */
async function claim(
  requestId: string,
  block: bigint,
  seenAt: number,
  params: Omit<UpdateRequestStatusParameters, 'now'>,
): Promise<void> {
  const { db } = gateway.server.database;
  const { deposit } = await insertDeposit(db, {
    chainId: A,
    txHash: params.inTxHash ?? randomHash(),
    logIndex: 0,
    blockNumber: block,
    blockHash: randomHash(),
    requestId,
    depositor: account(0),
    token: zeroAddress,
    amount: 1n,
    status: 'confirmed',
    now: seenAt,
  });
  const { moved } = await db
    .transaction()
    .execute((trx) => claimDepositForRequest(trx, deposit.id, requestId, { ...params, now: seenAt }));
  expect(moved).not.toBeNull();
}

/** Records an outgoing transaction as the solver's sender does: prepared, then broadcast with its hash. */
async function recordOutgoing(requestId: string, kind: 'fill' | 'refund', chainId: number, hash: string) {
  const { db } = gateway.server.database;
  const tx = await insertOutgoingTx(db, { chainId, requestId, kind, signer: account(1), payload: {}, now: Date.now() });
  await updateOutgoingTx(db, tx.id, { status: 'broadcast', hash, now: Date.now() });
}

beforeAll(async () => {
  gateway = await startTestGateway();
  // 10 USDC A -> B by account 0 (a bridge, filled).
  q.bridge = await quote(usdcBridge(0));
  // 0.01 ETH A -> C by account 1 to account 4 (a bridge worth about 30 USD, refunded).
  q.eth = await quote(
    usdcBridge(1, {
      destinationChainId: C,
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: '10000000000000000',
      recipient: account(3),
    }),
  );
  // 10 USDC on A into WETH on B by account 2 (a cross-chain swap).
  q.swap = await quote(usdcBridge(2, { destinationCurrency: token(B, 'weth') }));
  // 10 USDC on A into WETH on A by account 2 (a same-chain swap).
  q.local = await quote(usdcBridge(2, { destinationChainId: A, destinationCurrency: token(A, 'weth') }));

  // The bridge's deposit is seen 12.5 s before its fill succeeds, in block 1,000 of A.
  const filledAt = Date.now();
  await claim(q.bridge.requestId, 1000n, filledAt - 12_500, { status: 'pending', inTxHash: hashes.deposit });
  await recordOutgoing(q.bridge.requestId, 'fill', B, hashes.fill);
  await move(q.bridge.requestId, { status: 'success', txHash: hashes.fill, now: filledAt });
  await claim(q.eth.requestId, 2000n, Date.now(), { status: 'pending', inTxHash: hashes.refundDeposit });
  await recordOutgoing(q.eth.requestId, 'refund', A, hashes.refund);
  await move(q.eth.requestId, { status: 'refund', failReason: 'SOLVER_BALANCE_TOO_LOW', txHash: hashes.refund });
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

const idOf = (name: string) => q[name]!.requestId;
const v3 = (query: Record<string, string>) => call(gateway.url, 'getRequests', { query: { limit: '50', ...query } });
const v2 = (query: Record<string, string>) => call(gateway.url, 'getRequestsV2', { query: { limit: '50', ...query } });

async function expectIds(list: typeof v3, query: Record<string, string>, names: string[]) {
  const { status, body } = await list(query);
  expect(status, JSON.stringify(body)).toBe(200);
  expect(new Set(body.requests.map((r: any) => r.id)), JSON.stringify(query)).toEqual(new Set(names.map(idOf)));
}

describe('GET /requests/v3 search filters', () => {
  it('term finds a request by id, order id, wallet or any recorded hash, in any letter case', async () => {
    await expectIds(v3, { term: idOf('swap').toUpperCase().replace('0X', '0x') }, ['swap']);
    await expectIds(v3, { term: q.local!.quote.protocol.v2.orderId }, ['local']);
    await expectIds(v3, { term: account(3) }, ['eth']);
    await expectIds(v3, { term: account(2).toLowerCase() }, ['swap', 'local']);
    await expectIds(v3, { term: hashes.fill }, ['bridge']);
    await expectIds(v3, { term: hashes.refundDeposit }, ['eth']);
    await expectIds(v3, { term: 'nothing-like-this' }, []);
  });

  it('depositTxHash, fillTxHash and refundTxHash each match only their own kind of transaction', async () => {
    await expectIds(v3, { depositTxHash: hashes.deposit }, ['bridge']);
    await expectIds(v3, { depositTxHash: hashes.fill }, []);
    await expectIds(v3, { fillTxHash: hashes.fill }, ['bridge']);
    await expectIds(v3, { fillTxHash: hashes.refund }, []);
    await expectIds(v3, { refundTxHash: hashes.refund }, ['eth']);
    await expectIds(v3, { refundTxHash: hashes.fill }, []);
    const bad = await v3({ fillTxHash: '0x1234' });
    expect(bad.status).toBe(400);
    expect(bad.body.errorCode).toBe('INVALID_INPUT');
    expect(bad.body.message).toContain('fillTxHash');
  });

  it('currency filters: chain, address (zero = native) and symbol on either side', async () => {
    await expectIds(v3, { currencyInChainId: String(A) }, ['bridge', 'eth', 'swap', 'local']);
    await expectIds(v3, { currencyOutChainId: String(C) }, ['eth']);
    await expectIds(v3, { currencyOutChainId: String(A) }, ['local']);
    await expectIds(v3, { currencyInAddress: zeroAddress }, ['eth']);
    await expectIds(v3, { currencyInAddress: token(A, 'usdc').toLowerCase() }, ['bridge', 'swap', 'local']);
    // The devnet deploys WETH at one address on every chain: an address matches on any chain, unless a chain is given.
    await expectIds(
      v3,
      { currencyOutAddress: token(B, 'weth') },
      token(A, 'weth') === token(B, 'weth') ? ['swap', 'local'] : ['swap'],
    );
    await expectIds(v3, { currencyOutAddress: token(B, 'weth'), currencyOutChainId: String(B) }, ['swap']);
    await expectIds(v3, { currencyInSymbol: 'usdc' }, ['bridge', 'swap', 'local']);
    await expectIds(v3, { currencyOutSymbol: 'WETH' }, ['swap', 'local']);
    await expectIds(v3, { currencyOutSymbol: 'NOPE' }, []);
    const bad = await v3({ currencyInAddress: 'usdc' });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ errorCode: 'INVALID_ADDRESS', errorData: 'currencyInAddress' });
  });

  it('amountUsdMin / amountUsdMax bound the input value at quote time, inclusive', async () => {
    // The USDC requests are worth 10 USD, the ETH one about 30.
    await expectIds(v3, { amountUsdMin: '20' }, ['eth']);
    await expectIds(v3, { amountUsdMax: '20' }, ['bridge', 'swap', 'local']);
    await expectIds(v3, { amountUsdMin: '10', amountUsdMax: '10' }, ['bridge', 'swap', 'local']);
    await expectIds(v3, { amountUsdMin: '10.000001', amountUsdMax: '20' }, []);
    expect((await v3({ amountUsdMin: '20', amountUsdMax: '10' })).body).toMatchObject({
      errorCode: 'INVALID_INPUT',
      errorData: 'amountUsdMin',
    });
  });

  it('requestType, case-insensitive, splits swaps into same-chain and cross-chain', async () => {
    await expectIds(v3, { requestType: 'Bridge' }, ['bridge', 'eth']);
    await expectIds(v3, { requestType: 'crosschain swap' }, ['swap']);
    await expectIds(v3, { requestType: 'Same-chain Swap' }, ['local']);
    await expectIds(v3, { requestType: 'Call' }, []);
    expect((await v3({ requestType: 'Teleport' })).body).toMatchObject({
      errorCode: 'INVALID_INPUT',
      errorData: 'requestType',
    });
  });

  it('filters combine with AND', async () => {
    await expectIds(v3, { currencyInSymbol: 'usdc', requestType: 'Bridge' }, ['bridge']);
    await expectIds(v3, { user: account(2), currencyOutChainId: String(B) }, ['swap']);
  });

  it('filters: groups OR-ed, keys AND-ed, not: negates, arrays are any-of, null is empty', async () => {
    const groups = (value: unknown) => ({ filters: JSON.stringify(value) });
    await expectIds(v3, groups([{ user: account(0) }, { user: account(1) }]), ['bridge', 'eth']);
    await expectIds(v3, groups([{ user: [account(0), account(1).toUpperCase().replace('0X', '0x')] }]), [
      'bridge',
      'eth',
    ]);
    await expectIds(v3, groups([{ 'not:status': 'waiting' }]), ['bridge', 'eth']);
    await expectIds(v3, groups([{ 'not:status': ['waiting', 'success'] }]), ['eth']);
    await expectIds(v3, groups([{ user: account(2), requestType: 'Same-chain Swap' }, { status: 'success' }]), [
      'local',
      'bridge',
    ]);
    await expectIds(v3, groups([{ currencyOutSymbol: 'weth' }, { recipient: account(3) }]), ['swap', 'local', 'eth']);
    await expectIds(v3, groups([{ chainId: [C] }]), ['eth']);
    await expectIds(v3, groups([{ failReason: 'SOLVER_BALANCE_TOO_LOW' }]), ['eth']);
    await expectIds(v3, groups([{ 'not:failReason': 'N/A' }]), ['eth']);
    await expectIds(v3, groups([{ depositAddress: null }]), ['bridge', 'eth', 'swap', 'local']);
    await expectIds(v3, groups([{ 'not:depositAddress': null }]), []);
    // AND-ed with the top-level parameters.
    await expectIds(v3, { ...groups([{ user: account(0) }, { user: account(2) }]), currencyOutChainId: String(B) }, [
      'bridge',
      'swap',
    ]);
    await expectIds(v3, { ...groups([{ 'not:user': account(0) }]), status: 'waiting' }, ['swap', 'local']);
  });

  it('filters: pages stay exact with continuation', async () => {
    const filters = JSON.stringify([{ user: account(2) }, { status: ['success', 'refund'] }]);
    const seen: string[] = [];
    let continuation: string | undefined;
    do {
      const { status, body } = await v3({
        filters,
        limit: '1',
        ...(continuation === undefined ? {} : { continuation }),
      });
      expect(status, JSON.stringify(body)).toBe(200);
      seen.push(...body.requests.map((r: any) => r.id));
      continuation = body.continuation;
    } while (continuation !== undefined);
    expect(seen).toHaveLength(4);
    expect(new Set(seen)).toEqual(new Set(['bridge', 'eth', 'swap', 'local'].map(idOf)));
  });

  it.each<[string, string]>([
    ['not JSON', '[{"user":'],
    ['not an array', '{"user":"0x0000000000000000000000000000000000000001"}'],
    ['an empty array', '[]'],
    ['a group that is not an object', '["success"]'],
    ['an empty group', '[{}]'],
    ['an unknown key', '[{"colour":"red"}]'],
    ['a range key in a group', '[{"amountUsdMin":10}]'],
    ['features in a group', '[{"features":"app_fees"}]'],
    ['a bad value', '[{"user":"alice"}]'],
    ['an unknown status', '[{"status":"lost"}]'],
    ['null mixed with values', '[{"depositAddress":[null,"0x0000000000000000000000000000000000000001"]}]'],
    ['too many groups', JSON.stringify(Array.from({ length: 11 }, () => ({ status: 'success' })))],
    ['too many values in an array', JSON.stringify([{ originChainId: Array.from({ length: 21 }, (_, i) => i + 1) }])],
    [
      'too many values in all',
      JSON.stringify(
        Array.from({ length: 10 }, () => ({ originChainId: Array.from({ length: 11 }, (_, i) => i + 1) })),
      ),
    ],
  ])('filters: %s answers 400 INVALID_INPUT naming filters', async (_name, filters) => {
    const { status, body } = await v3({ filters });
    expect(status, JSON.stringify(body)).toBe(400);
    expect(body).toMatchObject({ errorCode: 'INVALID_INPUT', errorData: 'filters' });
  });

  it('refuses a user, recipient or deposit address that is not an address (INVALID_ADDRESS)', async () => {
    for (const name of ['user', 'recipient', 'depositAddress']) {
      const { status, body } = await v3({ [name]: 'alice' });
      expect(status, name).toBe(400);
      expect(body, name).toMatchObject({ errorCode: 'INVALID_ADDRESS', errorData: name });
    }
  });
});

describe('GET /requests/v2 filters', () => {
  it('user matches the sender or the recipient', async () => {
    await expectIds(v2, { user: account(3) }, ['eth']);
    await expectIds(v2, { user: account(1) }, ['eth']);
    await expectIds(v2, { user: account(0) }, ['bridge']);
  });

  it('hash matches any recorded transaction hash', async () => {
    await expectIds(v2, { hash: hashes.deposit }, ['bridge']);
    await expectIds(v2, { hash: hashes.refund }, ['eth']);
    await expectIds(v2, { hash: randomHash() }, []);
  });

  it('refuses a user that is not an address (INVALID_ADDRESS)', async () => {
    const { status, body } = await v2({ user: 'alice' });
    expect(status).toBe(400);
    expect(body).toMatchObject({ errorCode: 'INVALID_ADDRESS', errorData: 'user' });
  });
});

describe('GET /requests/v3 term over the partial search indexes', () => {
  it('finds a request by a refund address or a sender other than the user, as by the user', async () => {
    // Account 3 (the eth bridge's recipient) quotes with refunds to another address; the deposit came from a third.
    const refundTo = '0x00000000000000000000000000000000000a11ce';
    const sender = '0x0000000000000000000000000000000000000b0b';
    q.ownSender = await quote(usdcBridge(3, { refundTo }));
    await gateway.server.database.db
      .updateTable('requests')
      .set({ sender })
      .where('id', '=', q.ownSender.requestId)
      .execute();
    await expectIds(v3, { term: refundTo }, ['ownSender']);
    await expectIds(v3, { term: sender.toUpperCase().replace('0X', '0x') }, ['ownSender']);
    await expectIds(v3, { term: account(3) }, ['eth', 'ownSender']);
  });
});

describe('GET /requests/v3 filters on values stored per request (blocks, fill time, app fees, refund failures)', () => {
  beforeAll(async () => {
    // The cross-chain swap's deposit (block 3,000) is refunded by hand: its refund leg failed.
    await claim(idOf('swap'), 3000n, Date.now(), { status: 'pending', inTxHash: randomHash() });
    await move(idOf('swap'), {
      status: 'failure',
      failReason: 'SOLVER_BALANCE_TOO_LOW',
      refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND',
    });
    // 10 USDC with a 1% app fee (0.10 USD) and 10 USDC with a 2.5% one (0.25 USD), both by account 0.
    q.appFee = await quote(usdcBridge(0, { appFees: [{ recipient: account(3), fee: '100' }] }));
    q.bigAppFee = await quote(usdcBridge(0, { appFees: [{ recipient: account(3), fee: '250' }] }));
  }, 60_000);

  it('startBlock / endBlock bound the claimed deposit’s origin block, inclusive (v3 and v2)', async () => {
    await expectIds(v3, { startBlock: '1000' }, ['bridge', 'eth', 'swap']);
    await expectIds(v3, { startBlock: '1001' }, ['eth', 'swap']);
    await expectIds(v3, { endBlock: '2000' }, ['bridge', 'eth']);
    await expectIds(v3, { startBlock: '2000', endBlock: '2000' }, ['eth']);
    await expectIds(v3, { startBlock: '2000', endBlock: '2999', originChainId: String(A) }, ['eth']);
    await expectIds(v2, { startBlock: '1500' }, ['eth', 'swap']);
    await expectIds(v3, { endBlock: '999' }, []);
  });

  it('fillTimeMin / fillTimeMax bound the seconds from the deposit’s sighting to the fill, filled requests only', async () => {
    await expectIds(v3, { fillTimeMin: '12' }, ['bridge']);
    await expectIds(v3, { fillTimeMin: '12.5', fillTimeMax: '12.5' }, ['bridge']);
    await expectIds(v3, { fillTimeMax: '12.4' }, []);
    await expectIds(v3, { fillTimeMin: '13' }, []);
    await expectIds(v3, { fillTimeMin: '0' }, ['bridge']);
  });

  it('appFeesAmountUsdMin / appFeesAmountUsdMax bound the app fees’ USD value, requests with app fees only', async () => {
    await expectIds(v3, { appFeesAmountUsdMin: '0' }, ['appFee', 'bigAppFee']);
    await expectIds(v3, { appFeesAmountUsdMin: '0.2' }, ['bigAppFee']);
    await expectIds(v3, { appFeesAmountUsdMax: '0.1' }, ['appFee']);
    await expectIds(v3, { appFeesAmountUsdMin: '0.1', appFeesAmountUsdMax: '0.25' }, ['appFee', 'bigAppFee']);
    await expectIds(v3, { appFeesAmountUsdMin: '1' }, []);
  });

  it('refundFailReason matches the recorded refund failure; N/A the requests whose refund did not fail', async () => {
    await expectIds(v3, { refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND' }, ['swap']);
    await expectIds(v3, { refundFailReason: 'MANUAL_REFUND_REQUIRED' }, []);
    const { body } = await v3({ refundFailReason: 'N/A' });
    const ids = body.requests.map((r: any) => r.id);
    expect(ids).toContain(idOf('eth'));
    expect(ids).not.toContain(idOf('swap'));
    // The record's wire shape: v3 sends the reason itself, null when none.
    const swap = (await v3({ id: idOf('swap') })).body.requests[0];
    expect(swap.data).toMatchObject({
      failReason: 'SOLVER_BALANCE_TOO_LOW',
      refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND',
    });
  });

  it('features matches any of the listed features, as each record’s `features` lists them', async () => {
    await expectIds(v3, { features: 'app_fees' }, ['appFee', 'bigAppFee']);
    await expectIds(v3, { features: 'fast_fill,app_fees' }, ['appFee', 'bigAppFee']);
    // No request of this history has a gas top-up (`test/sdk/relaySdkGasTopup.test.ts` lists one).
    await expectIds(v3, { features: 'gas_top_up' }, []);
    const { body } = await v3({ features: 'app_fees' });
    for (const record of body.requests) expect(record.features).toContain('app_fees');
  });

  it('sortBy=amountUsd orders by the input’s USD value (default ascending), pages without repeats or gaps', async () => {
    const usd = (record: any) => Number(record.data.route.quoted.origin.inputCurrency.amountUsd);
    const ascending = (await v3({ sortBy: 'amountUsd' })).body.requests;
    expect(ascending.length).toBeGreaterThan(3);
    const values = ascending.map(usd);
    expect(values).toEqual([...values].sort((a, b) => a - b));
    expect(ascending.at(-1).id).toBe(idOf('eth'));
    const descending = (await v3({ sortBy: 'amountUsd', sortDirection: 'desc' })).body.requests;
    expect(descending[0].id).toBe(idOf('eth'));
    const paged: string[] = [];
    let continuation: string | undefined;
    do {
      const page = await v3({
        sortBy: 'amountUsd',
        limit: '2',
        ...(continuation === undefined ? {} : { continuation }),
      });
      expect(page.status).toBe(200);
      paged.push(...page.body.requests.map((r: any) => r.id));
      continuation = page.body.continuation;
    } while (continuation !== undefined);
    expect(paged).toEqual(ascending.map((r: any) => r.id));
    // A continuation of another sort is refused.
    const byTime = await v3({ limit: '1' });
    const crossed = await v3({ sortBy: 'amountUsd', continuation: byTime.body.continuation });
    expect(crossed.status).toBe(400);
    expect(crossed.body.errorCode).toBe('INVALID_INPUT');
  });

  it('privateChainsToInclude (the gateway has none) changes nothing; a malformed list is refused', async () => {
    const all = (await v3({})).body.requests.map((r: any) => r.id);
    const listed = await v3({ privateChainsToInclude: '123e4567-e89b-12d3-a456-426614174000' });
    expect(listed.body.requests.map((r: any) => r.id)).toEqual(all);
    expect((await v3({ privateChainsToInclude: 'mainnet' })).body).toMatchObject({
      errorCode: 'INVALID_INPUT',
      errorData: 'privateChainsToInclude',
    });
  });

  it('bad values answer 400 INVALID_INPUT naming the parameter', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ startBlock: '-1' }, 'startBlock'],
      [{ endBlock: 'latest' }, 'endBlock'],
      [{ startBlock: '10', endBlock: '9' }, 'startBlock'],
      [{ fillTimeMin: '-5' }, 'fillTimeMin'],
      [{ fillTimeMin: '20', fillTimeMax: '10' }, 'fillTimeMin'],
      [{ appFeesAmountUsdMax: 'cheap' }, 'appFeesAmountUsdMax'],
      [{ appFeesAmountUsdMin: '2', appFeesAmountUsdMax: '1' }, 'appFeesAmountUsdMin'],
      [{ refundFailReason: 'LOST' }, 'refundFailReason'],
      [{ features: 'teleport' }, 'features'],
      [{ features: 'app_fees,teleport' }, 'features'],
      [{ sortBy: 'price' }, 'sortBy'],
    ];
    for (const [query, name] of cases) {
      const { status, body } = await v3(query);
      expect(status, JSON.stringify(query)).toBe(400);
      expect(body.errorCode, JSON.stringify(query)).toBe('INVALID_INPUT');
      expect(`${body.errorData ?? ''} ${body.message}`, JSON.stringify(query)).toContain(name);
    }
  });

  it('GraphQL `requests` takes the same filters and sort', async () => {
    const query = `query($filter: RequestFilterInput, $sortBy: RequestSortBy, $sortDirection: SortDirection) {
      requests(filter: $filter, sortBy: $sortBy, sortDirection: $sortDirection, first: 50) { edges { node { id } } }
    }`;
    const ids = async (variables: Record<string, unknown>) => {
      const { data, errors } = await graphql(query, variables);
      expect(errors, JSON.stringify(errors)).toBeUndefined();
      return data.requests.edges.map((edge: any) => edge.node.id);
    };
    expect(new Set(await ids({ filter: { startBlock: 1001 } }))).toEqual(new Set([idOf('eth'), idOf('swap')]));
    expect(await ids({ filter: { fillTimeMin: 12, fillTimeMax: 13 } })).toEqual([idOf('bridge')]);
    expect(new Set(await ids({ filter: { appFeesAmountUsdMin: 0.2 } }))).toEqual(new Set([idOf('bigAppFee')]));
    expect(await ids({ filter: { refundFailReason: 'AMOUNT_TOO_LOW_TO_REFUND' } })).toEqual([idOf('swap')]);
    expect(new Set(await ids({ filter: { features: ['APP_FEES'] } }))).toEqual(
      new Set([idOf('appFee'), idOf('bigAppFee')]),
    );
    expect(await ids({ filter: { amountUsdMin: 20 } })).toEqual([idOf('eth')]);
    expect((await ids({ sortBy: 'AMOUNT_USD', sortDirection: 'DESC' }))[0]).toBe(idOf('eth'));
    const bad = await graphql(query, { filter: { fillTimeMin: 5, fillTimeMax: 1 } });
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT' });
    const badReason = await graphql(query, { filter: { refundFailReason: 'LOST' } });
    expect(badReason.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT' });
  });
});
