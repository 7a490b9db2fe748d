/**
 * Attack: pay for an order on another chain. The attacker quotes 0.01 ETH from chain A and deposits the quoted
 * input under the request id on chain C instead, in C's native currency (on real networks a cheap one: the same
 * number of units is worth far less), hoping the solver takes any deposit that names the id as payment.
 * Defence: a deposit pays only when it matches the order (origin chain, its depository or receiver, origin
 * currency, amount at least the quoted input); a deposit elsewhere is a stray deposit, refunded where it landed,
 * and the request is left as it was, still fillable by its own deposit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClient, encodeFunctionData, http, parseEther, parseGwei, toHex, zeroAddress } from 'viem';
import type { DevnetAccount, DevnetChain } from '../../src/chain/devnet.js';
import { DEVNET_L1_BASE_FEE, GAS_PRICE_ORACLE } from '../../src/chain/devnetContracts.js';
import { depositoryAbi } from '../../src/core/abi.js';
import { representativeTxBytes } from '../../src/core/quote/fillGas.js';
import { devnetGasPriceOracleAbi } from '../../generated/contracts/index.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';
import {
  depositErc20,
  depositNative,
  fillsOf,
  freshAddress,
  nativeBalance,
  releaseOf,
  statusOf,
  until,
} from './attacker.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let chainC: DevnetChain;
let attacker: DevnetAccount;

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB, chainC] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain, DevnetChain];
  attacker = gateway.devnet.descriptor.accounts[1]!;
});
afterAll(async () => {
  await gateway?.stop();
});

describe("a deposit on another chain than the order's origin", () => {
  it('native: the quoted input paid on chain C buys nothing; it is refunded on C and the order still waits for its own deposit', async () => {
    const recipient = freshAddress();
    const q = await requestQuote(gateway, attacker, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      recipient,
    });
    const requestId = q.steps.at(-1)!.requestId;
    const amountIn = BigInt(q.details.currencyIn.amount);

    const stray = await depositNative(chainC, attacker, requestId, amountIn);
    // Until the solver has decided about it: released on C, or the request moved.
    await until(
      'the stray deposit is decided',
      async () =>
        (await releaseOf(chainC, stray.depositIndex)) !== undefined ||
        (await statusOf(gateway, requestId)).status !== 'waiting',
    );

    expect((await statusOf(gateway, requestId)).status).toBe('waiting');
    expect(await fillsOf(chainB, requestId)).toBe(0);
    expect(await nativeBalance(chainB, recipient)).toBe(0n);
    const released = await releaseOf(chainC, stray.depositIndex);
    expect(released?.to).toBe(attacker.address);
    expect(released!.amount).toBeLessThan(amountIn);
    expect(amountIn - released!.amount).toBeLessThan(parseEther('0.001'));

    // The order's own deposit, on chain A, still fills it.
    const receipts = await executeSteps(gateway, q.steps, attacker);
    const record = await waitForStatus(gateway, requestId, ['success', 'failure', 'refund']);
    expect(record).toMatchObject({ status: 'success', failReason: 'N/A', originChainId: chainA.chainId });
    expect(record.inTxHashes).toEqual([receipts.get('deposit')!.transactionHash]);
    expect(await fillsOf(chainB, requestId)).toBe(1);
    expect(await nativeBalance(chainB, recipient)).toBe(BigInt(q.details.currencyOut.amount));
  });

  it('on chain C (OP-stack-like) the refund keeps its L1 data fee from what it pays back, not from the solver', async () => {
    // An L1 base fee 1000 times the devnet's makes the refund's L1 fee (about 0.006 ETH) dwarf its L2 gas.
    const anvil = createTestClient({ mode: 'anvil', transport: http(chainC.rpcUrl) });
    const setL1BaseFee = (fee: bigint) =>
      anvil.setStorageAt({ address: GAS_PRICE_ORACLE, index: 0, value: toHex(fee, { size: 32 }) });
    await setL1BaseFee(parseGwei('1000'));
    try {
      const q = await requestQuote(gateway, attacker, {
        originCurrency: zeroAddress,
        destinationCurrency: zeroAddress,
        amount: parseEther('0.01').toString(),
      });
      const requestId = q.steps.at(-1)!.requestId;
      const amountIn = BigInt(q.details.currencyIn.amount);
      const stray = await depositNative(chainC, attacker, requestId, amountIn);
      await until(
        'the stray deposit is refunded',
        async () => (await releaseOf(chainC, stray.depositIndex)) !== undefined,
      );
      const released = (await releaseOf(chainC, stray.depositIndex))!;

      // The L1 data fee of the refund's own bytes, as C's GasPriceOracle prices them.
      const chainConfig = gateway.config.chains.find((chain) => chain.id === chainC.chainId)!;
      const release = encodeFunctionData({
        abi: depositoryAbi,
        functionName: 'release',
        args: [
          stray.depositIndex,
          requestId,
          attacker.address,
          zeroAddress,
          amountIn,
          attacker.address,
          released.amount,
        ],
      });
      const l1Fee = await publicClientOf(chainC).readContract({
        address: GAS_PRICE_ORACLE,
        abi: devnetGasPriceOracleAbi,
        functionName: 'getL1Fee',
        args: [representativeTxBytes(chainConfig, { to: chainC.contracts.depository, data: release, value: 0n })],
      });
      expect(l1Fee).toBeGreaterThan(parseEther('0.005'));
      expect(released.to).toBe(attacker.address);
      expect(released.amount).toBeGreaterThan(0n);
      expect(amountIn - released.amount).toBeGreaterThanOrEqual(l1Fee);
    } finally {
      await setL1BaseFee(DEVNET_L1_BASE_FEE);
    }
  });

  it('ERC-20: USDC deposited on chain C for a USDC order from chain A is refunded on C; the order is not spoiled', async () => {
    const recipient = freshAddress();
    const q = await requestQuote(gateway, attacker, {
      originCurrency: tokenOf(chainA, 'USDC'),
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: '20000000',
      recipient,
    });
    const requestId = q.steps.at(-1)!.requestId;
    const stray = await depositErc20(
      chainC,
      attacker,
      tokenOf(chainC, 'USDC'),
      requestId,
      BigInt(q.details.currencyIn.amount),
    );
    await until(
      'the stray deposit is decided',
      async () =>
        (await releaseOf(chainC, stray.depositIndex)) !== undefined ||
        (await statusOf(gateway, requestId)).status !== 'waiting',
    );
    expect((await statusOf(gateway, requestId)).status).toBe('waiting');
    expect((await releaseOf(chainC, stray.depositIndex))?.to).toBe(attacker.address);

    await executeSteps(gateway, q.steps, attacker);
    const record = await waitForStatus(gateway, requestId, ['success', 'failure', 'refund']);
    expect(record).toMatchObject({ status: 'success', failReason: 'N/A' });
    expect(await fillsOf(chainB, requestId)).toBe(1);
  });
});
