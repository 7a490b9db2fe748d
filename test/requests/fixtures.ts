import { expect } from 'vitest';
import type { Address } from 'viem';
import type { DevnetChain } from '../../src/chain/devnet.js';
import { updateRequestStatus, type UpdateRequestStatusParameters } from '../../src/store/requests.repository.js';
import { post, type GraphQLResponse } from '../graphql/harness.js';
import { call } from '../helpers/conformance.js';
import type { TestGateway } from '../helpers/gateway.js';

export const A = 31337;
export const B = 31338;
export const C = 31339;

/** Devnet lookups and real quotes on a test gateway. */
export function fixtures(gateway: () => TestGateway) {
  const chain = (id: number): DevnetChain => gateway().devnet.descriptor.chains.find((c) => c.chainId === id)!;
  const token = (id: number, tokenId: string): Address => chain(id).tokens.find((t) => t.id === tokenId)!.address;
  const account = (i: number): Address => gateway().devnet.descriptor.accounts[i]!.address;

  /** A real `POST /quote/v2`; returns the quote body and its request id. */
  async function quote(
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
  ): Promise<{ requestId: `0x${string}`; quote: any }> {
    const response = await call(gateway().url, 'getQuote', { body, headers });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return { requestId: response.body.steps.at(-1).requestId, quote: response.body };
  }

  /** A 10 USDC bridge from A to B by funded test account `i`. */
  const usdcBridge = (i = 0, extra: Record<string, unknown> = {}) => ({
    user: account(i),
    originChainId: A,
    destinationChainId: B,
    originCurrency: token(A, 'usdc'),
    destinationCurrency: token(B, 'usdc'),
    amount: '10000000',
    tradeType: 'EXACT_INPUT',
    ...extra,
  });

  /** Moves a request's status through the real repository, as the solver does. */
  async function move(requestId: string, params: Omit<UpdateRequestStatusParameters, 'now'> & { now?: number }) {
    const updated = await updateRequestStatus(gateway().server.database.db, requestId, { now: Date.now(), ...params });
    expect(updated).not.toBeNull();
    return updated!;
  }

  async function graphql(
    query: string,
    variables: Record<string, unknown> = {},
    headers: Record<string, string> = {},
  ): Promise<GraphQLResponse> {
    const { status, body } = await post(gateway().url, query, variables, headers);
    expect(status).toBe(200);
    return body;
  }

  return { chain, token, account, quote, usdcBridge, move, graphql };
}

/** A random 32-byte hex value (a transaction hash or an id nobody quoted). */
export const randomHash = (): `0x${string}` =>
  `0x${Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, '0')).join('')}`;
