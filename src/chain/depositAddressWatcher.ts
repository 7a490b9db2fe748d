import type { Kysely } from 'kysely';
import { erc20Abi, getAbiItem, numberToHex, zeroAddress, type Address, type Hex, type PublicClient } from 'viem';
import { chainCurrencies } from '../core/chains/requireChain.js';
import type { ChainConfig } from '../core/chains/types.js';
import type { Logger } from '../core/logger.js';
import { getCursor, setCursor, type ChainCursor } from '../store/cursors.repository.js';
import {
  listDepositAddressesSince,
  listTransfers,
  recordTransfer,
  updateTransfer,
  type InsertTransferParameters,
  type TransferRecord,
} from '../store/depositAddresses.repository.js';
import type { Tables } from '../store/tables.js';
import { CURSOR_WRITE_INTERVAL_MS, cursorWriteDue } from './cursorWrites.js';
import { announcedBlock, blockHashReader, createHeadLoop, type Head, type HeadFeed } from './heads.js';
import { holdsNoTransaction } from './logsBloom.js';
import { createUnsettledBlocks } from './unsettledBlocks.js';

/** One entry of `trace_block` (the parity/OpenEthereum form anvil, reth and erigon answer). */
interface BlockTrace {
  type: string;
  action: {
    from?: Address;
    to?: Address;
    value?: Hex;
    callType?: string;
    address?: Address;
    refundAddress?: Address;
    balance?: Hex;
  };
  blockHash: Hex;
  transactionHash: Hex | null;
  traceAddress: number[];
  error?: string;
}

const isMethodUnsupported = (error: unknown): boolean => {
  const code = (error as { code?: unknown }).code ?? (error as { cause?: { code?: unknown } }).cause?.code;
  const message = error instanceof Error ? error.message : String(error);
  return (
    code === -32601 ||
    code === -32004 ||
    /method .*(not found|not supported|not available|does not exist)|unsupported method/i.test(message)
  );
};

/**
 * Native value moved to a matching address in one block's traces: calls with value (top-level or internal) and
 * self-destructs. A frame that reverted, or below one that did, moved nothing. Each transfer's `logIndex` is -1 for
 * the transaction's own call (as when read from the block's transactions) and -(2 + its position among the
 * transaction's frames) for an internal one: stable across reads.
 */
function nativeFromTraces(
  chainId: number,
  blockNumber: bigint,
  traced: readonly BlockTrace[],
  matches: (to: string) => boolean,
): Omit<InsertTransferParameters, 'now'>[] {
  const byTx = new Map<string, BlockTrace[]>();
  for (const frame of traced) {
    if (frame.transactionHash === null) continue; // block rewards
    const list = byTx.get(frame.transactionHash) ?? [];
    list.push(frame);
    byTx.set(frame.transactionHash, list);
  }
  const found: Omit<InsertTransferParameters, 'now'>[] = [];
  for (const [txHash, frames] of byTx) {
    const failed = frames.filter((frame) => frame.error !== undefined).map((frame) => frame.traceAddress.join('.'));
    const reverted = (frame: BlockTrace) =>
      failed.some((path) => {
        const own = frame.traceAddress.join('.');
        return path === '' || own === path || own.startsWith(`${path}.`);
      });
    frames.forEach((frame, position) => {
      const call = frame.type === 'call' && (frame.action.callType === undefined || frame.action.callType === 'call');
      const to = call ? frame.action.to : frame.type === 'suicide' ? frame.action.refundAddress : undefined;
      const value = call ? frame.action.value : frame.type === 'suicide' ? frame.action.balance : undefined;
      const from = call ? frame.action.from : frame.action.address;
      if (to === undefined || value === undefined || from === undefined || BigInt(value) === 0n) return;
      if (!matches(to.toLowerCase()) || reverted(frame)) return;
      found.push({
        chainId,
        address: to,
        txHash,
        logIndex: frame.traceAddress.length === 0 ? -1 : -(2 + position),
        blockNumber,
        blockHash: frame.blockHash,
        token: zeroAddress,
        amount: BigInt(value),
        depositor: from,
        status: 'seen',
      });
    });
  }
  return found;
}

