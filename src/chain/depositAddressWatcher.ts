import type { Kysely } from 'kysely';
import { erc20Abi, getAbiItem, zeroAddress, type Address, type PublicClient } from 'viem';
import { chainCurrencies } from '../core/chains/requireChain.js';
import type { ChainConfig } from '../core/chains/types.js';
import type { Logger } from '../core/logger.js';
import {
  listDepositAddressesSince,
  listTransfers,
  recordTransfer,
  updateTransfer,
  type InsertTransferParameters,
} from '../store/depositAddresses.repository.js';
import type { TransferRecord } from '../records/depositAddress.js';
import type { Tables } from '../store/tables.js';
import { createBlockTraces, nativeFromTraces } from './blockTraces.js';
import { createChainFollower } from './follower/follower.js';
import type { HeadFeed } from './heads.js';
import { holdsNoTransaction } from './logsBloom.js';

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
 * Finds plain transfers to the gateway's deposit addresses on one chain: the hooks of a chain follower
 * (`follower/follower.ts`), as the deposit watcher is.
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
  const traces = createBlockTraces(client, log, context);
  let rescanning = false;
  /** The running rescan, awaited by `stop`. */
  let rescan: Promise<void> = Promise.resolve();

  function handOn(transfer: TransferRecord): void {
    try {
      onConfirmed(transfer);
    } catch (error) {
      log.error({ ...context, transferId: transfer.id, err: error }, 'onConfirmed threw; the transfer stays as it is');
    }
  }

  /** Notes the `seen` transfers of `found` once they are committed (see `unsettledBlocks.ts`). */
  const noteSeen = (found: readonly Omit<InsertTransferParameters, 'now'>[]) => {
    for (const entry of found) if (entry.status === 'seen') follower.noteSeen(entry.blockNumber);
  };

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
    for (let from = fromBlock; from <= toBlock && !follower.stopping(); from += maxBlockRange) {
      const to = from + maxBlockRange - 1n < toBlock ? from + maxBlockRange - 1n : toBlock;
      const found = await readNative(matches, from, to);
      if (listedTokens.length > 0)
        found.push(...fromLogs(await readTransferLogs({ tokens: listedTokens }, from, to), matches));
      if (found.length === 0) continue;
      await db.transaction().execute((trx) => record(trx, found));
      noteSeen(found);
    }
  }

  /** Native transfers to an address `matches` accepts in blocks `fromBlock..toBlock` (one block read each). */
  async function readNative(matches: (to: string) => boolean, fromBlock: bigint, toBlock: bigint) {
    const found: Omit<InsertTransferParameters, 'now'>[] = [];
    for (let number = fromBlock; number <= toBlock && !follower.stopping(); number++) {
      const traced = await traces.of(number);
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
    for (let fromBlock = start; fromBlock <= head && !follower.stopping(); fromBlock += maxLogRange) {
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

  const follower = createChainFollower<Omit<InsertTransferParameters, 'now'>, TransferRecord>({
    chainId,
    blockTime: chain.blockTime,
    confirmations: chain.confirmations,
    client,
    db,
    log,
    now,
    cursorName: DEPOSIT_ADDRESSES_CURSOR,
    label: 'deposit-address watcher',
    context,
    maxBlockRange,
    reorgWindow: params.reorgWindow,
    pollIntervalMs: params.pollIntervalMs,
    heads: params.heads,
    cursorWriteIntervalMs: params.cursorWriteIntervalMs,
    hooks: {
      async resume() {
        // Left by a crash: decided or swept halfway. The consumer resumes each from its records.
        for (const transfer of await listTransfers(db, { chainId, status: ['confirmed', 'sweeping'] }))
          handOn(transfer);
        // Before the first read of the addresses, so none created after it goes unannounced.
        if (params.onAddressCreated !== undefined && !follower.stopping())
          stopListening = await params.onAddressCreated(() => (addressCreated = true));
      },
      async read({ fromBlock, toBlock, header }) {
        // After the head was read: every address handed out before a transfer in these blocks is in the set.
        const missed = await refreshTracked(fromBlock - 1n);
        if (missed !== undefined) await catchUp(missed.unannounced, missed.since, fromBlock - 1n);
        // A pushed head whose block holds no transaction moved nothing to any address: no read.
        const provedEmpty = header !== undefined && holdsNoTransaction(header);
        return tracked.size === 0 || provedEmpty ? [] : read(fromBlock, toBlock);
      },
      async record(trx, found) {
        await record(trx, found);
        return found.filter((entry) => entry.status === 'seen').map((entry) => entry.blockNumber);
      },
      listSeen: (maxBlockNumber) =>
        listTransfers(db, {
          chainId,
          status: ['seen'],
          ...(maxBlockNumber === undefined ? {} : { maxBlockNumber }),
        }),
      async remove(transfer) {
        const removed = await updateTransfer(db, transfer.id, {
          status: 'removed',
          fromStatus: 'seen',
          blockHash: transfer.blockHash,
          now: now(),
        });
        if (removed !== null)
          log.warn({ ...context, txHash: transfer.txHash, address: transfer.address }, 'transfer removed by a reorg');
        return removed;
      },
      async confirm(confirmable) {
        const confirmed: TransferRecord[] = [];
        for (const transfer of confirmable) {
          const done = await updateTransfer(db, transfer.id, {
            status: 'confirmed',
            fromStatus: 'seen',
            blockHash: transfer.blockHash,
            now: now(),
          });
          if (done === null) continue;
          handOn(done);
          confirmed.push(done);
        }
        return confirmed;
      },
    },
  });

  return {
    chainId,
    start: () => follower.start(),
    async stop() {
      await follower.stop();
      await rescan;
      stopListening?.();
    },
    followedBlock: () => follower.followedBlock(),
    pollNow: () => follower.pass(true),
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
      await follower.pass(true);
      return added;
    },
  };
}
