import type { Kysely } from 'kysely';
import type { Address, Hex } from 'viem';
import type { ChainConfig } from '../core/chains/types.js';
import { errorMessage } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import { createPeriodicJob, type PeriodicJob } from '../core/periodicJob.js';
import { findOutgoingTxsByHashes } from '../store/outgoingTxs.repository.js';
import { knownSolverNonce, recordSolverNonce } from '../store/solverNonces.repository.js';
import type { Tables } from '../store/tables.js';
import type { ChainClients } from './clients.js';

/** Blocks read at most in one look for the key's foreign transactions. */
const MAX_SCAN_BLOCKS = 256n;
/** Blocks back from the head read when a sender reports a foreign nonce (the transaction may be a few blocks old). */
const FOREIGN_NONCE_LOOKBACK_BLOCKS = 64n;
/** Looks for a reported foreign nonce's transaction before it is logged as not found and dropped. */
const FOREIGN_NONCE_LOOKS = 5;

export interface SolverKeyWatch {
  /** Takes each chain's head as the point from which the key's transactions are accounted for, then watches. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** A sender found `nonce` used by a transaction it did not make (`CreateTransactionSenderParameters`). */
  foreignNonce(chainId: number, nonce: bigint): void;
  /** Runs a look at every chain now (tests; otherwise every interval). */
  check(): Promise<void>;
}

export interface CreateSolverKeyWatchParameters {
  chains: readonly ChainConfig[];
  clients: ChainClients;
  db: Kysely<Tables>;
  solver: Address;
  log: Pick<Logger, 'warn' | 'error'>;
  now: () => number;
  /** How often each chain is looked at, ms. Default the shortest block time, at least 1 s. */
  intervalMs?: number;
  /**
   * Another gateway uses the solver key on `chainId` (its fills, refunds or releases, which this database does not
   * know): the solver must stop acting there. Called once per chain.
   */
  onShared: (chainId: number, message: string) => void;
}

interface ChainWatch {
  chain: ChainConfig;
  /** The block up to which every transaction of the key is accounted for; undefined until the first read. */
  scannedTo: bigint | undefined;
  /** Nonces a sender reported used by someone else, with the looks left before they are dropped. */
  reported: Map<bigint, number>;
  shared: boolean;
  /** Whether the last look failed (its failure is logged once per outage). */
  failing: boolean;
}

/**
 * Watches, while the solver runs, for transactions of the solver key that this gateway did not send. Each interval,
 * per chain, one read of the key's transaction count against what the database accounts for
 * (`knownSolverNonce`: every transaction the senders record before broadcasting it); nothing more while they agree.
 * When the chain is ahead, or a sender reports a nonce it found used, the blocks since the last look are read for
 * the key's transactions no sender recorded:
 *
 * - one to a contract of the gateway's on that chain (the depository, the fill contract, the receiver, ...) is
 *   another gateway's work, on another database with the same key: its deposits are unknown here and ours there,
 *   each would refund what the other fills. `onShared` stops the solver on that chain and `/ready` says why.
 * - one elsewhere (a token approval of `npm run approve`, a transfer out of the inventory) is logged and accounted
 *   for (`recordSolverNonce`), so neither this watch nor the next start's history check counts it again.
 *
 * A count ahead that no transaction found explains (its blocks beyond what one look reads) is taken as another
 * gateway's: stopping is safe, refunding beside an unknown sender of the key is not. So is a count ahead at the
 * first look: the start's history check could not read that chain (its RPC was down), and the database may lack
 * far older transactions; the solver stops there until a restart rebuilds from chain events.
 */
