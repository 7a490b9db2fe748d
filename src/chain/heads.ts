import { BlockNotFoundError, type PublicClient } from 'viem';
import WebSocket from 'ws';
import type { Logger } from '../core/logger.js';
import type { HeaderLogHints } from './logsBloom.js';
import { normalizeHex } from '../store/mappers.js';

/** A new block head, as the node announced it. */
export interface Head extends HeaderLogHints {
  number: bigint;
  /** Lower-case hex, as the store keeps block hashes. */
  hash: string;
  parentHash: string;
}

/**
 * The pushed head, when a watcher's pass reads exactly its one block (`fromBlock` = `toBlock` = its number): then the
 * head's header speaks for the whole range (`mayHoldLogsOf`, `holdsNoTransaction`). Undefined for any other range.
 */
export const announcedBlock = (known: Head | undefined, fromBlock: bigint, toBlock: bigint): Head | undefined =>
  known !== undefined && fromBlock === known.number && toBlock === known.number ? known : undefined;

/**
 * New heads of one chain, pushed by its node over a websocket (`eth_subscribe` `newHeads`). The deposit watcher and
 * the transaction sender wake on each head instead of waiting for their next poll; their polling stays as the
 * fallback, at its short interval while the feed is down (`live()` false) and at a long safety interval while it
 * is up. The feed reconnects by itself (backoff from 100 ms to 5 s) and never throws.
 */
export interface HeadFeed {
  readonly chainId: number;
  /** Whether the subscription is established now: heads are being pushed. */
  live(): boolean;
  /**
   * Undefined while the feed is not live; else a number that changes at every pushed head and at every new
   * subscription (a reconnect may have missed heads), so state read at one version is current while it holds.
   */
  version(): number | undefined;
  /** Calls `listener` on every pushed head (never for a head the polling found); returns the unsubscribe. */
  onHead(listener: (head: Head) => void): () => void;
  start(): void;
  stop(): Promise<void>;
}

/**
 * Canonical block hashes for one pass of a watcher, each read at most once (null: no such block now). `known` seeds
 * it with what a pushed head told: its own hash and its parent's, as canonical as a read at the moment of the push.
 */
export function blockHashReader(client: PublicClient, known?: Head): (blockNumber: bigint) => Promise<string | null> {
  const hashes = new Map<bigint, Promise<string | null>>();
  if (known !== undefined) {
    hashes.set(known.number, Promise.resolve(known.hash));
    if (known.number > 0n) hashes.set(known.number - 1n, Promise.resolve(known.parentHash));
  }
  return (blockNumber) => {
    let hash = hashes.get(blockNumber);
    if (hash === undefined) {
      hash = client.getBlock({ blockNumber }).then(
        (block) => normalizeHex(block.hash),
        (error: unknown) => {
          if (error instanceof BlockNotFoundError) return null;
          throw error;
        },
      );
      hashes.set(blockNumber, hash);
    }
    return hash;
  };
}

export interface CreateHeadFeedParameters {
  chainId: number;
  /** The node's websocket RPC (`ws://` or `wss://`). */
  url: string;
  log: Logger;
  /** Milliseconds to wait for the socket to open and the subscription to be answered. Default 5,000. */
  connectTimeoutMs?: number;
}

const MIN_BACKOFF_MS = 100;
const MAX_BACKOFF_MS = 5_000;

