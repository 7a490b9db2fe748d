/**
 * The DEX book: the state of every pool a swap may route through, per chain, kept in memory and refreshed at each
 * pushed head (one `aggregate3` per chain while prices stay in their windows), and quotes priced from that memory
 * alone with exact Uniswap math. A quote makes no RPC call. See docs/dex-pricing.md.
 */
import type { Address, PublicClient } from 'viem';
import type { Logger } from '../../core/logger.js';
import type { DexSource, PoolState } from '../../core/dex/poolState.js';
import {
  indexPools,
  quoteExactIn,
  quoteExactOut,
  type DexChainState,
  type DexQuote,
  type QuoteParameters,
} from '../../core/dex/route.js';
import type { HeadFeed } from '../heads.js';
import { discoverPools } from './discoverPools.js';
import { readPoolStates, type PoolInfo } from './readPoolStates.js';

/** Bitmap words read each side of the price's word by default (a word spans 256 × tickSpacing ticks). */
export const DEFAULT_WINDOW_WORDS = 2;

export interface DexChainConfig {
  chainId: number;
  client: Pick<PublicClient, 'request'>;
  multicall3: Address;
  uniswapV3?: { factory: Address; router: Address; feeTiers?: readonly number[] };
  uniswapV2?: { factory: Address; router: Address };
  /** The tokens to route among: every pool between two of them is tracked. */
  tokens: readonly Address[];
  /** The tokens a two-hop route may pass through (WETH, USDC). */
  hubs: readonly Address[];
  /** Bitmap words read each side of the current price; default `DEFAULT_WINDOW_WORDS`. */
  windowWords?: number;
  /** When given, the book refreshes the chain at each head it pushes (after `start()`). */
  heads?: HeadFeed;
}

export interface CreateDexBookParameters {
  chains: readonly DexChainConfig[];
  log: Logger;
}

export interface DexQuoteParameters {
  chainId: number;
  tokenIn: Address;
  tokenOut: Address;
  /** Default every source configured on the chain. */
  sources?: readonly DexSource[];
  /** The cost of `gas` units in tokenOut's smallest unit, to compare routes net of gas. */
  costOfGas?: (gas: bigint) => bigint;
}

export interface DexQuoteExactInParameters extends DexQuoteParameters {
  amountIn: bigint;
}

export interface DexQuoteExactOutParameters extends DexQuoteParameters {
  amountOut: bigint;
}

export interface DexBook {
  /** Finds the chain's pools through the factories (at start, and when the token list or pools change). */
  discover(chainId: number): Promise<readonly PoolInfo[]>;
  /**
   * Reads the chain's pool state at `blockNumber` (default the latest) into memory, discovering the pools first if
   * that was never done; resolves with the state now held. Concurrent calls share one read.
   */
  refresh(chainId: number, blockNumber?: bigint): Promise<DexChainState>;
  /** The state held for the chain, if any. */
  state(chainId: number): DexChainState | undefined;
  /** The best exact-input route on the state in memory; no RPC call. */
  quoteExactIn(params: DexQuoteExactInParameters): DexQuote;
  /** The route that buys exactly `amountOut` for the least input, on the state in memory; no RPC call. */
  quoteExactOut(params: DexQuoteExactOutParameters): DexQuote;
  /** Refreshes every chain once, then at each pushed head of the chains given a head feed. */
  start(): Promise<void>;
  stop(): Promise<void>;
}

interface ChainBook {
  config: DexChainConfig;
  pools: readonly PoolInfo[] | undefined;
  state: DexChainState | undefined;
  byAddress: Map<Address, PoolState>;
  inFlight: Promise<DexChainState> | undefined;
  /** A head that arrived while a refresh was in flight: read once more when it ends. */
  queued: bigint | undefined;
  unsubscribe: (() => void) | undefined;
}

