/**
 * The DEX book: the state of every pool a swap may route through, per chain, kept in memory and refreshed at each
 * pushed head (one `aggregate3` per chain while prices stay in their windows), and quotes priced from that memory
 * alone with exact Uniswap math. A quote makes no RPC call. See docs/dex-pricing.md.
 */
import type { Address, PublicClient } from 'viem';
import type { Logger } from '../../core/logger.js';
import type { PoolState } from '../../core/dex/poolState.js';
import type { DexLiquidity, DexQuoteParameters } from '../../core/dex/liquidity.js';
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
  /** How often a chain without pushed heads is read again; default `DEFAULT_POLL_INTERVAL_MS`. */
  pollIntervalMs?: number;
  /** Unix ms; default `Date.now`. */
  now?: () => number;
}

/** A chain whose node pushes no heads is read this often. */
export const DEFAULT_POLL_INTERVAL_MS = 2_000;

export interface DexBook extends DexLiquidity {
  /** Finds the chain's pools through the factories (at start, and when the token list or pools change). */
  discover(chainId: number): Promise<readonly PoolInfo[]>;
  /**
   * Refreshes every chain once, then at each pushed head of the chains given a head feed, and every
   * `pollIntervalMs` on every chain (which bounds the state's age when a feed stops pushing).
   */
  start(): Promise<void>;
  /**
   * Refreshes the chains at each head their feed pushes from now on (feeds created after the book, such as the
   * solver's).
   */
  followHeads(feeds: ReadonlyMap<number, HeadFeed>): void;
  stop(): Promise<void>;
}

interface ChainBook {
  config: DexChainConfig;
  pools: readonly PoolInfo[] | undefined;
  state: DexChainState | undefined;
  byAddress: Map<Address, PoolState>;
  /** When `state` was read (Unix ms). */
  readAt: number | undefined;
  inFlight: Promise<DexChainState> | undefined;
  /** A head that arrived while a refresh was in flight: read once more when it ends. */
  queued: bigint | undefined;
  unsubscribe: (() => void) | undefined;
  poll: ReturnType<typeof setInterval> | undefined;
}

export function createDexBook({ chains, log, pollIntervalMs, now = Date.now }: CreateDexBookParameters): DexBook {
  const books = new Map<number, ChainBook>();
  for (const config of chains) {
    books.set(config.chainId, {
      config,
      pools: undefined,
      state: undefined,
      readAt: undefined,
      byAddress: new Map(),
      inFlight: undefined,
      queued: undefined,
      unsubscribe: undefined,
      poll: undefined,
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
      book.readAt = now();
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
  function routingOf({ chainId, tokenIn, tokenOut, sources, costOfGas, mixSources }: DexQuoteParameters) {
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
      ...(mixSources === undefined ? {} : { mixSources }),
    };
    return { state: book.state, params };
  }

  const refreshQuietly = (chainId: number, blockNumber?: bigint) =>
    refresh(chainId, blockNumber).catch((error: unknown) =>
      log.warn({ chainId, err: error }, 'dex book: refresh failed'),
    );

  /** Reads the chain again when no head has refreshed it for an interval (a feed that stopped pushing, or none). */
  function startPolling(book: ChainBook): void {
    const interval = pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    book.poll = setInterval(() => {
      if (book.readAt !== undefined && now() - book.readAt < interval) return;
      void refreshQuietly(book.config.chainId);
    }, interval);
    book.poll.unref();
  }

  function follow(book: ChainBook, heads: HeadFeed): void {
    book.unsubscribe?.();
    book.unsubscribe = heads.onHead((head) => void refreshQuietly(book.config.chainId, head.number));
  }

  return {
    discover,
    refresh,
    chainIds: () => [...books.keys()],
    state: (chainId) => books.get(chainId)?.state,
    readAt: (chainId) => books.get(chainId)?.readAt,
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
          if (stopped) return;
          // The poll also bounds the state's age when a feed stops pushing (a dropped websocket).
          startPolling(book);
          if (heads !== undefined) follow(book, heads);
        }),
      );
    },
    followHeads(feeds) {
      for (const [chainId, feed] of feeds) {
        const book = books.get(chainId);
        if (book !== undefined && !stopped) follow(book, feed);
      }
    },
    async stop() {
      stopped = true;
      for (const book of books.values()) {
        book.unsubscribe?.();
        if (book.poll !== undefined) clearInterval(book.poll);
      }
      await Promise.allSettled([...books.values()].map((book) => book.inFlight ?? Promise.resolve()));
    },
  };
}