export function createHeadFeed(params: CreateHeadFeedParameters): HeadFeed {
  const { chainId, url, log } = params;
  const connectTimeoutMs = params.connectTimeoutMs ?? 5_000;
  const listeners = new Set<(head: Head) => void>();
  const context = { chainId };
  let socket: WebSocket | undefined;
  let subscribed = false;
  let stopping = false;
  let started = false;
  let backoffMs = MIN_BACKOFF_MS;
  let retry: NodeJS.Timeout | undefined;
  let connectTimer: NodeJS.Timeout | undefined;
  /** Whether the last connection failed: an outage is logged once at warn, then at debug until it ends. */
  let failing = false;
  let closed: Promise<void> = Promise.resolve();
  let version = 0;

  function emit(head: Head): void {
    for (const listener of [...listeners]) {
      try {
        listener(head);
      } catch (error) {
        log.error({ ...context, err: error }, 'a head listener threw');
      }
    }
  }

  function connect(): void {
    if (stopping) return;
    const ws = new WebSocket(url, { handshakeTimeout: connectTimeoutMs });
    socket = ws;
    let finish!: () => void;
    closed = new Promise((resolve) => (finish = resolve));
    connectTimer = setTimeout(() => ws.terminate(), connectTimeoutMs);
    ws.on('open', () => {
      ws.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_subscribe', params: ['newHeads'] }));
    });
    ws.on('message', (raw: WebSocket.RawData) => {
      let message: { id?: number; result?: unknown; error?: unknown; method?: string; params?: { result?: unknown } };
      try {
        message = JSON.parse(textOf(raw)) as typeof message;
      } catch {
        return;
      }
      if (message.id === 1) {
        clearTimeout(connectTimer);
        if (message.error !== undefined || typeof message.result !== 'string') {
          log.warn({ ...context, error: message.error }, 'head feed: the node refused eth_subscribe; polling only');
          ws.close();
          return;
        }
        subscribed = true;
        version++;
        backoffMs = MIN_BACKOFF_MS;
        if (failing) log.info(context, 'head feed: subscribed again');
        else log.debug(context, 'head feed: subscribed to new heads');
        failing = false;
        return;
      }
      if (message.method !== 'eth_subscription') return;
      const head = message.params?.result as
        | { number?: unknown; hash?: unknown; parentHash?: unknown; transactionsRoot?: unknown; logsBloom?: unknown }
        | undefined;
      if (typeof head?.number !== 'string' || typeof head.hash !== 'string' || typeof head.parentHash !== 'string')
        return;
      version++;
      emit({
        number: BigInt(head.number),
        hash: head.hash.toLowerCase(),
        parentHash: head.parentHash.toLowerCase(),
        // What the watcher may use to skip reading the block's logs (`mayHoldLogsOf`); absent when not sent.
        ...(typeof head.transactionsRoot === 'string' ? { transactionsRoot: head.transactionsRoot.toLowerCase() } : {}),
        ...(typeof head.logsBloom === 'string' ? { logsBloom: head.logsBloom.toLowerCase() } : {}),
      });
    });
    ws.on('error', (error) => {
      if (!failing && !stopping) log.warn({ ...context, err: error }, 'head feed: websocket failed; polling meanwhile');
      else log.debug({ ...context, err: error }, 'head feed: websocket failed again');
      failing = true;
    });
    ws.on('close', () => {
      clearTimeout(connectTimer);
      const wasLive = subscribed;
      subscribed = false;
      if (socket === ws) socket = undefined;
      finish();
      if (stopping) return;
      if (wasLive && !failing) log.warn(context, 'head feed: websocket closed; polling until it reconnects');
      failing = true;
      retry = setTimeout(connect, backoffMs);
      backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
    });
  }

  return {
    chainId,
    live: () => subscribed,
    version: () => (subscribed ? version : undefined),
    onHead(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    start() {
      if (started) return;
      started = true;
      connect();
    },
    async stop() {
      stopping = true;
      clearTimeout(retry);
      clearTimeout(connectTimer);
      const current = socket;
      if (current !== undefined) {
        current.terminate();
        await closed;
      }
      listeners.clear();
    },
  };
}

function textOf(raw: WebSocket.RawData): string {
  if (Array.isArray(raw)) return Buffer.concat(raw).toString('utf8');
  return Buffer.isBuffer(raw) ? raw.toString('utf8') : Buffer.from(raw).toString('utf8');
}

export interface CreateHeadLoopParameters {
  /** The chain's pushed heads, if it has them. */
  heads: HeadFeed | undefined;
  /** Seconds between the chain's blocks. */
  blockTime: number;
  /** Polling while no head is pushed; default a quarter of the block time, at most 1 s. */
  pollIntervalMs?: number | undefined;
  /** One pass of the follower (it reports its own failures). */
  pass: () => Promise<void>;
  /** Sees each pushed head before the pass it starts. */
  onHead?: (head: Head) => void;
}

export interface HeadLoop {
  /** Listens for pushed heads; called before the follower's first pass, so a head during it starts another. */
  listen(): void;
  /** Runs `pass` at each pushed head, or at each poll: every two block times while the feed is live, else often. */
  run(): void;
  /** Stops listening and the loop; resolves once the pass in progress has ended. */
  stop(): Promise<void>;
}

/**
 * The loop of the chain follower (`follower/follower.ts`, under both deposit watchers): each pushed head
 * runs a pass at once (one after the running pass when it arrives meanwhile), and polling stays as the fallback:
 * every two block times while the feed is live, every `pollIntervalMs` while it is down or absent.
 */
export function createHeadLoop(params: CreateHeadLoopParameters): HeadLoop {
  const { heads, pass } = params;
  const pollIntervalMs = params.pollIntervalMs ?? Math.min(1_000, Math.max(1, (params.blockTime * 1_000) / 4));
  const backupIntervalMs = Math.max(pollIntervalMs, params.blockTime * 2_000);
  let stopped = false;
  let loop: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  let wake: (() => void) | undefined;
  /** A head was pushed while a pass was running: run another pass at once instead of sleeping. */
  let headPending = false;
  let unsubscribe: (() => void) | undefined;

  function onHead(head: Head): void {
    params.onHead?.(head);
    if (wake !== undefined) wake();
    else headPending = true;
  }

  async function run(): Promise<void> {
    while (!stopped) {
      if (!headPending) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, heads?.live() ? backupIntervalMs : pollIntervalMs);
        });
        wake = undefined;
        clearTimeout(timer);
      }
      headPending = false;
      if (stopped) break;
      await pass();
    }
  }

  return {
    listen() {
      if (!stopped) unsubscribe ??= heads?.onHead(onHead);
    },
    run() {
      if (!stopped) loop ??= run();
    },
    async stop() {
      stopped = true;
      unsubscribe?.();
      clearTimeout(timer);
      wake?.();
      await loop;
    },
  };
}