/** Failed `trace_block` probes (other than an unknown method) after which a node is taken as one without traces. */
const PROBE_ATTEMPTS = 3;

/** How far back each read of new addresses looks before the latest creation already read (slow commits, clocks). */
const TRACK_MARGIN_MS = 5 * 60_000;

/**
 * With `onAddressCreated`, how often the new addresses are read even without a notification: the bound on an
 * address whose notification was lost (see `refreshTracked`).
 */
export const ADDRESS_READ_FALLBACK_MS = 60_000;

/** The `chain_cursors` name of the deposit-address watcher. */
export const DEPOSIT_ADDRESSES_CURSOR = 'deposit-addresses';

const transferEvent = getAbiItem({ abi: erc20Abi, name: 'Transfer' });

export interface DepositAddressWatcher {
  readonly chainId: number;
  start(): Promise<void>;
  /** Ends the loop and stores the cursor where the watcher stopped. */
  stop(): Promise<void>;
  /** The last block read, or undefined before the first pass (the stored cursor can be a few seconds behind). */
  followedBlock(): bigint | undefined;
  /** Reads the chain now; resolves when the pass is done. */
  pollNow(): Promise<void>;
  /**
   * The reindex endpoint: reads the last `blocks` blocks again for transfers to `address` (native, and `Transfer`
   * logs of any token: an unlisted one is recorded `unsupported`), records the ones not yet recorded, then runs a
   * pass (which confirms them as usual). Resolves with how many were new.
   */
  rescan(address: string, blocks: bigint): Promise<number>;
  /** Whether a rescan runs now (one at a time per chain; the reindex endpoint answers 429 meanwhile). */
  rescanning(): boolean;
}

export interface CreateDepositAddressWatcherParameters {
  chain: ChainConfig;
  client: PublicClient;
  db: Kysely<Tables>;
  log: Logger;
  now: () => number;
  /** A transfer that is confirmed (or was left `confirmed`/`sweeping` by a crash). Must not throw. */
  onConfirmed: (transfer: TransferRecord) => void;
  pollIntervalMs?: number;
  /** Most blocks read per pass (each block is one `eth_getBlockByNumber` with its transactions). Default 200. */
  maxBlockRange?: bigint;
  /** Most blocks of one `eth_getLogs` of a rescan. Default 1000. */
  maxLogRange?: bigint;
  reorgWindow?: bigint;
  /**
   * The chain's pushed heads, as for the deposit watcher: each one starts a pass at once (with the head's number and
   * its and its parent's hashes from the push, no reads), and while the feed is live the polling only backs it up
   * (every two block times).
   */
  heads?: HeadFeed | undefined;
  /** How long blocks without transfers may be read before the stored cursor moves (`cursorWrites.ts`). */
  cursorWriteIntervalMs?: number;
  /**
   * Calls `listener` at each commit of a new deposit address (`DEPOSIT_ADDRESSES_CHANNEL`), resolving once it
   * listens; returns the function that stops it. Only where every address is written by this process and every
   * notification arrives (PGlite: its worker posts a commit's notifications before the statement's answer). With
   * it, a range reads the new addresses only after a notification; without it (PostgreSQL, where other gateways
   * hand out addresses too), every range reads them.
   */
  onAddressCreated?: ((listener: () => void) => Promise<() => void>) | undefined;
  /** With `onAddressCreated`, how often the addresses are read without a notification. Default 60 s. */
  addressReadFallbackMs?: number;
}

