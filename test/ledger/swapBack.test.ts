/**
 * The rebalancing job's swap back on the devnet: the solver holds MNR above its target on chain B, and one pass
 * sells exactly the surplus through B's WETH/MNR pool with its own sender (approve, then one router call): MNR at
 * the target, WETH up by what the pool paid (what Uniswap's QuoterV2 said before the pass), the ledger reconciled
 * with the chains. On chain A a large trade has moved the pool against MNR: the swap would pay more than the
 * maximum slippage below the oracle, so nothing is sent and a warning is logged. A second pass in the same interval
 * swaps nothing more.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createWalletClient,
  erc20Abi,
  formatUnits,
  http,
  maxUint256,
  parseAbi,
  parseEther,
  type Address,
  type Hex,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { devnetViemChain, type DevnetAccount, type DevnetChain } from '../../src/chain/devnet.js';
import type { SwapBackOutcome } from '../../src/core/inventory/swapBack.js';
import { startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { expectLedgerReconciled } from '../helpers/ledger.js';
import { publicClientOf, tokenOf } from '../helpers/quote.js';

const quoterAbi = parseAbi([
  'struct QuoteExactInputSingleParams { address tokenIn; address tokenOut; uint256 amountIn; uint24 fee; uint160 sqrtPriceLimitX96; }',
  'function quoteExactInputSingle(QuoteExactInputSingleParams params) returns (uint256 amountOut, uint160 sqrtPriceX96After, uint32 initializedTicksCrossed, uint256 gasEstimate)',
]);
const swapRouterAbi = parseAbi([
  'struct ExactInputSingleParams { address tokenIn; address tokenOut; uint24 fee; address recipient; uint256 deadline; uint256 amountIn; uint256 amountOutMinimum; uint160 sqrtPriceLimitX96; }',
  'function exactInputSingle(ExactInputSingleParams params) payable returns (uint256 amountOut)',
]);

let gateway: TestGateway;
let chainA: DevnetChain;
let chainB: DevnetChain;
let alice: DevnetAccount;
let solver: Address;
/** The job reads its targets on each pass: the test names them once the devnet is known. */
const targets = new Map<string, string>();
const lines: Array<{ level: number; msg: string; [key: string]: unknown }> = [];
const surplus = parseEther('2000');

beforeAll(async () => {
  gateway = await startTestGateway(
    { logLevel: 'info', logFormat: 'json' },
    {
      configure: (config) => ({ ...config, swapBack: { targets, maxSlippageBps: 100, intervalMs: 3_600_000 } }),
      server: { logDestination: { write: (line: string) => void lines.push(JSON.parse(line)) } },
    },
  );
  [chainA, chainB] = gateway.devnet.descriptor.chains as [DevnetChain, DevnetChain];
  alice = gateway.devnet.descriptor.accounts[0]!;
  solver = gateway.devnet.descriptor.solver.address;
}, 120_000);
afterAll(async () => {
  await gateway?.stop();
});

const balance = (chain: DevnetChain, symbol: string, owner: Address) =>
  publicClientOf(chain).readContract({
    address: tokenOf(chain, symbol),
    abi: erc20Abi,
    functionName: 'balanceOf',
    args: [owner],
  });

/** What `chain`'s WETH/MNR 0.3% pool pays for `amountIn` MNR now, by Uniswap's QuoterV2. */
async function poolPaysWeth(chain: DevnetChain, amountIn: bigint): Promise<bigint> {
  const { result } = await publicClientOf(chain).simulateContract({
    address: chain.dex.uniswapV3.quoterV2,
    abi: quoterAbi,
    functionName: 'quoteExactInputSingle',
    args: [
      { tokenIn: tokenOf(chain, 'MNR'), tokenOut: tokenOf(chain, 'WETH'), amountIn, fee: 3000, sqrtPriceLimitX96: 0n },
    ],
  });
  return result[0];
}

