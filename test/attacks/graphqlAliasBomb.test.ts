/**
 * Attack: one HTTP request carrying hundreds of aliased `quote` fields (each would store a request and read the
 * chain), and a query nested as deep as the schema's cycles allow. Both are refused whole by the document limits
 * before any resolver runs: no request row is stored.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zeroAddress } from 'viem';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { post } from '../graphql/harness.js';

let gateway: TestGateway;
beforeAll(async () => {
  gateway = await startTestGateway();
});
afterAll(async () => {
  await gateway?.stop();
});

const storedRequests = async (): Promise<number> => {
  const { rows } = await sql<{ n: string | number }>`select count(*) as n from requests`.execute(
    gateway.server.database.db,
  );
  return Number(rows[0]!.n);
};

describe('GraphQL document limits', () => {
  it('refuses 300 aliased quote fields whole, before any quote runs', async () => {
    const [a, b] = gateway.devnet.descriptor.chains;
    const user = gateway.devnet.descriptor.accounts[0]!.address;
    const quoteInput = {
      user,
      originChainId: a!.chainId,
      destinationChainId: b!.chainId,
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: '1000000000000000',
      tradeType: 'EXACT_INPUT',
    };
    // One real quote works and stores its request, so the refusal below is about the document's shape.
    const single = await post(
      gateway.url,
      'query One($input: QuoteInput!) { quote(input: $input) { steps { requestId } } }',
      { input: quoteInput },
    );
    expect(single.body.errors).toBeUndefined();
    const before = await storedRequests();
    expect(before).toBe(1);

    // The input travels once, as a variable, so the document stays small: eleven tokens per alias, under the token limit.
    const bomb = `query Bomb($input: QuoteInput!) { ${Array.from({ length: 300 }, (_, i) => `q${i}: quote(input: $input) { __typename }`).join(' ')} }`;
    const { body } = await post(gateway.url, bomb, { input: quoteInput });
    expect(body.data ?? null).toBeNull();
    expect(body.errors?.[0]?.message).toMatch(/alias/i);
    expect(await storedRequests()).toBe(before);
  });

  it('refuses a query nested 1,000 and 10,000 levels deep, as a limit and not as a crash', async () => {
    // The schema has no cycle, so no deep query is valid; what is attacked is the parser and validator. A
    // thousand levels must be refused as too deep; ten thousand overflowed the validator's stack (a masked
    // `UNKNOWN_ERROR` logged as a server fault, at the attacker's will) before the token limit.
    const nested = (levels: number) => `{ chains ${'{ currency '.repeat(levels)} id ${'} '.repeat(levels)} }`;
    const thousand = await post(gateway.url, nested(1_000));
    expect(thousand.body.data ?? null).toBeNull();
    expect(thousand.body.errors?.some((error) => /depth/i.test(error.message))).toBe(true);
    const tenThousand = await post(gateway.url, nested(10_000));
    expect(tenThousand.body.data ?? null).toBeNull();
    expect(tenThousand.body.errors?.map((error) => error.extensions?.['code'])).not.toContain('UNKNOWN_ERROR');
    expect(tenThousand.body.errors?.[0]?.message).toMatch(/token limit/i);
    // Still serving.
    expect((await post(gateway.url, '{ chains { id } }')).body.errors).toBeUndefined();
  });
});
