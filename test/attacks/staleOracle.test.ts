/**
 * Attack: trade against a price the oracle no longer tracks. When a feed stops updating (or a stablecoin loses
 * its peg while the gateway prices it at a fixed USD 1), the gateway's quote is whatever the feed last said, and
 * an attacker who knows the real price buys the solver's inventory below it. Here the ETH/USD feed of chain A
 * goes stale (its answer older than the feed's `maxAgeSeconds` by the chain's clock) after the attacker quoted:
 * new quotes on it are refused 503 `PRICE_FETCH_FAILED`, and the attacker's deposit is held, not filled, with the
 * pause shown on `/ready`; once the feed answers again the held deposit is decided and filled. A stablecoin
 * priced at a fixed USD 1 is still checked against its feed: a depeg beyond `maxDeviationBps` stops quotes.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createTestClient,
  createWalletClient,
  erc20Abi,
  http,
  parseEther,
  parseUnits,
  zeroAddress,
  type Address,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { priceFeedAbi } from '../../generated/contracts/index.js';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import type { ChainConfig } from '../../src/core/chains/types.js';
import { parseConfigFile } from '../../src/server/configFile.js';
import { call } from '../helpers/conformance.js';
import { startConfiguredGateway } from '../helpers/configuredGateway.js';
import type { TestGateway } from '../helpers/gateway.js';
import { executeSteps, publicClientOf, requestQuote, tokenOf, waitForStatus } from '../helpers/quote.js';

const A = 31337;
const B = 31338;
const MAX_AGE = 60;

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let attacker: DevnetAccount;

beforeAll(async () => {
  gateway = await startConfiguredGateway((descriptor, chains) => ({
    chains: chains.map((chain): ChainConfig => {
      const devnetChain = descriptor.chains.find((c) => c.chainId === chain.id)!;
      const usdcFeed = devnetChain.tokens.find((t) => t.id === 'usdc')!.priceFeed;
      return {
        ...chain,
        nativeCurrency: {
          ...chain.nativeCurrency,
          price: { kind: 'aggregatorV3', feed: devnetChain.nativePriceFeed, maxAgeSeconds: MAX_AGE },
        },
        // USDC at a fixed USD 1, checked against its feed (2% band).
        currencies: chain.currencies.map((c) =>
          c.id === 'usdc' ? { ...c, price: { kind: 'fixed', usd: '1', feed: usdcFeed, maxDeviationBps: 200 } } : c,
        ),
      };
    }),
  }));
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  attacker = gateway.devnet.descriptor.accounts[0]!;
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

const pause = () => new Promise((resolve) => setTimeout(resolve, 1_200));

/** The devnet's feed owner publishes a new answer (8 decimals); waits out the gateway's one-block price cache. */
async function setAnswer(chain: DevnetChain, feed: Address, usd: string): Promise<void> {
  const deployer = gateway.devnet.descriptor.deployer;
  const wallet = createWalletClient({
    account: privateKeyToAccount(deployer.privateKey),
    chain: devnetViemChain(chain),
    transport: http(chain.rpcUrl),
  });
  const hash = await wallet.writeContract({
    address: feed,
    abi: priceFeedAbi,
    functionName: 'setAnswer',
    args: [parseUnits(usd, 8)],
  });
  await publicClientOf(chain).waitForTransactionReceipt({ hash });
  await pause();
}

const ethToUsdc = (recipient?: Address) => ({
  originCurrency: zeroAddress,
  destinationCurrency: tokenOf(chainB, 'USDC'),
  amount: parseEther('0.1').toString(),
  ...(recipient === undefined ? {} : { recipient }),
});

async function quoteError(): Promise<{ status: number; body: any }> {
  return call(gateway.url, 'getQuote', {
    body: { user: attacker.address, originChainId: A, destinationChainId: B, tradeType: 'EXACT_INPUT', ...ethToUsdc() },
  });
}

async function readiness(): Promise<Record<string, { ok: boolean; message?: string }>> {
  const response = await fetch(`${gateway.url}/ready`);
  return ((await response.json()) as { checks: Record<string, { ok: boolean; message?: string }> }).checks;
}