/**
 * Finds plain transfers to the gateway's deposit addresses on one chain, with the deposit watcher's rules.
 *
 * - Native: a transfer to an address that has no code yet emits no log, so every block's transactions are read
 *   (`eth_getBlockByNumber` with transactions; a transaction that reverted moved nothing and is skipped by its
 *   receipt). Native sent by a contract's internal call is not seen this way; the reindex endpoint checks balances.
 * - ERC-20: one `eth_getLogs` per range for the `Transfer` events of the chain's listed solver currencies, whatever
 *   their recipient, matched in memory against the set of deposit addresses; the cost does not grow with the
 *   number of addresses. A token that is not listed is not read here: the reindex endpoint (`rescan`) reads an
 *   address's logs of any token and records such a transfer `unsupported` (left at the address, logged).
 * - The addresses are a `Set` kept in memory: each range adds the addresses created since the last read (an
 *   indexed query by creation time, with a margin for slow commits and clocks), after the head was read, so an
 *   address handed out before a transfer is always in the set when that transfer's block is read.
 * - A transfer in block b is confirmed once `head - b + 1 >= max(1, confirmations)` and b's hash is still the one
 *   recorded; a transfer whose block changed is `removed` and never swept. When the cursor's own block is reorged
 *   away the cursor moves back `reorgWindow` blocks and reads them again. The cursor moves in the same database
 *   transaction as the transfers it read; ranges without transfers move the stored cursor only every
 *   `cursorWriteIntervalMs` (and at `stop`), as the deposit watcher's.
 */
