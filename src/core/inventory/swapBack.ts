/**
 * The rebalancing job's swap back: tokens that pile up in the solver's wallet beyond their target (MNR that users
 * pay in and settlements release) are sold through the chain's pools into its WETH or USDC, by the solver's own
 * sender, within a maximum slippage; the receipt books the swap in the ledger (`swappedBack`, `solver` ↔ `trade`).
 *
 * Per chain and token with a target, at most once per interval: the surplus is what is available (on chain, less
 * what fills in flight will take) above the target; the route is priced on the pools' live state, and skipped
 * (with a warning) when it would pay less than the oracle's value of the surplus by more than `maxSlippageBps` (a
 * shallow pool, or one moved against the solver); otherwise the router is approved once, then one router call swaps
 * exactly the surplus with the pool's quote less `maxSlippageBps` as its minimum, so a pool moved between the
 * quote and the swap reverts it rather than selling cheap.
 */
import {
  encodeFunctionData,
  erc20Abi,
  keccak256,
  maxUint256,
  parseUnits,
  toHex,
  zeroAddress,
  type Address,
} from 'viem';
import { getLiveOutgoingTx, listUnminedOutgoingTxs } from '../../store/outgoingTxs.repository.js';
import { DEX_HUB_SYMBOLS, type ChainConfig, type CurrencyConfig } from '../chains/types.js';
import { createServiceSkips } from '../chains/serviceSkips.js';
import type { CoreContext } from '../context.js';
import type { DexRoute } from '../dex/route.js';
import { routerSwapCall } from '../dex/routerCalls.js';
import { errorMessage } from '../errors.js';
import { convert, toUsdMicros } from '../market.js';
import { createPeriodicJob } from '../periodicJob.js';
import type { TransactionSender } from '../ports/solver.js';
import { committedFills } from './inventory.js';

export interface SwapBackSettings {
  /**
   * The balance (whole units, a decimal string) above which a token is swapped back: by `<chainId>:<currency id>`
   * for one chain, or by `<currency id>` for every chain that lists it. A token without a target is never swapped.
   */
  targets: ReadonlyMap<string, string>;
  /** Most the swap may pay below the oracle's value of the surplus (bps): the pools' fee, impact and any move. */
  maxSlippageBps: number;
  /** How often the job looks (ms): at most one swap per token per interval. */
  intervalMs: number;
}

export const defaultSwapBackSettings: SwapBackSettings = {
  targets: new Map(),
  maxSlippageBps: 100,
  intervalMs: 600_000,
};

/** What a pass did for one chain and token over its target. */
export type SwapBackOutcome =
  | {
      outcome: 'swapped';
      chainId: number;
      currency: Address;
      amountIn: bigint;
      tokenOut: Address;
      amountOut: bigint;
      minAmountOut: bigint;
      slippageBps: bigint;
      hash: string;
    }
  | { outcome: 'skipped' | 'failed'; chainId: number; currency: Address; reason: string };

export interface SwapBack {
  start(): void;
  /** One pass now; resolves with what it did per token over its target. */
  runNow(): Promise<SwapBackOutcome[]>;
  stop(): Promise<void>;
}

/** The target of `currency` on `chain`, in its smallest units; undefined without one. */
export function swapBackTarget(
  settings: SwapBackSettings,
  chain: ChainConfig,
  currency: CurrencyConfig,
): bigint | undefined {
  const whole = settings.targets.get(`${chain.id}:${currency.id}`) ?? settings.targets.get(currency.id);
  return whole === undefined ? undefined : parseUnits(whole, currency.decimals);
}

/** Seconds a swap back stays valid at the router. */
const DEADLINE_SECONDS = 600n;

