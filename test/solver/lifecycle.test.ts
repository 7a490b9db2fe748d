/**
 * The request lifecycle end to end on the devnet, driven only through the public API and viem wallets: a quote,
 * its steps sent as they are, then the gateway's own solver (deposit watcher, decision, sender) fills on the
 * destination or refunds on the origin. Balances are read on chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeFunctionData, parseAbi, parseEther, parseEventLogs, zeroAddress, type Address, type Hex } from 'viem';

import { depositoryAbi } from '../../generated/contracts/index.js';
import { type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { call } from '../helpers/conformance.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';
import { depositNative as sendNativeDeposit } from '../helpers/deposits.js';
import { balanceOf } from '../helpers/chainReads.js';
import { revocablePull } from '../helpers/revertingCall.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;
let bob: DevnetAccount;

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  [alice, bob] = gateway.devnet.descriptor.accounts as [DevnetAccount, DevnetAccount];
});
afterAll(async () => {
  await gateway?.stop();
});

// Fresh addresses above 0xffff: the gateway refuses the low range (precompiles, placeholders) as a recipient.
const fresh = (n: number): Address => `0x${n.toString(16).padStart(40, '0')}`;

describe('fills', () => {
  it('native bridge: the recipient receives exactly the quoted output; the status ends in success with both hashes', async () => {
    const recipient = fresh(0xa11ce1);
    const q = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.02').toString(),
      recipient,
    });
    const requestId = q.steps.at(-1)!.requestId;
    const receipts = await executeSteps(gateway, q.steps, alice);
    const record = await waitForStatus(gateway, requestId, ['success', 'failure', 'refund']);
    expect(record).toMatchObject({
      status: 'success',
      failReason: 'N/A',
      refundFailReason: 'N/A',
      originChainId: chainA.chainId,
      destinationChainId: chainB.chainId,
    });
    expect(record.inTxHashes).toEqual([receipts.get('deposit')!.transactionHash]);
    expect(record.txHashes).toHaveLength(1);
    expect(await balanceOf(chainB, zeroAddress, recipient)).toBe(BigInt(q.details.currencyOut.amount));
    // The watcher's claim recorded the deposit's block and the fill its time: the history finds it by both.
    const block = Number(receipts.get('deposit')!.blockNumber);
    const found = async (query: Record<string, string>) =>
      (await call(gateway.url, 'getRequests', { query: { id: requestId, ...query } })).body.requests.length;
    expect(await found({ startBlock: String(block), endBlock: String(block) })).toBe(1);
    expect(await found({ startBlock: String(block + 1) })).toBe(0);
    expect(await found({ fillTimeMin: '0', fillTimeMax: '60' })).toBe(1);
  });

  it('ERC-20 bridge with EXACT_OUTPUT delivers exactly the amount asked', async () => {
    const recipient = fresh(0xa11ce2);
    const q = await requestQuote(gateway, alice, {
      originCurrency: tokenOf(chainA, 'USDC'),
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: '12345678',
      tradeType: 'EXACT_OUTPUT',
      recipient,
    });
    await executeSteps(gateway, q.steps, alice);
    await waitForStatus(gateway, q.steps.at(-1)!.requestId, ['success']);
    expect(await balanceOf(chainB, tokenOf(chainB, 'USDC'), recipient)).toBe(12_345_678n);
  });

  it('cross-chain swap (ETH to USDC) and same-chain swap (USDC to WETH) are filled from inventory', async () => {
    const recipient = fresh(0xa11ce3);
    const cross = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: parseEther('0.01').toString(),
      recipient,
    });
    await executeSteps(gateway, cross.steps, alice);
    await waitForStatus(gateway, cross.steps.at(-1)!.requestId, ['success']);
    expect(await balanceOf(chainB, tokenOf(chainB, 'USDC'), recipient)).toBe(BigInt(cross.details.currencyOut.amount));

    const same = await requestQuote(gateway, alice, {
      destinationChainId: chainA.chainId,
      originCurrency: tokenOf(chainA, 'USDC'),
      destinationCurrency: tokenOf(chainA, 'WETH'),
      amount: '40000000',
      recipient,
      // From inventory: left to choose, a same-chain swap may go through the DEX (test/quote/sameChainDex.test.ts).
      includedSwapSources: ['solver-inventory'],
    });
    expect(same.steps.at(-1)!.id).toBe('deposit');
    await executeSteps(gateway, same.steps, alice);
    await waitForStatus(gateway, same.steps.at(-1)!.requestId, ['success']);
    expect(await balanceOf(chainA, tokenOf(chainA, 'WETH'), recipient)).toBe(BigInt(same.details.currencyOut.amount));
  });

  it('a call: the destination runs the user calls with the delivered value (wrap to WETH, swept to the recipient)', async () => {
    const recipient = fresh(0xa11ce4);
    const value = parseEther('0.015');
    const weth = tokenOf(chainB, 'WETH');
    const txs = [
      {
        to: weth,
        value: value.toString(),
        data: encodeFunctionData({ abi: parseAbi(['function deposit() payable']), functionName: 'deposit' }),
      },
      {
        to: chainB.contracts.multicaller,
        value: '0',
        data: encodeFunctionData({
          abi: parseAbi(['function cleanupErc20s(address[],address[])']),
          functionName: 'cleanupErc20s',
          args: [[weth], [recipient]],
        }),
      },
    ];
    const q = await requestQuote(gateway, alice, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: value.toString(),
      tradeType: 'EXACT_OUTPUT',
      recipient,
      txs,
    });
    await executeSteps(gateway, q.steps, alice);
    await waitForStatus(gateway, q.steps.at(-1)!.requestId, ['success']);
    expect(await balanceOf(chainB, weth, recipient)).toBe(value);
  });
});

describe('refunds', () => {
  /** The amount released back to `to` by the depository in a refund transaction. */
  async function releasedTo(chain: DevnetChain, hash: Hex, to: Address): Promise<bigint> {
    const receipt = await publicClientOf(chain).getTransactionReceipt({ hash });
    const released = parseEventLogs({ abi: depositoryAbi, eventName: 'Released', logs: receipt.logs });
    expect(released).toHaveLength(1);
    expect(released[0]!.args.to.toLowerCase()).toBe(to.toLowerCase());
    return released[0]!.args.amount;
  }

  async function depositNative(account: DevnetAccount, requestId: Hex, value: bigint): Promise<Hex> {
    return (await sendNativeDeposit(chainA, account, requestId, value)).hash;
  }

  it('a deposit below the quoted amount is refunded (DEPOSITED_AMOUNT_TOO_LOW_TO_FILL) to refundTo, less the refund gas', async () => {
    const refundTo = fresh(0xb0b1b0);
    const q = await requestQuote(gateway, bob, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.02').toString(),
      refundTo,
    });
    const requestId = q.steps.at(-1)!.requestId;
    const deposited = parseEther('0.019');
    await depositNative(bob, requestId, deposited);
    const record = await waitForStatus(gateway, requestId, ['refund', 'failure', 'success']);
    expect(record).toMatchObject({
      status: 'refund',
      failReason: 'DEPOSITED_AMOUNT_TOO_LOW_TO_FILL',
      refundFailReason: 'N/A',
    });
    const refunded = await releasedTo(chainA, record.txHashes.at(-1), refundTo);
    expect(await balanceOf(chainA, zeroAddress, refundTo)).toBe(refunded);
    expect(refunded).toBeLessThan(deposited);
    // Only the refund's gas (well under 0.001 ETH on the devnet) is kept.
    expect(deposited - refunded).toBeLessThan(parseEther('0.001'));
  });

  it('a deposit after the quote expired is refunded (ORDER_EXPIRED)', async () => {
    const q = await requestQuote(gateway, bob, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      ttl: 1,
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await executeSteps(gateway, q.steps, bob);
    const record = await waitForStatus(gateway, q.steps.at(-1)!.requestId, ['refund', 'failure', 'success']);
    expect(record).toMatchObject({ status: 'refund', failReason: 'ORDER_EXPIRED' });
  });

  it('a second deposit for a paid request is refunded on its own (DOUBLE_SPEND); the request stays filled', async () => {
    const q = await requestQuote(gateway, bob, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
    });
    const requestId = q.steps.at(-1)!.requestId;
    await executeSteps(gateway, q.steps, bob);
    await waitForStatus(gateway, requestId, ['success']);
    const before = await balanceOf(chainA, zeroAddress, bob.address);
    const second = await depositNative(bob, requestId, parseEther('0.01'));
    const secondReceipt = await publicClientOf(chainA).getTransactionReceipt({ hash: second });
    // Wait for the refund of the second deposit: bob's balance comes back up to the deposit less gas.
    const deadline = Date.now() + 20_000;
    let after = await balanceOf(chainA, zeroAddress, bob.address);
    while (after <= before - parseEther('0.01') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      after = await balanceOf(chainA, zeroAddress, bob.address);
    }
    const gasPaid = secondReceipt.gasUsed * secondReceipt.effectiveGasPrice;
    expect(before - gasPaid - after).toBeGreaterThan(0n);
    expect(before - gasPaid - after).toBeLessThan(parseEther('0.001'));
    const record = await waitForStatus(gateway, requestId, ['success']);
    expect(record.status).toBe('success');
  });

  it('a fill whose calls revert at fill time is refunded (EXECUTION_REVERTED) with the decoded reason', async () => {
    // The call pulls tokens a funded account approved to the multicaller; revoking the approval after the
    // quote makes the fill's simulation revert.
    const deployer = gateway.devnet.descriptor.accounts[3]!;
    const { txs, revoke } = await revocablePull(chainB, deployer, fresh(0xc0c0));
    const q = await requestQuote(gateway, bob, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount: parseEther('0.01').toString(),
      tradeType: 'EXACT_INPUT',
      txs,
    });
    await revoke();
    await executeSteps(gateway, q.steps, bob);
    const record = await waitForStatus(gateway, q.steps.at(-1)!.requestId, ['refund', 'failure', 'success']);
    expect(record).toMatchObject({ status: 'refund', failReason: 'EXECUTION_REVERTED' });
    expect(JSON.stringify(record.details)).toMatch(/allowance/i);
  });

  it('a quote the solver can no longer cover is refunded (SOLVER_BALANCE_TOO_LOW)', async () => {
    // Two quotes for 6000 ETH each pass while the solver holds ~10000 ETH on chain B; after the first fill the
    // second cannot be filled. (Last in the file: it drains the solver's ETH on chain B.)
    const [carol, dave] = gateway.devnet.descriptor.accounts.slice(2) as [DevnetAccount, DevnetAccount];
    const amount = parseEther('6000').toString();
    const first = await requestQuote(gateway, carol, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount,
      tradeType: 'EXACT_OUTPUT',
    });
    const second = await requestQuote(gateway, dave, {
      originCurrency: zeroAddress,
      destinationCurrency: zeroAddress,
      amount,
      tradeType: 'EXACT_OUTPUT',
    });
    await executeSteps(gateway, first.steps, carol);
    await waitForStatus(gateway, first.steps.at(-1)!.requestId, ['success']);
    await executeSteps(gateway, second.steps, dave);
    const record = await waitForStatus(gateway, second.steps.at(-1)!.requestId, ['refund', 'failure', 'success']);
    expect(record).toMatchObject({ status: 'refund', failReason: 'SOLVER_BALANCE_TOO_LOW' });
  });
});