export function createDepositAddressWatcher(params: CreateDepositAddressWatcherParameters): DepositAddressWatcher {
  const { chain, client, db, log, now, onConfirmed } = params;
  const chainId = chain.id;
  const maxBlockRange = params.maxBlockRange ?? 200n;
  const reorgWindow = params.reorgWindow ?? 64n;
  const heads = params.heads;
  const depth = BigInt(Math.max(1, chain.confirmations));
  const maxLogRange = params.maxLogRange ?? 1_000n;
  const listed = new Set(
    chainCurrencies(chain)
      .filter((currency) => currency.solver && currency.address !== zeroAddress)
      .map((currency) => currency.address.toLowerCase()),
  );
  const listedTokens = [...listed] as Address[];
  /** The chain's deposit addresses (lowercase), and the latest creation time read into the set. */
  const tracked = new Set<string>();
  let trackedUntil: number | undefined;
  const context = { chainId, watcher: 'deposit-addresses' };

  const cursorWriteIntervalMs = params.cursorWriteIntervalMs ?? CURSOR_WRITE_INTERVAL_MS;
  /** The last block read, with its hash: the stored cursor or ahead of it by blocks that held no transfer. */
  let cursor: ChainCursor | undefined;
  /** The cursor as last stored. */
  let stored: ChainCursor | undefined;
  let stopping = false;
  let failing = false;
  let inFlight: Promise<void> = Promise.resolve();
  /** The newest head pushed and not yet processed: a pass starting from it needs no head or hash reads. */
  let pushed: Head | undefined;
  const loop = createHeadLoop({
    heads,
    blockTime: chain.blockTime,
    pollIntervalMs: params.pollIntervalMs,
    pass: () => pollSafely(),
    onHead(head) {
      if (pushed === undefined || head.number >= pushed.number) pushed = head;
    },
  });
  /** The head the last completed pass processed: a poll that sees it again has nothing to do. */
  let processedHead: bigint | undefined;
  const unsettled = createUnsettledBlocks(now);
  /** Notes the `seen` transfers of `found` once they are committed (see `unsettledBlocks.ts`). */
  const noteSeen = (found: readonly Omit<InsertTransferParameters, 'now'>[]) => {
    for (const entry of found) if (entry.status === 'seen') unsettled.add(entry.blockNumber);
  };

  function handOn(transfer: TransferRecord): void {
    try {
      onConfirmed(transfer);
    } catch (error) {
      log.error({ ...context, transferId: transfer.id, err: error }, 'onConfirmed threw; the transfer stays as it is');
    }
  }

  /** Whether an address may have been created since the last read (always, without `onAddressCreated`). */
  let addressCreated = true;
  let stopListening: (() => void) | undefined;
  const addressReadFallbackMs = params.addressReadFallbackMs ?? ADDRESS_READ_FALLBACK_MS;
  /** When the addresses were last read, and the watcher's cursor block then (every block after it was read since). */
  let addressesRead: { at: number; cursorBlock: bigint } | undefined;

  /**
   * Adds the addresses created since the last read (the margin re-reads the last few minutes; the set dedups).
   * With `onAddressCreated` it reads after a notification, and every `addressReadFallbackMs` without one: an
   * address that read finds unannounced (a lost notification) was missing from the set while the blocks after the
   * previous read's cursor were read, so it is returned with those blocks to be read again for it.
   */
  async function refreshTracked(cursorBlock: bigint): Promise<{ unannounced: Set<string>; since: bigint } | undefined> {
    const timed = addressesRead === undefined || now() - addressesRead.at >= addressReadFallbackMs;
    if (!addressCreated && !timed) return undefined;
    const announced = addressCreated || stopListening === undefined;
    // Cleared before the read: a notification during it is for an address the read may have missed.
    if (stopListening !== undefined) addressCreated = false;
    const since = trackedUntil === undefined ? 0 : trackedUntil - TRACK_MARGIN_MS;
    const previous = addressesRead;
    let found: Awaited<ReturnType<typeof listDepositAddressesSince>>;
    try {
      found = await listDepositAddressesSince(db, chainId, since);
    } catch (error) {
      addressCreated = true;
      throw error;
    }
    addressesRead = { at: now(), cursorBlock };
    const { addresses, latest } = found;
    const fresh = new Set<string>();
    for (const address of addresses) {
      const lower = address.toLowerCase();
      if (!tracked.has(lower)) fresh.add(lower);
      tracked.add(lower);
    }
    if (latest !== undefined && (trackedUntil === undefined || latest > trackedUntil)) trackedUntil = latest;
    if (announced || fresh.size === 0 || previous === undefined) return undefined;
    log.warn(
      { ...context, addresses: [...fresh], fromBlock: previous.cursorBlock + 1n },
      'deposit addresses found by the timed read, not announced: reading their blocks since the previous read again',
    );
    return { unannounced: fresh, since: previous.cursorBlock + 1n };
  }

  /** Reads blocks `fromBlock..toBlock` again for `addresses` only, and records what it finds (the cursor stays). */
  async function catchUp(addresses: Set<string>, fromBlock: bigint, toBlock: bigint): Promise<void> {
    const matches = (to: string) => addresses.has(to);
    for (let from = fromBlock; from <= toBlock && !stopping; from += maxBlockRange) {
      const to = from + maxBlockRange - 1n < toBlock ? from + maxBlockRange - 1n : toBlock;
      const found = await readNative(matches, from, to);
      if (listedTokens.length > 0)
        found.push(...fromLogs(await readTransferLogs({ tokens: listedTokens }, from, to), matches));
      if (found.length === 0) continue;
      await db.transaction().execute((trx) => record(trx, found));
      noteSeen(found);
    }
  }

  async function loadCursor(head: bigint, canonicalHash: (n: bigint) => Promise<string | null>): Promise<ChainCursor> {
    stored = await getCursor(db, chainId, DEPOSIT_ADDRESSES_CURSOR);
    if (stored !== undefined) return stored;
    const blockNumber = head > 0n ? head - 1n : 0n;
    const blockHash = await canonicalHash(blockNumber);
    if (blockHash === null) throw new Error(`block ${blockNumber} of chain ${chainId} not found`);
    stored = await setCursor(db, { chainId, name: DEPOSIT_ADDRESSES_CURSOR, blockNumber, blockHash, now: now() });
    return stored;
  }

  /**
   * Whether the node answers `trace_block` (probed once: a node without it says the method is unknown). With it,
   * native value moved by a contract's internal call (or a self-destruct) is found too; without it, only
   * transactions sent to the address are.
   */
  let traces: boolean | undefined;
  let probeFailures = 0;
  let rescanning = false;
  /** The running rescan, awaited by `stop`. */
  let rescan: Promise<void> = Promise.resolve();

  /** The block's traces, or undefined when the node has no `trace_block`. */
  async function blockTraces(number: bigint): Promise<BlockTrace[] | undefined> {
    if (traces === false) return undefined;
    try {
      const result = await client.request<{
        Parameters: [Hex];
        ReturnType: BlockTrace[] | null;
        Method: 'trace_block';
      }>({ method: 'trace_block', params: [numberToHex(number)] });
      if (traces === undefined) log.info(context, 'the node answers trace_block: internal native transfers are read');
      traces = true;
      return result ?? [];
    } catch (error) {
      if (traces !== undefined) throw error;
      // An unknown method ends the probe at once; any other failure is retried by the next passes, and after
      // PROBE_ATTEMPTS of them the node is taken as one without traces (a watcher must not stall on the probe).
      probeFailures++;
      if (isMethodUnsupported(error) || probeFailures >= PROBE_ATTEMPTS) {
        traces = false;
        log.info(
          { ...context, err: error },
          'no trace_block on this node: only native transactions sent to an address are read',
        );
        return undefined;
      }
      throw error;
    }
  }

  /** Native transfers to an address `matches` accepts in blocks `fromBlock..toBlock` (one block read each). */
  async function readNative(matches: (to: string) => boolean, fromBlock: bigint, toBlock: bigint) {
    const found: Omit<InsertTransferParameters, 'now'>[] = [];
    for (let number = fromBlock; number <= toBlock && !stopping; number++) {
      const traced = await blockTraces(number);
      if (traced !== undefined) {
        found.push(...nativeFromTraces(chainId, number, traced, matches));
        continue;
      }
      const block = await client.getBlock({ blockNumber: number, includeTransactions: true });
      for (const tx of block.transactions) {
        if (tx.to == null || tx.value === 0n || !matches(tx.to.toLowerCase())) continue;
        const receipt = await client.getTransactionReceipt({ hash: tx.hash });
        if (receipt.status !== 'success') continue;
        found.push({
          chainId,
          address: tx.to,
          txHash: tx.hash,
          logIndex: -1,
          blockNumber: number,
          blockHash: block.hash,
          token: zeroAddress,
          amount: tx.value,
          depositor: tx.from,
          status: 'seen',
        });
      }
    }
    return found;
  }

  /** `Transfer` logs (strict decoding) as transfers, kept when `matches` accepts their recipient. */
  function fromLogs(logs: Awaited<ReturnType<typeof readTransferLogs>>, matches: (to: string) => boolean) {
    const found: Omit<InsertTransferParameters, 'now'>[] = [];
    for (const entry of logs) {
      if (entry.removed || entry.blockHash === null || entry.logIndex === null || entry.transactionHash === null)
        continue;
      if (entry.args.value === 0n || !matches(entry.args.to.toLowerCase())) continue;
      const token = entry.address.toLowerCase();
      found.push({
        chainId,
        address: entry.args.to,
        txHash: entry.transactionHash,
        logIndex: entry.logIndex,
        blockNumber: entry.blockNumber,
        blockHash: entry.blockHash,
        token,
        amount: entry.args.value,
        depositor: entry.args.from,
        status: listed.has(token) ? 'seen' : 'unsupported',
      });
    }
    return found;
  }

  function readTransferLogs(filter: { tokens?: Address[]; to?: Address }, fromBlock: bigint, toBlock: bigint) {
    return client.getLogs({
      ...(filter.tokens === undefined ? {} : { address: filter.tokens }),
      event: transferEvent,
      ...(filter.to === undefined ? {} : { args: { to: filter.to } }),
      fromBlock,
      toBlock,
      strict: true,
    });
  }

  /** The transfers to the tracked addresses in blocks `fromBlock..toBlock`. */
  async function read(fromBlock: bigint, toBlock: bigint) {
    const matches = (to: string) => tracked.has(to);
    const found = await readNative(matches, fromBlock, toBlock);
    if (listedTokens.length > 0)
      found.push(...fromLogs(await readTransferLogs({ tokens: listedTokens }, fromBlock, toBlock), matches));
    return found;
  }

  /** Records transfers (the ones already recorded are left as they are); returns how many were new. */
  async function record(trx: Kysely<Tables>, found: readonly Omit<InsertTransferParameters, 'now'>[]): Promise<number> {
    let added = 0;
    for (const entry of found) {
      const { transfer, inserted } = await recordTransfer(trx, { ...entry, now: now() });
      if (!inserted) continue;
      added++;
      if (transfer.status === 'unsupported')
        log.warn(
          { ...context, address: transfer.address, token: transfer.token, amount: transfer.amount.toString() },
          'transfer of a token that is not a listed solver currency: left at the deposit address',
        );
      else
        log.info(
          { ...context, address: transfer.address, txHash: transfer.txHash, amount: transfer.amount.toString() },
          'deposit-address transfer seen',
        );
    }
    return added;
  }

  async function rescanPass(address: string, blocks: bigint): Promise<number> {
    const target = address.toLowerCase();
    const head = await client.getBlockNumber({ cacheTime: 0 });
    const start = head + 1n > blocks ? head + 1n - blocks : 0n;
    const matches = (to: string) => to === target;
    let added = 0;
    for (let fromBlock = start; fromBlock <= head && !stopping; fromBlock += maxLogRange) {
      const toBlock = fromBlock + maxLogRange - 1n < head ? fromBlock + maxLogRange - 1n : head;
      const found = [
        ...(await readNative(matches, fromBlock, toBlock)),
        ...fromLogs(await readTransferLogs({ to: target as Address }, fromBlock, toBlock), matches),
      ];
      added += await db.transaction().execute((trx) => record(trx, found));
      noteSeen(found);
    }
    log.info({ ...context, address: target, fromBlock: start, toBlock: head, added }, 'deposit address rescanned');
    return added;
  }

  async function poll(force: boolean): Promise<void> {
    // A pushed head newer than the last pass saves reading the head and the hashes of its block and its parent.
    const fromPush = pushed !== undefined && (processedHead === undefined || pushed.number > processedHead);
    const known = fromPush ? pushed : undefined;
    pushed = undefined;
    const head = known?.number ?? (await client.getBlockNumber({ cacheTime: 0 }));
    if (head === processedHead && !force) return;
    const canonicalHash = blockHashReader(client, known);
    if (cursor === undefined) {
      cursor = await loadCursor(head, canonicalHash);
      // A previous run's `seen` transfers are at or below its stored cursor, or in the blocks read again after it.
      unsettled.add(cursor.blockNumber);
    }
    if (head < cursor.blockNumber) return;
    let rewound = false;
    if ((await canonicalHash(cursor.blockNumber)) !== cursor.blockHash) {
      const target = cursor.blockNumber > reorgWindow ? cursor.blockNumber - reorgWindow : 0n;
      const targetHash = await canonicalHash(target);
      if (targetHash === null) throw new Error(`block ${target} of chain ${chainId} not found while rewinding`);
      log.warn({ ...context, from: cursor.blockNumber, to: target }, 'deposit-address cursor reorged away; rereading');
      cursor = stored = await setCursor(db, {
        chainId,
        name: DEPOSIT_ADDRESSES_CURSOR,
        blockNumber: target,
        blockHash: targetHash,
        now: now(),
      });
      rewound = true;
    }
    while (cursor.blockNumber < head && !stopping) {
      const fromBlock: bigint = cursor.blockNumber + 1n;
      const toBlock: bigint = head < fromBlock + maxBlockRange - 1n ? head : fromBlock + maxBlockRange - 1n;
      const toHash = await canonicalHash(toBlock);
      if (toHash === null) throw new Error(`block ${toBlock} of chain ${chainId} not found below head ${head}`);
      // After the head was read: every address handed out before a transfer in these blocks is in the set.
      const missed = await refreshTracked(cursor.blockNumber);
      if (missed !== undefined) await catchUp(missed.unannounced, missed.since, cursor.blockNumber);
      // A pushed head whose block holds no transaction moved nothing to any address: no read.
      const header = announcedBlock(known, fromBlock, toBlock);
      const provedEmpty = header !== undefined && holdsNoTransaction(header);
      const found = tracked.size === 0 || provedEmpty ? [] : await read(fromBlock, toBlock);
      if (!cursorWriteDue(stored, found.length, now(), cursorWriteIntervalMs)) {
        cursor = { ...cursor, blockNumber: toBlock, blockHash: toHash };
        continue;
      }
      const at = { chainId, name: DEPOSIT_ADDRESSES_CURSOR, blockNumber: toBlock, blockHash: toHash };
      // The cursor alone is one statement: no transaction around it (two more round trips to the database).
      cursor = stored =
        found.length === 0
          ? await setCursor(db, { ...at, now: now() })
          : await db.transaction().execute(async (trx): Promise<ChainCursor> => {
              await record(trx, found);
              return setCursor(trx, { ...at, now: now() });
            });
      noteSeen(found);
    }
    await settle(head, rewound);
    if (!stopping) processedHead = head;
  }

  async function settle(head: bigint, all: boolean): Promise<void> {
    const tip = head - depth + 1n;
    if (!all && !unsettled.due(tip)) return;
    const settled = unsettled.reading();
    const candidates = await listTransfers(db, {
      chainId,
      status: ['seen'],
      ...(all ? {} : { maxBlockNumber: tip }),
    });
    // Fresh hashes: the ones read before the transfers may predate them.
    const canonicalHash = blockHashReader(client);
    for (const transfer of candidates) {
      const hash = await canonicalHash(transfer.blockNumber);
      if (hash !== transfer.blockHash) {
        const removed = await updateTransfer(db, transfer.id, {
          status: 'removed',
          fromStatus: 'seen',
          blockHash: transfer.blockHash,
          now: now(),
        });
        if (removed !== null)
          log.warn({ ...context, txHash: transfer.txHash, address: transfer.address }, 'transfer removed by a reorg');
      } else if (transfer.blockNumber <= head - depth + 1n) {
        const confirmed = await updateTransfer(db, transfer.id, {
          status: 'confirmed',
          fromStatus: 'seen',
          blockHash: transfer.blockHash,
          now: now(),
        });
        if (confirmed !== null) handOn(confirmed);
      }
    }
    settled(tip);
  }

  /** Stores the cursor when blocks without transfers moved it past the stored one (at `stop`). */
  async function storeCursor(): Promise<void> {
    if (cursor === undefined || cursor === stored) return;
    try {
      const { blockNumber, blockHash } = cursor;
      stored = await setCursor(db, { chainId, name: DEPOSIT_ADDRESSES_CURSOR, blockNumber, blockHash, now: now() });
    } catch (error) {
      // The next start reads those blocks again.
      log.warn({ ...context, err: error }, 'deposit-address watcher: the cursor could not be stored at stop');
    }
  }

  function pollSafely(force = false): Promise<void> {
    inFlight = inFlight.then(() =>
      poll(force).then(
        () => {
          failing = false;
        },
        (error: unknown) => {
          if (!failing) log.warn({ ...context, err: error }, 'deposit-address watcher poll failed; retrying');
          failing = true;
        },
      ),
    );
    return inFlight;
  }

  return {
    chainId,
    async start() {
      // Left by a crash: decided or swept halfway. The consumer resumes each from its records.
      for (const transfer of await listTransfers(db, { chainId, status: ['confirmed', 'sweeping'] })) handOn(transfer);
      if (stopping) return;
      // Before the first read of the addresses, so none created after it goes unannounced.
      if (params.onAddressCreated !== undefined)
        stopListening = await params.onAddressCreated(() => (addressCreated = true));
      loop.listen();
      await pollSafely(true);
      if (!stopping) loop.run();
    },
    async stop() {
      stopping = true;
      await loop.stop();
      await inFlight;
      await rescan;
      stopListening?.();
      await storeCursor();
    },
    followedBlock: () => cursor?.blockNumber,
    pollNow: () => pollSafely(true),
    rescanning: () => rescanning,
    async rescan(address, blocks) {
      // Beside the passes, not queued behind them (nor they behind it): recording a transfer twice is a no-op,
      // the cursor is not touched, and the pass run after it confirms what it found.
      if (rescanning) throw new Error(`a rescan is already running on chain ${chainId}`);
      rescanning = true;
      const pass = rescanPass(address, blocks);
      rescan = pass.then(
        () => undefined,
        () => undefined,
      );
      let added: number;
      try {
        added = await pass;
      } finally {
        rescanning = false;
      }
      await pollSafely(true);
      return added;
    },
  };
}
