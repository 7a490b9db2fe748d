/**
 * Deposit-address quotes through `POST /quote/v2` on a real devnet: the deposit step is a plain transfer to an
 * address the factory computes, and every refusal of §7.2–7.4 answers 4xx in the error shape, storing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFunctionData, erc20Abi, parseEther, zeroAddress, type Address, type Hex } from 'viem';
import { depositAddressFactoryAbi } from '../../generated/contracts/index.js';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { call } from '../helpers/conformance.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { publicClientOf, requestQuote, tokenOf } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;

beforeAll(async () => {
  gateway = await startTestGateway({}, { server: {} });
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [alice] = gateway.devnet.descriptor.accounts as [DevnetAccount];
});
afterAll(async () => {
  await gateway?.stop();
});

const fresh = (n: number): Address => `0x${(n * 0x10000).toString(16).padStart(40, '0')}`;
const usdcBridge = (extra: Record<string, unknown> = {}) => ({
  user: alice.address,
  originChainId: chainA.chainId,
  destinationChainId: chainB.chainId,
  originCurrency: tokenOf(chainA, 'USDC'),
  destinationCurrency: tokenOf(chainB, 'USDC'),
  amount: '10000000',
  tradeType: 'EXACT_INPUT',
  recipient: fresh(0xd0a1),
  ...extra,
});
const computeAddress = (key: Hex, recovery: Address) =>
  publicClientOf(chainA).readContract({
    address: chainA.contracts.depositAddressFactory,
    abi: depositAddressFactoryAbi,
    functionName: 'computeAddress',
    args: [key, recovery],
  });

async function countRequests(): Promise<number> {
  const row = await gateway.server.core.db
    .selectFrom('requests')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function expectRefused(body: Record<string, unknown>, status: number, code: string, data?: string) {
  const before = await countRequests();
  const response = await call(gateway.url, 'getQuote', { body });
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  expect(response.body).toMatchObject({ errorCode: code, message: expect.any(String) });
  if (data !== undefined) expect((response.body as { errorData?: string }).errorData).toBe(data);
  expect(await countRequests()).toBe(before);
}

describe('deposit-address quotes', () => {
  it('strict USDC: one deposit step, a plain ERC-20 transfer of the quoted input to the factory address of the request', async () => {
    const refundTo = fresh(0xd0a2);
    const q = await requestQuote(gateway, alice, usdcBridge({ useDepositAddress: true, strict: true, refundTo }));
    expect(q.steps.map((step) => step.id)).toEqual(['deposit']);
    const step = q.steps[0]! as (typeof q.steps)[0] & { depositAddress: string };
    const expected = await computeAddress(step.requestId, zeroAddress);
    expect(step.depositAddress).toBe(expected);
    const item = step.items[0]!;
    expect(item.data.to).toBe(tokenOf(chainA, 'USDC'));
    expect(item.data.value).toBe('0');
    expect(decodeFunctionData({ abi: erc20Abi, data: item.data.data })).toEqual({
      functionName: 'transfer',
      args: [expected, BigInt(q.details.currencyIn.amount)],
    });
    expect(item.check?.endpoint).toBe(`/intents/status/v3?requestId=${step.requestId}`);
  });

  it('open native: a transfer with data 0x and the amount as value; the same route and parties get the same address', async () => {
    const body = {
      ...usdcBridge(),
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      useDepositAddress: true,
    };
    const first = await requestQuote(gateway, alice, body);
    const second = await requestQuote(gateway, alice, { ...body, amount: parseEther('0.02').toString() });
    const [a, b] = [first.steps[0]!, second.steps[0]!] as Array<(typeof first.steps)[0] & { depositAddress: string }>;
    expect(a!.items[0]!.data).toMatchObject({
      to: a!.depositAddress,
      data: '0x',
      value: parseEther('0.01').toString(),
    });
    expect(b!.depositAddress).toBe(a!.depositAddress);
    expect(b!.requestId).not.toBe(a!.requestId);
    // Another recipient is another address; a recovery address is part of the address too.
    const other = await requestQuote(gateway, alice, { ...body, recipient: fresh(0xd0a3) });
    const recovered = await requestQuote(gateway, alice, { ...body, recoveryAddress: fresh(0xd0a4) });
    expect((other.steps[0] as unknown as { depositAddress: string }).depositAddress).not.toBe(a!.depositAddress);
    expect((recovered.steps[0] as unknown as { depositAddress: string }).depositAddress).not.toBe(a!.depositAddress);
  });

  it('refuses, 4xx in the error shape and nothing stored: EXACT_OUTPUT open, strict without refundTo, txs, recoveryAddress alone or zero', async () => {
    await expectRefused(
      usdcBridge({ useDepositAddress: true, tradeType: 'EXACT_OUTPUT' }),
      400,
      'INVALID_INPUT',
      'tradeType',
    );
    await expectRefused(usdcBridge({ useDepositAddress: true, strict: true }), 400, 'INVALID_INPUT', 'refundTo');
    await expectRefused(
      usdcBridge({
        useDepositAddress: true,
        strict: true,
        refundTo: fresh(0xd0a5),
        txs: [{ to: fresh(0xd0a6), data: '0x', value: '0' }],
      }),
      400,
      'EXTRA_TXS_NOT_SUPPORTED',
    );
    await expectRefused(usdcBridge({ recoveryAddress: fresh(0xd0a7) }), 400, 'INVALID_INPUT', 'recoveryAddress');
    await expectRefused(usdcBridge({ strict: true, refundTo: fresh(0xd0a8) }), 400, 'INVALID_INPUT', 'strict');
    await expectRefused(
      usdcBridge({ useDepositAddress: true, recoveryAddress: zeroAddress }),
      400,
      'INVALID_ADDRESS',
      'recoveryAddress',
    );
    // Strict with EXACT_OUTPUT is allowed, and so is the zero address as refundTo (the detected depositor).
    await requestQuote(
      gateway,
      alice,
      usdcBridge({ useDepositAddress: true, strict: true, tradeType: 'EXACT_OUTPUT', refundTo: zeroAddress }),
    );
  });
});