export function createDexBook({ chains, log }: CreateDexBookParameters): DexBook {
  const books = new Map<number, ChainBook>();
  for (const config of chains) {
    books.set(config.chainId, {
      config,
      pools: undefined,
      state: undefined,
      byAddress: new Map(),
      inFlight: undefined,
      queued: undefined,
      unsubscribe: undefined,
    });
  }
  let stopped = false;

  function bookOf(chainId: number): ChainBook {
    const book = books.get(chainId);
    if (book === undefined) throw new Error(`the DEX book has no chain ${chainId}`);
    return book;
  }

  async function discover(chainId: number): Promise<readonly PoolInfo[]> {
    const book = bookOf(chainId);
    const { client, multicall3, tokens, uniswapV3, uniswapV2 } = book.config;
    book.pools = await discoverPools({
      client,
      multicall3,
      tokens,
      v3Factory: uniswapV3?.factory,
      v2Factory: uniswapV2?.factory,
      feeTiers: uniswapV3?.feeTiers,
    });
    return book.pools;
  }

  async function read(book: ChainBook, blockNumber: bigint | undefined): Promise<DexChainState> {
    const { chainId, client, multicall3, windowWords } = book.config;
    const pools = book.pools ?? (await discover(chainId));
    const result = await readPoolStates({
      client,
      multicall3,
      pools,
      windowWords: windowWords ?? DEFAULT_WINDOW_WORDS,
      blockNumber,
      previous: book.byAddress,
    });
    if (result.failed.length > 0) log.warn({ chainId, pools: result.failed }, 'dex book: pools could not be read');
    // A read that finished after a later one keeps the later state.
    if (book.state === undefined || result.blockNumber >= book.state.blockNumber) {
      book.state = indexPools(chainId, result.blockNumber, result.pools);
      book.byAddress = new Map(result.pools.map((pool) => [pool.address, pool]));
    }
    return book.state;
  }

  function refresh(chainId: number, blockNumber?: bigint): Promise<DexChainState> {
    const book = bookOf(chainId);
    if (book.inFlight !== undefined) {
      if (blockNumber !== undefined) book.queued = blockNumber;
      return book.inFlight;
    }
    const run = read(book, blockNumber).finally(() => {
      book.inFlight = undefined;
      const queued = book.queued;
      book.queued = undefined;
      if (queued !== undefined && !stopped && (book.state === undefined || queued > book.state.blockNumber))
        refresh(chainId, queued).catch((error: unknown) =>
          log.warn({ chainId, err: error }, 'dex book: refresh failed'),
        );
    });
    book.inFlight = run;
    return run;
  }

  const noState = (): DexQuote => ({ ok: false, shortfall: 'insufficient-state', skipped: [] });

  /** The chain's state and the core's routing parameters; undefined before the chain's first refresh. */
  function routingOf({ chainId, tokenIn, tokenOut, sources, costOfGas }: DexQuoteParameters) {
    const book = books.get(chainId);
    if (book?.state === undefined) return undefined;
    const { uniswapV3, uniswapV2, hubs } = book.config;
    const params: QuoteParameters = {
      tokenIn,
      tokenOut,
      sources,
      hubs,
      routers: { 'uniswap-v3': uniswapV3?.router, 'uniswap-v2': uniswapV2?.router },
      costOfGas,
    };
    return { state: book.state, params };
  }

  return {
    discover,
    refresh,
    state: (chainId) => books.get(chainId)?.state,
    quoteExactIn({ amountIn, ...params }) {
      const routing = routingOf(params);
      return routing === undefined ? noState() : quoteExactIn(routing.state, { ...routing.params, amountIn });
    },
    quoteExactOut({ amountOut, ...params }) {
      const routing = routingOf(params);
      return routing === undefined ? noState() : quoteExactOut(routing.state, { ...routing.params, amountOut });
    },
    async start() {
      await Promise.all(
        [...books.values()].map(async (book) => {
          const { chainId, heads } = book.config;
          try {
            await refresh(chainId);
          } catch (error) {
            log.warn({ chainId, err: error }, 'dex book: first refresh failed; the next head retries');
          }
          book.unsubscribe = heads?.onHead((head) => {
            refresh(chainId, head.number).catch((error: unknown) =>
              log.warn({ chainId, err: error }, 'dex book: refresh failed'),
            );
          });
        }),
      );
    },
    async stop() {
      stopped = true;
      for (const book of books.values()) book.unsubscribe?.();
      await Promise.allSettled([...books.values()].map((book) => book.inFlight ?? Promise.resolve()));
    },
  };
}
