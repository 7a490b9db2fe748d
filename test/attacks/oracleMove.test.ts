/**
 * Attack: quote, wait, and pay only if the market moved your way. The attacker quotes ETH on chain A for USDC on
 * chain B, then the ETH/USD oracle drops 20%; paying the old quote now would buy 25% more USDC than the ETH is
 * worth, at the solver's expense. The solver re-prices at fill time and refunds the deposit with `SLIPPAGE`
 * instead; the recipient gets nothing. A quote paid while prices hold still fills.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWalletClient, erc20Abi, http, parseEther, parseUnits, zeroAddress, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { priceFeedAbi } from '../../generated/contracts/index.js';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let attacker: DevnetAccount;

beforeAll(async () => {
  gateway = await startTestGateway();
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  attacker = gateway.devnet.descriptor.accounts[0]!;
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

/** The devnet's feed owner publishes a new ETH/USD answer on `chain` (8 decimals). */
async function setEthUsd(chain: DevnetChain, usd: string): Promise<void> {
  const deployer = gateway.devnet.descriptor.deployer;
  const wallet = createWalletClient({
    account: privateKeyToAccount(deployer.privateKey),
    chain: devnetViemChain(chain),
    transport: http(chain.rpcUrl),
  });
  const hash = await wallet.writeContract({
    address: chain.nativePriceFeed,
    abi: priceFeedAbi,
    functionName: 'setAnswer',
    args: [parseUnits(usd, 8)],
  });
  await publicClientOf(chain).waitForTransactionReceipt({ hash });
  // The gateway caches prices for one block time (1 s on this devnet): let the new answer through.
  await new Promise((resolve) => setTimeout(resolve, 1_200));
}

const usdcOf = (owner: Address) =>
  publicClientOf(chainB).readContract({
    address: tokenOf(chainB, 'USDC'),
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [owner],
  });

describe('fill-time price re-check', () => {
  it('a 20% oracle move between quote and deposit: refunded with SLIPPAGE, nothing delivered', async () => {
    const recipient: Address = '0x00000000000000000000000000000000000a77ac';
    const quote = await requestQuote(gateway, attacker, {
      originCurrency: zeroAddress,
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: parseEther('1').toString(),
      recipient,
    });
    const requestId = quote.steps.at(-1)!.requestId;
    await setEthUsd(chainA, '2400');
    try {
      await executeSteps(gateway, quote.steps, attacker);
      const record = await waitForStatus(gateway, requestId, ['success', 'refund', 'failure']);
      expect(record).toMatchObject({ status: 'refund', failReason: 'SLIPPAGE' });
      expect(await usdcOf(recipient)).toBe(0n);
    } finally {
      await setEthUsd(chainA, '3000');
    }
  });

  it('the same trade paid while prices hold is filled with the quoted output', async () => {
    const recipient: Address = '0x00000000000000000000000000000000000a77ad';
    const quote = await requestQuote(gateway, attacker, {
      originCurrency: zeroAddress,
      destinationCurrency: tokenOf(chainB, 'USDC'),
      amount: parseEther('1').toString(),
      recipient,
    });
    await executeSteps(gateway, quote.steps, attacker);
    await waitForStatus(gateway, quote.steps.at(-1)!.requestId, ['success']);
    expect(await usdcOf(recipient)).toBe(BigInt(quote.details.currencyOut.amount));
  });
});
