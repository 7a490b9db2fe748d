/**
 * Quotes executed as they are: for each operation (bridge, swap, wrap, call) and trade type, a viem wallet
 * sends the quote's steps unchanged, and the origin chain shows a deposit of exactly the quoted amount, to the
 * right contract, carrying the request id. The stored request matches the quote. (The fill is the solver's
 * job, tested with the solver.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createWalletClient,
  encodeFunctionData,
  erc20Abi,
  http,
  keccak256,
  parseAbi,
  parseEther,
  parseEventLogs,
  zeroAddress,
  type Address,
  type Hex,
  type TransactionReceipt,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { sql } from 'kysely';
import { depositoryAbi, receiverAbi } from '../../generated/contracts/index.js';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { encodeOrder, type OrderData } from '../../src/core/quote/orderEncoding.js';
import { DEPOSIT_GAS } from '../../src/core/quote/steps.js';
import { getRequest } from '../../src/store/requests.repository.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf, type WireStep } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let user: DevnetAccount;

beforeAll(async () => {
  // Without the solver: these tests check the deposit and the stored quote, which a fill would move on from.
  gateway = await startTestGateway({ solverEnabled: false });
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  user = gateway.devnet.descriptor.accounts[0]!;
});
afterAll(async () => {
  await gateway?.stop();
});

const token = tokenOf;
const quote = (body: Record<string, unknown>) => requestQuote(gateway, user, body);
const execute = (steps: WireStep[], account: DevnetAccount = user) => executeSteps(gateway, steps, account);
const publicClient = publicClientOf;

/** The one Deposit event of a receipt at the origin's depository. */
function depositEvent(receipt: TransactionReceipt, chain: DevnetChain) {
  const logs = parseEventLogs({ abi: depositoryAbi, eventName: 'Deposit', logs: receipt.logs }).filter(
    (log) => log.address.toLowerCase() === chain.contracts.depository.toLowerCase(),
  );
  expect(logs).toHaveLength(1);
  return logs[0]!.args;
}

async function expectStored(
  requestId: Hex,
  expected: { amountIn: bigint; amountOut: bigint; tradeType: string; operation: string },
) {
  const stored = await getRequest(gateway.server.database.db, requestId);
  expect(stored).toMatchObject({ status: 'waiting', ...expected, user: user.address.toLowerCase() });
  expect(stored!.expiresAt).toBeGreaterThan(Date.now());
}

/** An order's data from its JSON form (amounts as decimal strings), for the encoder. */
function orderDataOf(json: any): OrderData {
  const big = (value: string) => BigInt(value);
  return {
    ...json,
    inputs: json.inputs.map((input: any) => ({
      payment: { ...input.payment, amount: big(input.payment.amount), weight: big(input.payment.weight) },
      refunds: input.refunds.map((refund: any) => ({ ...refund, minimumAmount: big(refund.minimumAmount) })),
    })),
    output: {
      ...json.output,
      payments: json.output.payments.map((payment: any) => ({
        ...payment,
        minimumAmount: big(payment.minimumAmount),
        expectedAmount: big(payment.expectedAmount),
      })),
    },
    fees: json.fees.map((fee: any) => ({ ...fee, amount: big(fee.amount) })),
  };
}

