/**
 * What the attack tests share: an attacker's deposits sent straight to a depository with viem (as anyone can,
 * naming any request id and any depositor), and what the chain shows afterwards (releases, fills, balances).
 */
import { expect } from 'vitest';
import { zeroAddress, type Address, type Hex } from 'viem';

import type { DevnetChain } from '../../src/chain/devnet.js';
import { listDepositsForRequest } from '../../src/store/deposits.repository.js';
import { call } from '../helpers/conformance.js';
import type { TestGateway } from '../helpers/gateway.js';
import { publicClientOf } from '../helpers/quote.js';
import { filledEvents, releasedEvents } from '../helpers/chainReads.js';

export { depositErc20, depositNative, type SentDeposit } from '../helpers/deposits.js';

/** The depository's release of one deposit on `chain`, if any. */
export async function releaseOf(
  chain: DevnetChain,
  depositIndex: bigint,
): Promise<{ to: Address; amount: bigint } | undefined> {
  const events = await releasedEvents(chain, { depositIndex });
  const event = events[0];
  return event === undefined ? undefined : { to: event.args.to!, amount: event.args.amount! };
}

/** How many fills of `requestId` happened on `chain`. */
export async function fillsOf(chain: DevnetChain, requestId: Hex): Promise<number> {
  const events = await filledEvents(chain, requestId);
  return events.length;
}

export const nativeBalance = (chain: DevnetChain, owner: Address): Promise<bigint> =>
  publicClientOf(chain).getBalance({ address: owner });

/** The request's status as `GET /intents/status/v3` shows it. */
export async function statusOf(gateway: TestGateway, requestId: Hex): Promise<any> {
  const { status, body } = await call(gateway.url, 'getIntentStatus', { query: { requestId } });
  expect(status).toBe(200);
  return body;
}

/** Whether the gateway is done with the deposit sent in `txHash` (its row is `consumed`). */
export async function depositHandled(gateway: TestGateway, requestId: Hex, txHash: Hex): Promise<boolean> {
  const deposits = await listDepositsForRequest(gateway.server.database.db, requestId);
  return deposits.some((deposit) => deposit.txHash === txHash.toLowerCase() && deposit.status === 'consumed');
}

/** Polls `done` every 100 ms; fails the test after `timeoutMs`. */
export async function until(what: string, done: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let next = 0xa77ac0;
/** A fresh address holding nothing on any chain (recipients, refund targets). */
export const freshAddress = (): Address => `0x${(next++).toString(16).padStart(40, '0')}`;

export { zeroAddress };