export function createSwapBack({
  ctx,
  senders,
  settings,
  inService,
}: {
  ctx: CoreContext;
  senders: ReadonlyMap<number, TransactionSender>;
  settings: SwapBackSettings;
  inService?: ((chainId: number) => boolean) | undefined;
}): SwapBack {
  const { log } = ctx;
  const skips = createServiceSkips({
    job: 'swap back',
    inService,
    reason: (chainId) => ctx.chainStatus?.chainBlocked(chainId) ?? null,
    log,
  });
  const job = createPeriodicJob(settings.intervalMs, pass);

  async function pass(): Promise<SwapBackOutcome[]> {
    const outcomes: SwapBackOutcome[] = [];
    if (settings.targets.size === 0 || ctx.dex === undefined) return outcomes;
    for (const chain of ctx.config.chains) {
      if (job.stopped) break;
      const sender = senders.get(chain.id);
      if (sender === undefined || !ctx.dex.chainIds().includes(chain.id) || skips.skip(chain.id)) continue;
      for (const currency of chain.currencies) {
        const target = swapBackTarget(settings, chain, currency);
        if (target === undefined || currency.address === zeroAddress || isHub(currency)) continue;
        try {
          const outcome = await swapBackToken(ctx, settings, chain, currency, target, sender);
          if (outcome !== undefined) {
            outcomes.push(outcome);
            ctx.metrics?.swapBack?.(chain.id, currency.symbol, outcome.outcome);
          }
        } catch (error) {
          const reason = errorMessage(error);
          log.error({ chainId: chain.id, currency: currency.symbol, err: error }, 'swap back failed');
          outcomes.push({ outcome: 'failed', chainId: chain.id, currency: currency.address, reason });
          ctx.metrics?.swapBack?.(chain.id, currency.symbol, 'failed');
        }
      }
    }
    return outcomes;
  }

  return {
    start() {
      void job.start();
    },
    runNow: () => job.runNow(),
    stop: () => job.stop(),
  };
}

/** The best route from the surplus into one of the chain's hubs, by the USD value of what it pays. */
async function bestRoute(ctx: CoreContext, chain: ChainConfig, currency: CurrencyConfig, amountIn: bigint) {
  let best: { route: DexRoute; hub: CurrencyConfig; usd: bigint } | undefined;
  for (const hub of chain.currencies.filter((candidate) => candidate.address !== zeroAddress && isHub(candidate))) {
    const quote = ctx.dex!.quoteExactIn({
      chainId: chain.id,
      tokenIn: currency.address,
      tokenOut: hub.address,
      amountIn,
    });
    if (!quote.ok) continue;
    const usd = toUsdMicros(quote.route.amountOut, hub.decimals, await ctx.market.usdPrice(chain.id, hub));
    if (best === undefined || usd > best.usd) best = { route: quote.route, hub, usd };
  }
  return best;
}

async function swapBackToken(
  ctx: CoreContext,
  settings: SwapBackSettings,
  chain: ChainConfig,
  currency: CurrencyConfig,
  target: bigint,
  sender: TransactionSender,
): Promise<SwapBackOutcome | undefined> {
  const { log } = ctx;
  const [onChain, committed] = await Promise.all([
    ctx.market.solverBalance(chain.id, currency.address),
    committedFills(ctx),
  ]);
  const available = onChain - (committed.get(`${chain.id}:${currency.address.toLowerCase()}`) ?? 0n);
  if (available <= target) return undefined;
  const surplus = available - target;
  const base = { chainId: chain.id, currency: currency.address };
  // One swap per token per interval, across restarts: the interval's slot names the transaction.
  const slot = BigInt(Math.floor(ctx.now() / settings.intervalMs));
  const requestId = keccak256(toHex(`swap-back:${chain.id}:${currency.address.toLowerCase()}:${slot}`));
  if ((await getLiveOutgoingTx(ctx.db, requestId, 'rebalance')) !== undefined)
    return { outcome: 'skipped', ...base, reason: 'swapped back already in this interval' };
  // A swap of an earlier interval still in flight (a restart left it unmined): its surplus is not sold twice.
  const unmined = await listUnminedOutgoingTxs(ctx.db, { chainId: chain.id, signer: sender.address });
  if (unmined.some((tx) => tx.kind === 'rebalance'))
    return { outcome: 'skipped', ...base, reason: 'a swap back is still in flight on this chain' };

  await ctx.dex!.refresh(chain.id);
  const best = await bestRoute(ctx, chain, currency, surplus);
  if (best === undefined) {
    log.warn({ ...base, surplus: surplus.toString() }, 'swap back skipped: no pool route carries the surplus');
    return { outcome: 'skipped', ...base, reason: 'no pool route carries the surplus' };
  }
  const { route, hub } = best;
  const slippageBps = await slippageOf(ctx, chain, currency, hub, route);
  if (slippageBps > BigInt(settings.maxSlippageBps)) {
    const reason = `the pools would pay ${slippageBps} bps below the oracle's value, above the ${settings.maxSlippageBps} bps maximum`;
    log.warn(
      { ...base, symbol: currency.symbol, surplus: surplus.toString(), amountOut: route.amountOut.toString() },
      `swap back skipped: ${reason}`,
    );
    return { outcome: 'skipped', ...base, reason };
  }

  const router = route.hops[0]!.router;
  await approveRouter(ctx, chain, currency, router, surplus, sender);
  const minAmountOut = (route.amountOut * BigInt(10_000 - settings.maxSlippageBps)) / 10_000n;
  const call = routerSwapCall(route, {
    recipient: sender.address,
    amountOutMinimum: minAmountOut,
    deadline: BigInt(Math.floor(ctx.now() / 1000)) + DEADLINE_SECONDS,
    v3RouterKind: chain.dex?.uniswapV3?.swapRouterKind ?? 'SwapRouter',
  });
  const record = await sender.send({ requestId, kind: 'rebalance', ...call });
  const receipt = await sender.waitForReceipt(record.id);
  ctx.market.invalidateSolverBalances(chain.id);
  if (receipt.status !== 'success') {
    log.warn({ ...base, hash: receipt.hash }, 'swap back reverted (the pool moved below its minimum); gas spent');
    return { outcome: 'failed', ...base, reason: `reverted: ${receipt.hash}` };
  }
  const received = (receipt.tokenTransfers ?? [])
    .filter((t) => t.token === hub.address.toLowerCase() && t.to === sender.address.toLowerCase())
    .reduce((sum, t) => sum + t.amount, 0n);
  log.info(
    {
      ...base,
      symbol: currency.symbol,
      amountIn: surplus.toString(),
      tokenOut: hub.symbol,
      amountOut: received.toString(),
      minAmountOut: minAmountOut.toString(),
      slippageBps: slippageBps.toString(),
      source: route.hops[0]!.source,
      hash: receipt.hash,
    },
    'swap back: surplus sold through the pools',
  );
  return {
    outcome: 'swapped',
    ...base,
    amountIn: surplus,
    tokenOut: hub.address,
    amountOut: received,
    minAmountOut,
    slippageBps,
    hash: receipt.hash,
  };
}