describe('quotes executed on the devnet deposit exactly what they say', () => {
  it('native bridge, EXACT_INPUT: one deposit step into the depository with the request id', async () => {
    const amount = parseEther('0.05');
    const q = await quote({ originCurrency: zeroAddress, destinationCurrency: zeroAddress, amount: amount.toString() });
    expect(q.steps.map((s) => s.id)).toEqual(['deposit']);
    const [deposit] = q.steps;
    expect(deposit!.items[0]!.check).toEqual({
      endpoint: `/intents/status/v3?requestId=${deposit!.requestId}`,
      method: 'GET',
    });
    expect(q.details.operation).toBe('bridge');
    expect(BigInt(q.details.currencyIn.amount)).toBe(amount);
    expect(BigInt(q.details.currencyOut.amount)).toBeLessThan(amount);
    expect(q.protocol.v2.paymentDetails).toMatchObject({
      depository: chainA.contracts.depository,
      amount: amount.toString(),
    });

    const receipts = await execute(q.steps);
    const event = depositEvent(receipts.get('deposit')!, chainA);
    expect(event).toMatchObject({ id: deposit!.requestId, depositor: user.address, token: zeroAddress, amount });
    await expectStored(deposit!.requestId, {
      amountIn: amount,
      amountOut: BigInt(q.details.currencyOut.amount),
      tradeType: 'EXACT_INPUT',
      operation: 'bridge',
    });
    // The legacy origin-gas figure is priced from typical deposit gas; it must stay close to the real thing.
    expect(Number(receipts.get('deposit')!.gasUsed)).toBeLessThanOrEqual(Number(DEPOSIT_GAS.native));
    expect(Number(receipts.get('deposit')!.gasUsed)).toBeGreaterThan(Number(DEPOSIT_GAS.native) / 2);
  });

  it("stores the order by its data alone, whose hash is the row's order id; a bridge row fits three to a heap page", async () => {
    const q = await quote({
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('1.5').toString(),
      includeProtocolData: true,
    });
    const requestId = q.steps[0]!.requestId;
    const { db } = gateway.server.database;
    const stored = (await getRequest(db, requestId))!;
    // What the history and the fill read back: the order's data, as the quote gave it, and the order id.
    expect(stored.quote.order).toEqual({ orderData: q.protocol.v2.orderData });
    expect(stored.orderId).toBe(q.protocol.v2.orderId);
    expect(keccak256(encodeOrder(orderDataOf((stored.quote.order as { orderData: unknown }).orderData)))).toBe(
      stored.orderId,
    );
    // 8,192-byte page, 24-byte header, a 4-byte line pointer per row, rows 8-byte aligned: three rows fit when
    // each is at most 2,712 bytes. At 2,805 (the whole order and a repeated fee field) a page held two.
    const { rows } = await sql<{ size: number }>`
      select pg_column_size(r.*) as size from requests r where r.id = ${requestId}`.execute(db);
    expect(rows[0]!.size).toBeLessThanOrEqual(2_712);
  });

  it('ERC-20 bridge, EXACT_OUTPUT: approve then depositErc20 of the computed input; exactly the amount out is promised', async () => {
    const usdcA = token(chainA, 'USDC');
    const out = 25_000_000n; // 25 USDC
    const q = await quote({
      originCurrency: usdcA,
      destinationCurrency: token(chainB, 'USDC'),
      amount: out.toString(),
      tradeType: 'EXACT_OUTPUT',
    });
    expect(q.steps.map((s) => s.id)).toEqual(['approve', 'deposit']);
    expect(q.steps[0]!.items[0]!.check).toBeUndefined();
    expect(BigInt(q.details.currencyOut.amount)).toBe(out);
    expect(BigInt(q.details.currencyOut.minimumAmount)).toBe(out);
    const amountIn = BigInt(q.details.currencyIn.amount);
    expect(amountIn).toBeGreaterThan(out);

    const receipts = await execute(q.steps);
    const event = depositEvent(receipts.get('deposit')!, chainA);
    expect(event).toMatchObject({ id: q.steps[1]!.requestId, depositor: user.address, token: usdcA, amount: amountIn });
    expect(Number(receipts.get('deposit')!.gasUsed)).toBeLessThanOrEqual(Number(DEPOSIT_GAS.erc20));
    expect(Number(receipts.get('approve')!.gasUsed)).toBeLessThanOrEqual(Number(DEPOSIT_GAS.approve));
    await expectStored(q.steps[1]!.requestId, {
      amountIn,
      amountOut: out,
      tradeType: 'EXACT_OUTPUT',
      operation: 'bridge',
    });

    // The allowance is now spent; a second quote for a smaller amount within a fresh approval needs no approve step.
    const client = createWalletClient({
      account: privateKeyToAccount(user.privateKey),
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    });
    await publicClient(chainA).waitForTransactionReceipt({
      hash: await client.writeContract({
        address: usdcA,
        abi: erc20Abi,
        functionName: 'approve',
        args: [chainA.contracts.depository, 10n ** 12n],
      }),
    });
    const again = await quote({
      originCurrency: usdcA,
      destinationCurrency: token(chainB, 'USDC'),
      amount: '10000000',
    });
    expect(again.steps.map((s) => s.id)).toEqual(['deposit']);
  });

  it('cross-chain swap, EXPECTED_OUTPUT: ETH for USDC at oracle prices, minimum after the default slippage', async () => {
    const out = 100_000_000n; // 100 USDC
    const q = await quote({
      originCurrency: zeroAddress,
      destinationCurrency: token(chainB, 'USDC'),
      amount: out.toString(),
      tradeType: 'EXPECTED_OUTPUT',
    });
    expect(q.details.operation).toBe('swap');
    expect(BigInt(q.details.currencyOut.amount)).toBe(out);
    expect(BigInt(q.details.currencyOut.minimumAmount)).toBe((out * 9_950n) / 10_000n);
    const amountIn = BigInt(q.details.currencyIn.amount);
    // 100 USD at 3000 USD/ETH plus fees (a few cents of execution and 0.06% + 0.05%).
    expect(amountIn).toBeGreaterThan(parseEther('0.033333'));
    expect(amountIn).toBeLessThan(parseEther('0.0336'));
    const receipts = await execute(q.steps);
    expect(depositEvent(receipts.get('deposit')!, chainA)).toMatchObject({ amount: amountIn, token: zeroAddress });
  });

  it('same-chain swap, EXACT_INPUT: USDC for WETH on one chain', async () => {
    const q = await quote({
      destinationChainId: chainA.chainId,
      originCurrency: token(chainA, 'USDC'),
      destinationCurrency: token(chainA, 'WETH'),
      amount: '50000000',
      // The inventory's deposit route (the DEX's own same-chain swap is test/quote/sameChainDex.test.ts).
      includedSwapSources: ['solver-inventory'],
    });
    expect(q.details.operation).toBe('swap');
    expect(q.details.currencyOut.currency.chainId).toBe(chainA.chainId);
    const receipts = await execute(q.steps);
    expect(depositEvent(receipts.get('deposit')!, chainA)).toMatchObject({
      amount: 50_000_000n,
      token: token(chainA, 'USDC'),
    });
  });

  it('wrap, same chain: ETH to WETH converts 1:1 less fees, with no platform fee', async () => {
    const amount = parseEther('0.2');
    const q = await quote({
      destinationChainId: chainA.chainId,
      originCurrency: zeroAddress,
      destinationCurrency: token(chainA, 'WETH'),
      amount: amount.toString(),
    });
    expect(q.details.operation).toBe('wrap');
    expect(q.details.expandedPriceImpact.service.usd).toBe('0');
    const fees = BigInt(q.fees.relayer.amount) + BigInt(q.fees.app.amount);
    expect(BigInt(q.details.currencyOut.amount)).toBe(amount - fees);
    await execute(q.steps);
  });

  it('explicitDeposit: false sends native through the receiver contract with the request id', async () => {
    const amount = parseEther('0.01');
    const q = await quote({
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: amount.toString(),
      explicitDeposit: false,
    });
    expect(q.steps[0]!.items[0]!.data.to).toBe(chainA.contracts.receiver);
    const receipts = await execute(q.steps);
    const forwarded = parseEventLogs({
      abi: receiverAbi,
      eventName: 'FundsForwarded',
      logs: receipts.get('deposit')!.logs,
    });
    expect(forwarded.map((log) => log.args)).toEqual([{ id: q.steps[0]!.requestId, from: user.address, amount }]);
  });

  describe('calls on the destination', () => {
    const wethAbi = parseAbi(['function deposit() payable']);
    const cleanupAbi = parseAbi(['function cleanupErc20s(address[] tokens, address[] recipients)']);
    const recipient = '0x00000000000000000000000000000000000c0ffe' as Address;
    const calls = (value: bigint) => [
      {
        to: token(chainB, 'WETH'),
        value: value.toString(),
        data: encodeFunctionData({ abi: wethAbi, functionName: 'deposit' }),
      },
      {
        to: chainB.contracts.multicaller,
        value: '0',
        data: encodeFunctionData({
          abi: cleanupAbi,
          functionName: 'cleanupErc20s',
          args: [[token(chainB, 'WETH')], [recipient]],
        }),
      },
    ];

    it('EXACT_OUTPUT: the amount is the calls total; the deposit covers it plus the fees', async () => {
      const value = parseEther('0.03');
      const q = await quote({
        originCurrency: zeroAddress,
        destinationCurrency: zeroAddress,
        amount: value.toString(),
        tradeType: 'EXACT_OUTPUT',
        recipient,
        txs: calls(value),
      });
      expect(q.details.operation).toBe('call');
      expect(BigInt(q.details.currencyOut.amount)).toBe(value);
      expect(q.protocol.v2.orderData.output.calls).toHaveLength(2);
      const receipts = await execute(q.steps);
      expect(depositEvent(receipts.get('deposit')!, chainA)).toMatchObject({
        amount: BigInt(q.details.currencyIn.amount),
      });
    });

    it('EXACT_INPUT: the output is what is left after fees, and the calls must fit in it', async () => {
      const amount = parseEther('0.03');
      const q = await quote({
        originCurrency: zeroAddress,
        destinationCurrency: zeroAddress,
        amount: amount.toString(),
        recipient,
        txs: calls(parseEther('0.02')),
      });
      expect(BigInt(q.details.currencyOut.amount)).toBeLessThan(amount);
      expect(BigInt(q.details.currencyOut.amount)).toBeGreaterThan(parseEther('0.02'));
      await execute(q.steps);
    });
  });
});