export function createSolverKeyWatch(params: CreateSolverKeyWatchParameters): SolverKeyWatch {
  const { clients, db, solver, log } = params;
  const signer = solver.toLowerCase();
  const watches = new Map<number, ChainWatch>(
    params.chains.map((chain) => [
      chain.id,
      { chain, scannedTo: undefined, reported: new Map(), shared: false, failing: false },
    ]),
  );
  const intervalMs =
    params.intervalMs ?? Math.max(1_000, Math.min(60_000, ...params.chains.map((chain) => chain.blockTime * 1_000)));
  const job: PeriodicJob<void> = createPeriodicJob(intervalMs, () => pass());

  async function pass(): Promise<void> {
    await Promise.all(
      [...watches.values()].map(async (watch) => {
        try {
          await look(watch);
          watch.failing = false;
        } catch (error) {
          // An RPC down for a while: the next look covers the blocks this one could not read.
          if (!watch.failing)
            log.warn(
              { chainId: watch.chain.id, err: errorMessage(error) },
              "key watch: the chain could not be read; the solver key's transactions are looked for once it answers",
            );
          watch.failing = true;
        }
      }),
    );
  }

  async function look(watch: ChainWatch): Promise<void> {
    if (watch.shared || job.stopped) return;
    const { chain } = watch;
    const client = clients.get(chain.id);
    if (client === undefined) return;
    const head = await client.getBlockNumber({ cacheTime: 0 });
    // The count first, then the database: a transaction of this gateway's mined by `head` had its row committed
    // before its broadcast, so the read after the count sees it (read together, a slow read could miss it).
    const count = BigInt(await client.getTransactionCount({ address: solver, blockNumber: head }));
    const known = await knownSolverNonce(db, chain.id, solver);
    if (watch.scannedTo === undefined && count > known) {
      // The start's history check could not read this chain: the database may lack far older transactions than
      // one look reads. Stopping is the safe answer; the next start rebuilds from chain events.
      return shared(
        watch,
        `the solver key made ${count - known} transaction(s) on chain ${chain.id} that this database does not know ` +
          `(the chain could not be read at start); restart the gateway so that it rebuilds from chain events`,
      );
    }
    const ahead = count > known;
    if (!ahead && watch.reported.size === 0) {
      watch.scannedTo = head;
      return;
    }
    const from = lowestBlock(watch, head, ahead);
    const foreign = await foreignTransactions(chain, from, head);
    const gateway = gatewayContracts(chain);
    const theirs = foreign.filter((tx) => tx.to !== null && gateway.has(tx.to.toLowerCase()));
    for (const tx of foreign) watch.reported.delete(tx.nonce);
    if (theirs.length > 0) {
      return shared(
        watch,
        `another gateway uses the solver key on chain ${chain.id}: ${theirs.length} transaction(s) to the gateway's ` +
          `contracts that this database did not send (${theirs
            .slice(0, 3)
            .map((tx) => tx.hash)
            .join(', ')}). One solver key belongs to one database: stop the other gateway (or give it its own key), ` +
          `then restart this one`,
      );
    }
    const scannedAll = watch.scannedTo !== undefined && from <= watch.scannedTo + 1n;
    if (ahead && (foreign.length < Number(count - known) || !scannedAll)) {
      return shared(
        watch,
        `the solver key made ${count - known} transaction(s) on chain ${chain.id} that this gateway did not send, ` +
          `not all of them found; another gateway may use the key. One solver key belongs to one database: stop ` +
          `the other user of the key, then restart this gateway`,
      );
    }
    for (const tx of foreign)
      log.warn(
        { chainId: chain.id, txHash: tx.hash, to: tx.to, nonce: tx.nonce.toString() },
        'the solver key sent a transaction this gateway did not (not to its contracts: an approval, a transfer); accounted for',
      );
    if (foreign.length > 0) await recordSolverNonce(db, { chainId: chain.id, signer, nonce: count, now: params.now() });
    for (const [nonce, looks] of watch.reported) {
      if (looks > 1) watch.reported.set(nonce, looks - 1);
      else {
        watch.reported.delete(nonce);
        log.warn(
          { chainId: chain.id, nonce: nonce.toString() },
          'key watch: the transaction that used a nonce of the solver key was not found in recent blocks',
        );
      }
    }
    watch.scannedTo = head;
  }

  /** Where a look starts: after the last block accounted for, further back for a reported nonce, bounded. */
  function lowestBlock(watch: ChainWatch, head: bigint, ahead: boolean): bigint {
    let from = watch.scannedTo === undefined ? head : watch.scannedTo + 1n;
    if (watch.reported.size > 0 && head - FOREIGN_NONCE_LOOKBACK_BLOCKS + 1n < from)
      from = head - FOREIGN_NONCE_LOOKBACK_BLOCKS + 1n;
    if (!ahead && watch.reported.size === 0) from = head;
    if (head - from >= MAX_SCAN_BLOCKS) from = head - MAX_SCAN_BLOCKS + 1n;
    return from < 0n ? 0n : from;
  }

  /** The key's transactions mined in blocks `from`..`to` that no sender of this database recorded. */
  async function foreignTransactions(
    chain: ChainConfig,
    from: bigint,
    to: bigint,
  ): Promise<Array<{ hash: Hex; to: Address | null; nonce: bigint }>> {
    const client = clients.get(chain.id)!;
    const mine: Array<{ hash: Hex; to: Address | null; nonce: bigint }> = [];
    for (let number = from; number <= to; number++) {
      const block = await client.getBlock({ blockNumber: number, includeTransactions: true });
      for (const tx of block.transactions)
        if (tx.from.toLowerCase() === signer) mine.push({ hash: tx.hash, to: tx.to, nonce: BigInt(tx.nonce) });
    }
    const recorded = await findOutgoingTxsByHashes(
      db,
      mine.map((tx) => tx.hash),
    );
    return mine.filter((tx) => !recorded.has(tx.hash.toLowerCase()));
  }

  function shared(watch: ChainWatch, message: string): void {
    watch.shared = true;
    log.error({ chainId: watch.chain.id }, `the solver stops on chain ${watch.chain.id}: ${message}`);
    params.onShared(watch.chain.id, message);
  }

  return {
    async start() {
      // The first look takes each chain's head; the solver's start has just accounted for the key's history.
      await job.start();
    },
    stop: () => job.stop(),
    foreignNonce(chainId, nonce) {
      const watch = watches.get(chainId);
      if (watch === undefined || watch.shared) return;
      watch.reported.set(nonce, FOREIGN_NONCE_LOOKS);
      job.wake();
    },
    check: () => job.runNow(),
  };
}

/** The gateway's own contracts on a chain: what only the solver's work calls (Multicall3 is anyone's). */
function gatewayContracts(chain: ChainConfig): Set<string> {
  const { multicall3: _anyone, ...own } = chain.contracts;
  return new Set(
    Object.values(own)
      .filter((address): address is Address => typeof address === 'string')
      .map((address) => address.toLowerCase()),
  );
}