/** How far below the oracle's value of the input the route pays (bps); the route's own impact without a price. */
async function slippageOf(
  ctx: CoreContext,
  chain: ChainConfig,
  currency: CurrencyConfig,
  hub: CurrencyConfig,
  route: DexRoute,
): Promise<bigint> {
  let fair: bigint;
  try {
    const [priceIn, priceOut] = await Promise.all([
      ctx.market.usdPrice(chain.id, currency),
      ctx.market.usdPrice(chain.id, hub),
    ]);
    fair = convert(
      route.amountIn,
      { decimals: currency.decimals, price: priceIn },
      { decimals: hub.decimals, price: priceOut },
    );
  } catch {
    return route.priceImpactBps;
  }
  if (fair <= 0n || route.amountOut >= fair) return 0n;
  // Rounded up: a swap exactly at the limit is still within it, one a hair beyond is not.
  return ((fair - route.amountOut) * 10_000n + fair - 1n) / fair;
}

/** Approves the router for the token once (an unlimited allowance) when what it may take is short. */
async function approveRouter(
  ctx: CoreContext,
  chain: ChainConfig,
  currency: CurrencyConfig,
  router: Address,
  amount: bigint,
  sender: TransactionSender,
): Promise<void> {
  const allowance = await ctx.market.allowance(chain.id, sender.address, currency.address, router);
  if (allowance >= amount) return;
  const requestId = keccak256(
    toHex(`swap-back-approve:${chain.id}:${currency.address.toLowerCase()}:${router.toLowerCase()}:${allowance}`),
  );
  const record =
    (await getLiveOutgoingTx(ctx.db, requestId, 'rebalance')) ??
    (await sender.send({
      requestId,
      kind: 'rebalance',
      to: currency.address,
      data: encodeFunctionData({ abi: erc20Abi, functionName: 'approve', args: [router, maxUint256] }),
      value: 0n,
    }));
  const receipt = await sender.waitForReceipt(record.id);
  if (receipt.status !== 'success') throw new Error(`approving the router ${router} reverted: ${receipt.hash}`);
}

const isHub = (currency: CurrencyConfig): boolean => DEX_HUB_SYMBOLS.includes(currency.symbol.toUpperCase());
