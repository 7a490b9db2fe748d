/**
 * Attacks on GraphQL inputs and streams, on the devnet and the real server:
 * - quote inputs larger than REST admits (`txs` over 100 calls, `appFees` over 20 fees, a 257-character
 *   `referrer`) are refused with `INVALID_INPUT` naming the field, and nothing is stored;
 * - an anonymous `requestUpdates` without request ids or a user (every user's requests) is refused, and the
 *   unfiltered stream of an API key shows only that key's requests.
 */
import { sql } from 'kysely';
import { zeroAddress } from 'viem';
import type { Client } from 'graphql-ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../../src/core/apiKeys/authenticate.js';
import { insertApiKey } from '../../src/store/apiKeys.repository.js';
import { insertRequest, updateRequestStatus } from '../../src/store/requests.repository.js';
import type { RequestStatus } from '../../src/records/requestStatus.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { post } from '../graphql/harness.js';
import { newRequest } from '../store/requestFixture.js';
import { collectSubscription, connectGraphQL, wsUrlOf } from '../events/clients.js';

let gateway: TestGateway;
const clients: Client[] = [];
const ownerKey = 'attack-owner-key';
const otherKey = 'attack-other-key';
beforeAll(async () => {
  gateway = await startTestGateway();
  const { db } = gateway.server.database;
  await insertApiKey(db, { id: 'attack-owner', name: 'Owner', keyHash: hashApiKey(ownerKey), now: Date.now() });
  await insertApiKey(db, { id: 'attack-other', name: 'Other', keyHash: hashApiKey(otherKey), now: Date.now() });
});
afterAll(async () => {
  await Promise.all(clients.splice(0).map(async (client) => client.dispose()));
  await gateway?.stop();
});

const storedRequests = async (): Promise<number> => {
  const { rows } = await sql<{ n: string | number }>`select count(*) as n from requests`.execute(
    gateway.server.database.db,
  );
  return Number(rows[0]!.n);
};

const QUOTE = 'query Quote($input: QuoteInput!) { quote(input: $input) { steps { requestId } } }';

describe('GraphQL quote inputs have the REST maxima', () => {
  it('refuses 101 txs, 21 appFees and a 257-character referrer with INVALID_INPUT naming the field, storing nothing', async () => {
    const [a, b] = gateway.devnet.descriptor.chains;
    const user = gateway.devnet.descriptor.accounts[0]!.address;
    const input = {
      user,
      originChainId: a!.chainId,
      destinationChainId: b!.chainId,
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: '1000000000000000',
      tradeType: 'EXACT_INPUT',
    };
    // Within the maxima the same input is quoted (and stored), so each refusal is about its one field.
    const fine = await post(gateway.url, QUOTE, { input: { ...input, referrer: 'r'.repeat(256) } });
    expect(fine.body.errors).toBeUndefined();
    const before = await storedRequests();

    const call = { to: user, value: '0', data: '0x' };
    const fee = { recipient: '0x000000000000000000000000000000000000bEEF', fee: 1 };
    const attacks = {
      txs: { ...input, txs: Array.from({ length: 101 }, () => call) },
      appFees: { ...input, appFees: Array.from({ length: 21 }, () => fee) },
      referrer: { ...input, referrer: 'r'.repeat(257) },
    };
    for (const [field, attack] of Object.entries(attacks)) {
      const { status, body } = await post(gateway.url, QUOTE, { input: attack });
      expect(status, field).toBeLessThan(500);
      expect(body.data?.quote ?? null, `${field} was quoted`).toBeNull();
      expect(body.errors?.[0]?.extensions, field).toMatchObject({
        code: 'INVALID_INPUT',
        status: 400,
        errorData: field,
      });
      expect(body.errors?.[0]?.message, field).toContain(field);
    }
    expect(await storedRequests()).toBe(before);
  });
});

const UPDATES =
  'subscription($filter: RequestUpdatesFilterInput!) { requestUpdates(filter: $filter) { requestId status } }';

async function storedRequest(apiKeyId: string | null) {
  const { db } = gateway.server.database;
  const request = await insertRequest(db, newRequest({ apiKeyId, createdAt: Date.now() }));
  return {
    id: request.id,
    move: (status: RequestStatus) => updateRequestStatus(db, request.id, { status, now: Date.now() }),
  };
}

describe('requestUpdates without ids or a user', () => {
  const graphql = (params?: Record<string, unknown>): Client => {
    const client = connectGraphQL(wsUrlOf(gateway.url, '/graphql'), params);
    clients.push(client);
    return client;
  };

  it('is refused without an API key (no ids, no user; chain and status filters are not enough)', async () => {
    const anonymous = graphql();
    for (const filter of [
      {},
      { originChainId: gateway.devnet.descriptor.chains[0]!.chainId },
      { status: ['PENDING'] },
    ]) {
      const denied = collectSubscription(anonymous, UPDATES, { filter });
      await denied.done;
      expect(denied.results, JSON.stringify(filter)).toHaveLength(1);
      expect(denied.results[0]!.data ?? null).toBeNull();
      expect(denied.results[0]!.errors, JSON.stringify(filter)).toMatchObject([
        { extensions: { code: 'UNAUTHORIZED' } },
      ]);
    }
  });

  it("with an API key shows only that key's requests", async () => {
    const owner = collectSubscription(graphql({ apiKey: ownerKey }), UPDATES, { filter: {} });
    const other = collectSubscription(graphql({ apiKey: otherKey }), UPDATES, { filter: {} });
    const ownRequest = await storedRequest('attack-owner');
    const othersRequest = await storedRequest('attack-other');
    const anonymousRequest = await storedRequest(null);
    const seen = (stream: typeof owner) => stream.results.map((r) => r.data?.requestUpdates);

    // Both streams are live once each has seen a change of its own key's request (the subscribe is asynchronous).
    const warmOwner = await storedRequest('attack-owner');
    const warmOther = await storedRequest('attack-other');
    await expect
      .poll(
        async () => {
          if (!seen(owner).some((u) => u?.requestId === warmOwner.id)) await warmOwner.move('pending');
          if (!seen(other).some((u) => u?.requestId === warmOther.id)) await warmOther.move('pending');
          return (
            seen(owner).some((u) => u?.requestId === warmOwner.id) &&
            seen(other).some((u) => u?.requestId === warmOther.id)
          );
        },
        { timeout: 15_000, interval: 200 },
      )
      .toBe(true);

    // The other key's and the anonymous request change first; the owner's own change last. Events arrive in
    // order, so once the owner has its own change, any other it was going to be sent has arrived too.
    await othersRequest.move('pending');
    await anonymousRequest.move('pending');
    await ownRequest.move('pending');
    await othersRequest.move('submitted');
    await expect.poll(() => seen(owner).some((u) => u?.requestId === ownRequest.id)).toBe(true);
    await expect
      .poll(() => seen(other).some((u) => u?.requestId === othersRequest.id && u?.status === 'SUBMITTED'))
      .toBe(true);

    const ownerIds = new Set(seen(owner).map((u) => u?.requestId));
    const otherIds = new Set(seen(other).map((u) => u?.requestId));
    expect(ownerIds).toEqual(new Set([warmOwner.id, ownRequest.id]));
    expect(otherIds).toEqual(new Set([warmOther.id, othersRequest.id]));
    expect(owner.results.every((r) => r.errors === undefined)).toBe(true);
  });
});