/** Alice sells `amount` MNR into `chain`'s WETH/MNR pool through the SwapRouter: MNR is then cheaper there. */
async function dumpMnr(chain: DevnetChain, amount: bigint): Promise<void> {
  const wallet = createWalletClient({
    account: privateKeyToAccount(alice.privateKey),
    chain: devnetViemChain(chain),
    transport: http(chain.rpcUrl),
  });
  const client = publicClientOf(chain);
  const router = chain.dex.uniswapV3.swapRouter;
  const mined = async (hash: Hex) => expect((await client.waitForTransactionReceipt({ hash })).status).toBe('success');
  await mined(
    await wallet.writeContract({
      address: tokenOf(chain, 'MNR'),
      abi: erc20Abi,
      functionName: 'approve',
      args: [router, maxUint256],
    }),
  );
  await mined(
    await wallet.writeContract({
      address: router,
      abi: swapRouterAbi,
      functionName: 'exactInputSingle',
      args: [
        {
          tokenIn: tokenOf(chain, 'MNR'),
          tokenOut: tokenOf(chain, 'WETH'),
          fee: 3000,
          recipient: alice.address,
          deadline: BigInt(Math.floor(Date.now() / 1000) + 600),
          amountIn: amount,
          amountOutMinimum: 0n,
          sqrtPriceLimitX96: 0n,
        },
      ],
    }),
  );
}

describe('swap back of a surplus through the pools', () => {
  let outcomes: SwapBackOutcome[];
  const before = { mnrA: 0n, mnrB: 0n, wethA: 0n, wethB: 0n, quotedB: 0n };

  beforeAll(async () => {
    // Chain A's pool takes 200,000 MNR (USD 100,000) from a trader: MNR there is now far below the oracle.
    await dumpMnr(chainA, parseEther('200000'));
    before.mnrA = await balance(chainA, 'MNR', solver);
    before.mnrB = await balance(chainB, 'MNR', solver);
    before.wethA = await balance(chainA, 'WETH', solver);
    before.wethB = await balance(chainB, 'WETH', solver);
    before.quotedB = await poolPaysWeth(chainB, surplus);
    // Each chain's target: 2,000 MNR below what the solver holds.
    targets.set(`${chainA.chainId}:mnr`, formatUnits(before.mnrA - surplus, 18));
    targets.set(`${chainB.chainId}:mnr`, formatUnits(before.mnrB - surplus, 18));
    outcomes = await gateway.server.solver!.swapBack.runNow();
  }, 60_000);

  it('sells exactly the surplus on chain B: MNR at its target, WETH up by what the pool paid', async () => {
    const swapped = outcomes.find((outcome) => outcome.chainId === chainB.chainId);
    expect(swapped).toMatchObject({ outcome: 'swapped', amountIn: surplus, tokenOut: tokenOf(chainB, 'WETH') });
    if (swapped?.outcome !== 'swapped') throw new Error('not swapped');
    expect(await balance(chainB, 'MNR', solver)).toBe(before.mnrB - surplus);
    expect(swapped.amountOut).toBe(before.quotedB);
    expect(await balance(chainB, 'WETH', solver)).toBe(before.wethB + before.quotedB);
    // 2,000 MNR is USD 1,000, 1/3 WETH at the oracle: the pool's 0.3 % fee and a little impact, within 1 %.
    expect(swapped.slippageBps).toBeLessThanOrEqual(100n);
    expect(swapped.minAmountOut).toBe((before.quotedB * 9_900n) / 10_000n);
    expect(lines.some((line) => line.msg === 'swap back: surplus sold through the pools')).toBe(true);
  });

  it('sends nothing on chain A, whose pool would pay beyond the maximum slippage, and warns', async () => {
    const skipped = outcomes.find((outcome) => outcome.chainId === chainA.chainId);
    expect(skipped).toMatchObject({ outcome: 'skipped' });
    if (skipped?.outcome !== 'skipped') throw new Error('not skipped');
    expect(skipped.reason).toMatch(/above the 100 bps maximum/);
    expect(await balance(chainA, 'MNR', solver)).toBe(before.mnrA);
    expect(await balance(chainA, 'WETH', solver)).toBe(before.wethA);
    const warning = lines.find((line) => line.level === 40 && line.msg.startsWith('swap back skipped'));
    expect(warning).toMatchObject({ chainId: chainA.chainId });
  });

  it('books the swap in the ledger: the ledger reconciles with the chains', async () => {
    await expectLedgerReconciled(gateway);
  });

  it('swaps at most once per token per interval', async () => {
    // Chain B is above its target again (the target moved down), but it was swapped in this interval.
    targets.set(`${chainB.chainId}:mnr`, formatUnits(before.mnrB - surplus * 2n, 18));
    const again = await gateway.server.solver!.swapBack.runNow();
    expect(again.find((outcome) => outcome.chainId === chainB.chainId)).toMatchObject({
      outcome: 'skipped',
      reason: 'swapped back already in this interval',
    });
    expect(await balance(chainB, 'MNR', solver)).toBe(before.mnrB - surplus);
  });
});
