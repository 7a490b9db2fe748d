/**
 * App fees and inventory over GraphQL, on the devnet and over real HTTP (`POST /graphql` of a running gateway):
 * a wallet's balance after two paid requests with a 1% app fee, the `claimAppFees` mutation and `submitPermit`
 * (kind `CLAIM`) pay it out on the other chain (the same core as REST: the REST balance moves too), the wallet's
 * claims, a refused claim with nothing left; `inventory` under the REST admin check, with the reconciliation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { erc20Abi, getAddress, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';

const adminToken = 'graphql-admin-token-0123456789abcdef';
const appAccount = privateKeyToAccount(generatePrivateKey());
const recipient = '0x00000000000000000000000000000000c1a1e003' as Address;

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;

interface GraphQLAnswer {
  data: any;
  errors?: Array<{ message: string; path?: string[]; extensions?: Record<string, unknown> }>;
}

async function graphql(
  query: string,
  variables: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<GraphQLAnswer> {
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ query, variables }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as GraphQLAnswer;
}

const balancesQuery = `query ($wallet: Address!) {
  appFeeBalances(wallet: $wallet) {
    balances { currency { chainId symbol } amount amountUsd }
    totalBalanceUsd outstandingFastFillBalanceUsd availableBalanceUsd
  }
}`;
const claimMutation = `mutation ($input: ClaimAppFeesInput!) {
  claimAppFees(input: $input) {
    steps { id kind requestId items { data { ... on SignatureData { sign { signatureKind message } post { endpoint body } } } } }
  }
}`;

beforeAll(async () => {
  gateway = await startTestGateway({ adminToken });
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  const [alice] = gateway.devnet.descriptor.accounts as [DevnetAccount];
  for (let i = 0; i < 2; i++) {
    const quote = await requestQuote(gateway, alice, {
      originCurrency: tokenOf(chainA, 'USDC'),
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: '25000000',
      appFees: [{ recipient: appAccount.address, fee: '100' }],
    });
    await executeSteps(gateway, quote.steps, alice);
    await waitForStatus(gateway, quote.steps.at(-1)!.requestId, ['success']);
  }
  await gateway.server.solver!.solver.idle();
});
afterAll(async () => {
  await gateway?.stop();
});

describe('app fees over GraphQL', () => {
  it('reads a wallet’s balance: 1% of the two inputs’ USD value', async () => {
    const { data, errors } = await graphql(balancesQuery, { wallet: appAccount.address });
    expect(errors).toBeUndefined();
    expect(data.appFeeBalances).toEqual({
      balances: [{ currency: { chainId: chainA.chainId, symbol: 'USDC' }, amount: '500000', amountUsd: '0.5' }],
      totalBalanceUsd: '0.5',
      outstandingFastFillBalanceUsd: '0',
      availableBalanceUsd: '0.5',
    });
  });

  it('claims through claimAppFees and submitPermit; the payout is mined and the balance is zero', async () => {
    const usdcB = tokenOf(chainB, 'USDC');
    const started = await graphql(claimMutation, {
      input: { wallet: appAccount.address, chainId: chainB.chainId, currency: usdcB, recipient },
    });
    expect(started.errors).toBeUndefined();
    const [step] = started.data.claimAppFees.steps;
    expect(step).toMatchObject({ id: 'authorize', kind: 'SIGNATURE' });
    const { sign, post } = step.items[0].data;
    expect(sign.signatureKind).toBe('EIP191');
    expect(post).toEqual({ endpoint: '/execute/permits', body: { kind: 'claim', requestId: step.requestId } });

    // A signature by another key is refused, and nothing is paid.
    const forged = await privateKeyToAccount(generatePrivateKey()).signMessage({ message: { raw: sign.message } });
    const submit = `mutation ($input: SubmitPermitInput!) { submitPermit(input: $input) { message } }`;
    const refused = await graphql(submit, { input: { kind: 'CLAIM', requestId: step.requestId, signature: forged } });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'PERMIT_FAILED', status: 400 });

    const signature = await appAccount.signMessage({ message: { raw: sign.message } });
    const accepted = await graphql(submit, { input: { kind: 'CLAIM', requestId: step.requestId, signature } });
    expect(accepted.errors).toBeUndefined();
    await gateway.server.solver!.claimPayer.payNow();
    expect(
      await publicClientOf(chainB).readContract({
        address: usdcB,
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [recipient],
      }),
    ).toBe(500_000n);

    const claims = await graphql(
      `
        query ($wallet: Address!) {
          appFeeClaims(wallet: $wallet, limit: 10) {
            claims {
              claimId
              wallet
              recipient
              currency {
                currency {
                  chainId
                }
                amount
              }
              txHash
              status
              createdAt
            }
            continuation
          }
        }
      `,
      { wallet: appAccount.address },
    );
    expect(claims.errors).toBeUndefined();
    expect(claims.data.appFeeClaims.continuation).toBeNull();
    expect(claims.data.appFeeClaims.claims).toEqual([
      {
        claimId: step.requestId,
        // The Address scalar answers checksummed addresses.
        wallet: appAccount.address,
        recipient: getAddress(recipient),
        currency: { currency: { chainId: chainB.chainId }, amount: '500000' },
        txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
        status: 'SUCCESS',
        createdAt: expect.any(String),
      },
    ]);
    const after = await graphql(balancesQuery, { wallet: appAccount.address });
    expect(after.data.appFeeBalances).toMatchObject({ balances: [], totalBalanceUsd: '0', availableBalanceUsd: '0' });
    // The same balance over REST.
    const rest = await call(gateway.url, 'getAppFeeBalances', { path: `/app-fees/${appAccount.address}/balances` });
    expect(rest.body).toMatchObject({ totalBalanceUsd: 0, availableBalanceUsd: 0 });
  });

  it('refuses a claim with nothing left, and bad input, with the REST error codes', async () => {
    const nothing = await graphql(claimMutation, {
      input: { wallet: appAccount.address, chainId: chainB.chainId, currency: tokenOf(chainB, 'USDC'), recipient },
    });
    expect(nothing.data).toBeNull();
    expect(nothing.errors?.[0]).toMatchObject({
      path: ['claimAppFees'],
      extensions: { code: 'INVALID_INPUT', status: 400 },
    });
    expect(nothing.errors?.[0]?.message).toMatch(/no app fees to claim/);
    const badLimit = await graphql(`{ appFeeClaims(wallet: "${appAccount.address}", limit: 0) { continuation } }`);
    expect(badLimit.errors?.[0]?.extensions).toMatchObject({ code: 'INVALID_INPUT', status: 400 });
    const badWallet = await graphql(`
      {
        appFeeBalances(wallet: "0x1234") {
          totalBalanceUsd
        }
      }
    `);
    expect(badWallet.errors?.length).toBeGreaterThan(0);
    expect(badWallet.data).toBeUndefined();
  });
});

describe('inventory over GraphQL', () => {
  const query = `{
    inventory {
      inventory { chainId currency symbol onChain committed available pendingSettlement ledger }
      short { chainId shortBy }
      plan { group amount from { chainId } to { chainId } }
      reconciliation { chainId currency blockNumber onChain ledger incoming drift checkedAt inFlightAt }
    }
  }`;

  it('needs the admin token, as REST', async () => {
    const without = await graphql(query);
    expect(without.errors?.[0]?.extensions).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    const wrong = await graphql(query, {}, { authorization: 'Bearer not-the-admin-token' });
    expect(wrong.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', status: 403 });
  });

  it('answers what GET /admin/inventory answers', async () => {
    await gateway.server.solver!.reconciler.reconcileNow();
    const { data, errors } = await graphql(query, {}, { authorization: `Bearer ${adminToken}` });
    expect(errors).toBeUndefined();
    const rest = await call(gateway.url, 'getInventory', { headers: { authorization: `Bearer ${adminToken}` } });
    expect(rest.status).toBe(200);
    expect(data.inventory.inventory).toEqual(
      rest.body.inventory.map((line: Record<string, unknown>) => ({
        chainId: line.chainId,
        currency: line.currency,
        symbol: line.symbol,
        onChain: line.onChain,
        committed: line.committed,
        available: line.available,
        pendingSettlement: line.pendingSettlement,
        ledger: line.ledger,
      })),
    );
    expect(data.inventory.reconciliation).toEqual(rest.body.reconciliation);
    expect(data.inventory.reconciliation.length).toBeGreaterThan(0);
    for (const check of data.inventory.reconciliation) expect(check.drift).toBe('0');
  });
});