describe('stale oracle', () => {
  it('stops quotes (503 PRICE_FETCH_FAILED) and holds a paid fill until the feed answers again', async () => {
    const recipient: Address = '0x00000000000000000000000000000000005a1e01';
    const quote = await requestQuote(gateway, attacker, ethToUsdc(recipient));
    const requestId = quote.steps.at(-1)!.requestId;

    // The feed stops updating: chain A's clock runs past its answer's maximum age.
    await createTestClient({
      mode: 'anvil',
      chain: devnetViemChain(chainA),
      transport: http(chainA.rpcUrl),
    }).increaseTime({ seconds: MAX_AGE * 2 });
    await createTestClient({ mode: 'anvil', chain: devnetViemChain(chainA), transport: http(chainA.rpcUrl) }).mine({
      blocks: 1,
    });
    await pause();

    const refused = await quoteError();
    expect(refused.status, JSON.stringify(refused.body)).toBe(503);
    expect(refused.body).toMatchObject({ errorCode: 'PRICE_FETCH_FAILED' });
    expect(refused.body.message).toMatch(/stale/);

    // The attacker pays the quote made before: the solver holds it instead of filling at the stale price.
    await executeSteps(gateway, quote.steps, attacker);
    const deadline = Date.now() + 30_000;
    let checks = await readiness();
    while (checks[`fills:${B}`] === undefined && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      checks = await readiness();
    }
    expect(checks[`fills:${B}`]?.message).toMatch(/stale/);
    expect((await waitForStatus(gateway, requestId, ['pending'])).status).toBe('pending');
    const usdc = () =>
      publicClientOf(chainB).readContract({
        address: tokenOf(chainB, 'USDC'),
        abi: erc20Abi,
        functionName: 'balanceOf',
        args: [recipient],
      });
    expect(await usdc()).toBe(0n);

    // The feed answers again (same price): the held deposit is decided and filled; nothing was lost.
    await setAnswer(chainA, chainA.nativePriceFeed, '3000');
    await waitForStatus(gateway, requestId, ['success']);
    expect(await usdc()).toBe(BigInt(quote.details.currencyOut.amount));
    expect((await readiness())[`fills:${B}`]).toBeUndefined();
  });

  it('a stablecoin at a fixed USD 1 whose feed shows a depeg stops quotes on it', async () => {
    const usdcFeed = chainB.tokens.find((t) => t.id === 'usdc')!.priceFeed;
    await setAnswer(chainB, usdcFeed, '0.95');
    try {
      // Feed answers are cached for up to a block: the refusal comes with the first read after the move.
      await vi.waitFor(
        async () => {
          const refused = await quoteError();
          expect(refused.status, JSON.stringify(refused.body)).toBe(503);
          expect(refused.body).toMatchObject({ errorCode: 'PRICE_FETCH_FAILED' });
          expect(refused.body.message).toMatch(/USDC.*200 bps from its fixed price/);
        },
        { timeout: 15_000, interval: 250 },
      );
    } finally {
      await setAnswer(chainB, usdcFeed, '0.99');
    }
    // Within the band the fixed price is used.
    const quote = await vi.waitFor(() => requestQuote(gateway, attacker, ethToUsdc()), {
      timeout: 15_000,
      interval: 250,
    });
    expect(quote.details.currencyOut.amount).toBeTruthy();
  });

  it('a config file gives every feed without its own maxAgeSeconds the default maximum age', () => {
    const feed = '0x71041dddad3595F9CEd3DcCFBe3D1F4b0a16Bb70';
    const contracts = Object.fromEntries(
      [
        'depository',
        'receiver',
        'multicaller',
        'onlyOwnerMulticaller',
        'approvalProxy',
        'erc20Router',
        'multicall3',
      ].map((name, i) => [name, `0x${String(i + 1).padStart(40, '0')}`]),
    );
    const chain = {
      id: 8453,
      name: 'base',
      httpRpcUrl: 'https://base.example/rpc',
      contracts,
      nativeCurrency: {
        id: 'eth',
        symbol: 'ETH',
        name: 'Ether',
        address: zeroAddress,
        decimals: 18,
        price: { kind: 'aggregatorV3', feed },
      },
      currencies: [
        {
          id: 'usdc',
          symbol: 'USDC',
          name: 'USD Coin',
          address: `0x${'1'.repeat(40)}`,
          decimals: 6,
          price: { kind: 'fixed', usd: '1', feed, maxAgeSeconds: 90_000 },
        },
        {
          id: 'usdt',
          symbol: 'USDT',
          name: 'Tether',
          address: `0x${'2'.repeat(40)}`,
          decimals: 6,
          price: { kind: 'fixed', usd: '1' },
        },
      ],
    };
    const env = { GATEWAY_SOLVER_PRIVATE_KEY: `0x${'11'.repeat(32)}` };
    const [base] = parseConfigFile(JSON.stringify({ chains: [chain] }), env).chains;
    expect(base!.nativeCurrency.price).toMatchObject({ maxAgeSeconds: 3_600 });
    expect(base!.currencies[0]!.price).toMatchObject({ maxAgeSeconds: 90_000 });
    expect(base!.currencies[1]!.price).not.toHaveProperty('maxAgeSeconds');
    const [custom] = parseConfigFile(JSON.stringify({ chains: [chain], prices: { maxAgeSeconds: 120 } }), env).chains;
    expect(custom!.nativeCurrency.price).toMatchObject({ maxAgeSeconds: 120 });
  });
});
