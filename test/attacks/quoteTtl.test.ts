/**
 * Attack: a quote with a client-chosen `ttl` far in the future is a free option on the solver's inventory (deposit
 * only if the market moved your way), and a negative or zero `ttl` makes a request that is expired when created.
 * The attacker asks for both on REST and on GraphQL; every such quote is refused `INVALID_INPUT` and stores
 * nothing, while a `ttl` within the configured cap (`quote.maxTtlSeconds`, default 3600) is honoured.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseEther, zeroAddress } from 'viem';
import { post } from '../graphql/harness.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';

const A = 31337;
const B = 31338;

let gateway: TestGateway;

beforeAll(async () => {
  gateway = await startTestGateway();
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

const body = (ttl: number) => ({
  user: gateway.devnet.descriptor.accounts[0]!.address,
  originChainId: A,
  destinationChainId: B,
  originCurrency: zeroAddress,
  destinationCurrency: zeroAddress,
  amount: parseEther('0.01').toString(),
  tradeType: 'EXACT_INPUT',
  ttl,
});

async function countRequests(): Promise<number> {
  const { db } = gateway.server.database;
  const row = await db.selectFrom('requests').select(db.fn.countAll().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

const QUOTE = 'query Quote($input: QuoteInput!) { quote(input: $input) { steps { requestId } } }';

describe('a client-chosen quote ttl is capped', () => {
  it('REST: a day, zero and a negative ttl are INVALID_INPUT and store nothing', async () => {
    const before = await countRequests();
    for (const ttl of [86_400, 3_601, 0, -1]) {
      const { status, body: answer } = await call(gateway.url, 'getQuote', { body: body(ttl) });
      expect(status, `ttl ${ttl}: ${JSON.stringify(answer)}`).toBe(400);
      expect(answer).toMatchObject({ errorCode: 'INVALID_INPUT' });
    }
    expect(await countRequests()).toBe(before);
  });

  it('GraphQL: the largest Int, a day, zero and a negative ttl are INVALID_INPUT and store nothing', async () => {
    const before = await countRequests();
    for (const ttl of [2_147_483_647, 86_400, 0, -600]) {
      const { body: answer } = await post(gateway.url, QUOTE, { input: body(ttl) });
      expect(answer.data?.quote ?? null, `ttl ${ttl} was quoted`).toBeNull();
      expect(answer.errors?.[0]?.extensions, `ttl ${ttl}`).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
    }
    expect(await countRequests()).toBe(before);
  });

  it('a ttl within the cap sets the deadline of the request', async () => {
    const { status, body: answer } = await call(gateway.url, 'getQuote', { body: body(3_600) });
    expect(status).toBe(200);
    const requestId = (answer as { steps: Array<{ requestId: string }> }).steps.at(-1)!.requestId;
    const { db } = gateway.server.database;
    const row = await db
      .selectFrom('requests')
      .select(['expires_at', 'created_at'])
      .where('id', '=', requestId.toLowerCase())
      .executeTakeFirstOrThrow();
    const ttlMs = Number(row.expires_at) - Number(row.created_at);
    expect(ttlMs).toBeGreaterThan(3_598_000);
    expect(ttlMs).toBeLessThanOrEqual(3_600_000);
  });
});
