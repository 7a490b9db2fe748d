/**
 * The request history's search filters on a real gateway and devnet, one by one: `term`, the deposit / fill /
 * refund hashes, the currency filters, the `amountUsd` bounds and `requestType` on `GET /requests/v3`; v2's
 * `user` (sender or recipient) and `hash`; address checks; and the reference parameters the gateway cannot
 * apply, which must answer 400 naming them instead of an unfiltered page. Requests come from real quotes;
 * statuses and outgoing transactions are recorded through the store's repositories, as the solver records them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zeroAddress } from 'viem';
import { insertOutgoingTx, updateOutgoingTx } from '../../src/store/outgoingTxs.repository.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { A, B, C, fixtures, randomHash } from './fixtures.js';

let gateway: TestGateway;
const { token, account, quote, usdcBridge, move } = fixtures(() => gateway);

const q: Record<string, { requestId: string; quote: any }> = {};
const hashes = { deposit: randomHash(), fill: randomHash(), refundDeposit: randomHash(), refund: randomHash() };

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

  await move(q.bridge.requestId, { status: 'pending', inTxHash: hashes.deposit });
  await recordOutgoing(q.bridge.requestId, 'fill', B, hashes.fill);
  await move(q.bridge.requestId, { status: 'success', txHash: hashes.fill });
  await move(q.eth.requestId, { status: 'pending', inTxHash: hashes.refundDeposit });
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

  it('answers 400 naming a parameter it cannot apply, never an unfiltered page', async () => {
    for (const name of [
      'startBlock',
      'endBlock',
      'fillTimeMin',
      'fillTimeMax',
      'appFeesAmountUsdMin',
      'appFeesAmountUsdMax',
      'refundFailReason',
      'features',
      'filters',
      'privateChainsToInclude',
    ]) {
      const { status, body } = await v3({ [name]: '1' });
      expect(status, name).toBe(400);
      expect(body, name).toMatchObject({ errorCode: 'INVALID_INPUT', errorData: name });
    }
    const sorted = await v3({ sortBy: 'amountUsd' });
    expect(sorted.status).toBe(400);
    expect(sorted.body.message).toContain('sortBy');
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
