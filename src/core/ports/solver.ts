import type { Address, Hex } from 'viem';
import type { DepositRecord } from '../../records/deposit.js';
import type { OutgoingTxKind, OutgoingTxRecord } from '../../records/outgoingTx.js';
import type { RequestRecord } from '../../records/request.js';
import type { SentTxFacts } from '../ledger/sentTxFacts.js';

/**
 * What the solver core needs from the chain layer (implemented in `src/chain`): deposits coming in, and a
 * sender per chain that owns the solver's nonce there.
 */

/** Follows one origin chain's deposits (`src/chain/depositWatcher.ts`). */
export interface DepositWatcher {
  readonly chainId: number;
  /** Backfills from the stored cursor, then follows new blocks until `stop`. Resolves once following. */
  start(): Promise<void>;
  /** Ends the loop and stores the cursor where the watcher stopped. */
  stop(): Promise<void>;
  /**
   * The last block read, or undefined before the first pass. The stored cursor can be a few seconds behind it:
   * blocks without deposits move it only now and then (`chain/cursorWrites.ts`).
   */
  followedBlock(): bigint | undefined;
  /**
   * Reads one transaction's receipt now (`POST /transactions/index`) and records every deposit log in it,
   * including deposits made inside another contract's call (their events are in the receipt). Confirmed
   * deposits are handed to `onConfirmed` as usual. Returns the deposits found (empty when none).
   * Throws `NOT_FOUND` when the chain has no such transaction (yet).
   */
  indexTransaction(txHash: Hex): Promise<DepositRecord[]>;
}

export interface DepositWatcherOptions {
  /**
   * Called once a deposit is `confirmed` (its block is `confirmations` deep and still canonical), also for
   * deposits found confirmed but unprocessed at startup. The watcher does not wait for it; it must not throw.
   * `request` is the deposit's request as its confirmation read it (absent when not read, or when there was no
   * such request): only what a request never changes is sure to be current, not its status.
   */
  onConfirmed: (deposit: DepositRecord, request?: RequestRecord) => void;
  /** How often to look for a new block; default a quarter of the chain's block time, at most 1 s. */
  pollIntervalMs?: number;
}

/** A transaction the solver sends. */
export interface SendParameters {
  requestId: Hex;
  kind: OutgoingTxKind;
  to: Address;
  data: Hex;
  value: bigint;
  /** Gas limit; estimated when absent. */
  gas?: bigint;
  /** EIP-7702 authorizations: the transaction is sent as type 4 with them (gasless batches, `POST /execute`). */
  authorizationList?: SignedAuthorizationInput[];
  /** What it pays besides its gas (a refund, a settlement), booked with its receipt once it succeeds. */
  ledger?: SentTxFacts;
}

/** One signed EIP-7702 authorization, as the SDK posts it (`r`, `s` hex; numbers as numbers). */
export interface SignedAuthorizationInput {
  chainId: number;
  address: Address;
  nonce: number;
  yParity: number;
  r: Hex;
  s: Hex;
}

export interface SentReceipt {
  status: 'success' | 'reverted';
  hash: Hex;
  blockNumber: bigint;
  gasUsed: bigint;
  effectiveGasPrice: bigint;
  /** An OP-stack receipt's L1 data fee (wei), paid besides `gasUsed * effectiveGasPrice`; absent elsewhere. */
  l1Fee?: bigint;
  /**
   * The ERC-20 `Transfer`s into or out of the sender's wallet the transaction made, read from its logs for the
   * kinds whose ledger movements rest on them (`rebalance`: a swap back through the pools); absent for the others.
   */
  tokenTransfers?: TokenTransfer[];
}

/** One ERC-20 `Transfer` log of a mined transaction. */
export interface TokenTransfer {
  token: Address;
  from: Address;
  to: Address;
  amount: bigint;
  logIndex: number;
}

/** The solver's sender on one chain (`src/chain/sender.ts`): the only code that uses its nonce there. */
export interface TransactionSender {
  readonly chainId: number;
  readonly address: Address;
  /**
   * Records the transaction in `outgoing_txs` with the next nonce and its signed bytes, then broadcasts it.
   * At most one live transaction per (request, kind): a second `send` fails with `CONFLICT` and sends nothing.
   * Returns once a node accepted it, with the row as its move to `broadcast` writes it: that write may land a
   * little later (until then the stored row is `prepared`, which the receipt wait and recovery rebroadcast).
   */
  send(params: SendParameters): Promise<OutgoingTxRecord>;
  /**
   * Starts reading what a send now would read first (the fee caps, kept for the current head), without waiting: a
   * caller about to send (a fill being decided) overlaps that read with its own work.
   */
  readAhead(): void;
  /**
   * Waits until the transaction (or a fee-bumped replacement of it) is mined; bumps fees when it is stuck.
   * The outgoing row is updated to `confirmed` or `failed`.
   */
  waitForReceipt(outgoingTxId: number): Promise<SentReceipt>;
  /** After a restart: rebroadcasts this signer's recorded but unmined transactions; returns them. */
  recover(): Promise<OutgoingTxRecord[]>;
  /**
   * After a reorg: sends again each transaction recorded as mined (within the chain's finality depth) that the
   * chain no longer has, on its own nonce or, when another transaction used that nonce, on a fresh one; resolves
   * with how many it sent again.
   */
  recheckMined(): Promise<number>;
  stop(): Promise<void>;
}

/** What `POST /fast-fill` needs from the running solver. */
export interface FastFillLifecycle {
  /** Whether the request could be filled now (expiry, solver balance, a simulation of the fill); why not, when not. */
  checkFill(requestId: Hex): Promise<{ failReason: string; message: string } | null>;
  /** Fills a request that a fast fill moved to `pending` (no deposit yet); work is serialized per request. */
  fillNow(requestId: Hex): void;
}

/** What `POST /execute` needs from the running solver: sending an accepted gasless batch (`src/core/gasless`). */
export interface GaslessLifecycle {
  /**
   * Sends the accepted batch of `requestId` from the solver's sender of its chain, once (a live transaction is not
   * sent again), and follows it until mined. Throws the node's refusal after putting the request back to `waiting`.
   */
  send(requestId: Hex): Promise<OutgoingTxRecord>;
}

/** A deposit's release as the depository's `Released` event records it. */
export interface DepositRelease {
  /** Lower-case address the deposit was paid to. */
  to: string;
  amount: bigint;
  /** Lower-case hash of the transaction that released it. */
  txHash: string;
  blockNumber: bigint;
}

/**
 * What the chain says of an order (`src/chain/orderTruth.ts`): read before money leaves, because the database is
 * the solver's memory, not its source of truth (an empty, older or shared database must never pay twice).
 */
export interface OrderTruth {
  /**
   * Whether the solver's fill contract on chain `chainId` has filled request `requestId`
   * (`OnlyOwnerMulticaller.filled`, one indexed read at the chain's head). Throws when the chain cannot be read.
   */
  filled(chainId: number, requestId: Hex): Promise<boolean>;
  /**
   * Whether the depository on chain `chainId` has released deposit `depositIndex` (`Depository.isReleased`): refunded
   * or settled, by this database or by another one with the same key. Throws when the chain cannot be read.
   */
  released(chainId: number, depositIndex: bigint): Promise<boolean>;
  /**
   * The depository's release of deposit `depositIndex` on chain `chainId` (its `Released` event, searched from
   * `fromBlock`, the deposit's block, to the head): to whom, how much, by which transaction; undefined when the chain
   * shows none. Throws when the chain cannot be read.
   */
  release(chainId: number, depositIndex: bigint, fromBlock: bigint): Promise<DepositRelease | undefined>;
  /** The chain's head block number (how old a deposit is). Throws when the chain cannot be read. */
  head(chainId: number): Promise<bigint>;
}
