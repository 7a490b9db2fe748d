import type { Kysely } from 'kysely';
import {
  BaseError,
  ExecutionRevertedError,
  keccak256,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Address,
  type Hex,
  type LocalAccount,
  type PublicClient,
} from 'viem';
import type { ChainConfig } from '../core/chains/types.js';
import type { Logger } from '../core/logger.js';
import { toUsdMicros, type UsdPrice } from '../core/market.js';
import { GatewayError } from '../core/errors.js';
import { crashPoint, type CrashPoint } from '../core/faults.js';
import type { SendParameters, SentReceipt, SignedAuthorizationInput, TransactionSender } from '../core/solver/ports.js';
import { isUniqueViolation } from '../store/errors.js';
import {
  getLiveOutgoingTx,
  getMaxOutgoingTxNonce,
  getOutgoingTx,
  insertOutgoingTx,
  listUnminedOutgoingTxs,
  outgoingTxRequestKindKey,
  outgoingTxSignerNonceKey,
  releaseOutgoingTxNonce,
  reviseOutgoingTx,
  updateOutgoingTx,
  type OutgoingTxRecord,
} from '../store/outgoingTxs.repository.js';
import type { JsonObject, Tables } from '../store/tables.js';
import type { HeadFeed } from './heads.js';
import { withGasMargin } from '../core/gasMargin.js';
import { mayHaveReachedNode } from './rpcErrors.js';

export interface CreateTransactionSenderParameters {
  chain: ChainConfig;
  client: PublicClient;
  /** The solver's key; transactions are signed locally. */
  account: LocalAccount;
  db: Kysely<Tables>;
  log: Logger;
  /** Current time in Unix milliseconds: row timestamps and the stuck clock. */
  now: () => number;
  /** A transaction not mined this long after its last broadcast is re-sent with higher fees. Default 3 block times. */
  stuckAfterMs?: number;
  /** How much each replacement raises both fee caps, in percent. Default 25 (nodes require at least 10). */
  feeBumpPercent?: number;
  /** Bumps never raise `maxFeePerGas` beyond this multiple of the first signature's. Default 4. */
  maxFeeMultiplier?: number;
  /** How often `waitForReceipt` looks at the chain. Default a quarter of the block time (at least 50 ms). */
  pollIntervalMs?: number;
  /**
   * The chain's pushed heads: each one wakes every `waitForReceipt` at once. While the feed is live the polling only
   * backs it up (once a block time); while it is down it runs every `pollIntervalMs` as without a feed.
   */
  heads?: HeadFeed | undefined;
  /** Test only: kill the process at this step (`src/core/faults.ts`). */
  crashAt?: CrashPoint | undefined;
  /**
   * The USD price of the chain's native currency, for the USD value of each mined transaction's gas in the
   * ledger. Read in the background (a receipt waits for no price read): a receipt takes the last price read, or
   * waits for the first read. Absent or failing: the gas entry has no USD value.
   */
  nativeUsdPrice?: (() => Promise<UsdPrice>) | undefined;
}

/** Attempts at finding a free nonce (another instance or a foreign transaction took it) before giving up. */
const NONCE_ATTEMPTS = 5;
/**
 * Polls in a row that must see the nonce used on chain with no receipt for any of our hashes before the
 * transaction counts as displaced (a lagging RPC backend can answer the count before the receipt).
 */
const DISPLACED_POLLS = 3;

/** The stored `payload`: everything needed to rebroadcast or re-sign without the caller (decimal strings). */
interface TxPayload {
  to: Address;
  data: Hex;
  value: string;
  gas: string;
  nonce: string;
  maxFeePerGas: string;
  maxPriorityFeePerGas: string;
  /** The latest signed transaction and its hash (every earlier hash is in `hashes`). */
  raw: Hex;
  hash: Hex;
  /** `maxFeePerGas` of the first signature: the bump cap is a multiple of it. */
  initialMaxFeePerGas: string;
  bumps: number;
  /** Why a node rejected it, when it did. */
  error?: string;
  /** EIP-7702 authorizations of a type-4 transaction (a gasless batch); absent for type 2. */
  authorizationList?: SignedAuthorizationInput[];
}

interface Fees {
  maxFeePerGas: bigint;
  maxPriorityFeePerGas: bigint;
}

/**
 * What a node made of `eth_sendRawTransaction`. `unknown` is a transport failure (timeout, refused, HTTP 5xx):
 * the node may or may not have it, so its nonce stays taken and it is rebroadcast later.
 */
type BroadcastOutcome =
  | { kind: 'accepted' }
  | { kind: 'nonce-taken'; message: string }
  | { kind: 'rejected'; message: string; insufficientFunds: boolean }
  | { kind: 'unknown'; error: unknown };

const alreadyKnown = /already known|already imported|known transaction|already exists|already in (the )?(tx)?pool/i;
const nonceTaken =
  /nonce too low|nonce has already been used|nonce is too low|old nonce|replacement transaction underpriced|replacement fee too low/i;
const insufficientFunds = /insufficient funds/i;

/**
 * The solver's transaction sender on one chain: the only code that uses the signer's nonce there.
 *
 * - `send` is serialized: nonce, signature, the `outgoing_txs` row (`prepared`, signed bytes included) and the
 *   broadcast happen in order, so the row exists before any node has the transaction. The first nonce is the
 *   larger of the chain's pending count and the highest nonce recorded for this signer + 1.
 * - A second live transaction of one (request, kind) is refused by the database (`CONFLICT`) before its nonce
 *   is consumed. A node's outright rejection of the first broadcast marks the row `failed` with its nonce
 *   released, which the next `send` reuses; a transport failure leaves the row `prepared` (it may have reached
 *   the node), `send` returns it, and `waitForReceipt` / `recover` rebroadcast it. A nonce taken by a
 *   transaction this sender did not make is skipped by re-signing the same row on the next free nonce.
 * - `waitForReceipt` polls every recorded hash; after `stuckAfterMs` without a receipt it re-signs the same nonce
 *   with fees raised by `feeBumpPercent` (recording the new hash before broadcasting it), up to
 *   `maxFeeMultiplier` times the first fee cap.
 */
export function createTransactionSender(params: CreateTransactionSenderParameters): TransactionSender {
  const { chain, client, account, db, log, now } = params;
  const crash = (step: 'recorded' | 'broadcast' | 'mined', kind: string) => {
    if (kind === 'fill' || kind === 'refund' || kind === 'settle' || kind === 'claim' || kind === 'sweep')
      crashPoint(params.crashAt, `${kind}-${step}`);
    else if (kind === 'gasless' && step === 'recorded') crashPoint(params.crashAt, 'gasless-recorded');
  };
  const chainId = chain.id;
  const address = account.address;
  const signer = address.toLowerCase();
  const blockTimeMs = Math.max(1, chain.blockTime) * 1_000;
  const stuckAfterMs = params.stuckAfterMs ?? 3 * blockTimeMs;
  const feeBumpPercent = BigInt(params.feeBumpPercent ?? 25);
  const maxFeeMultiplier = BigInt(params.maxFeeMultiplier ?? 4);
  const pollIntervalMs = params.pollIntervalMs ?? Math.max(50, Math.floor(blockTimeMs / 4));
  if (feeBumpPercent < 10n)
    throw new Error(`feeBumpPercent must be at least 10 (nodes refuse smaller replacements), got ${feeBumpPercent}`);
  if (maxFeeMultiplier < 1n) throw new Error(`maxFeeMultiplier must be at least 1, got ${maxFeeMultiplier}`);

  let stopped = false;
  /** The next nonce to hand out; undefined = read it again from the chain and the database. */
  let nextNonce: bigint | undefined;
  /** Tail of the send queue (the per-sender mutex). */
  let queue: Promise<unknown> = Promise.resolve();
  const waits = new Map<number, Promise<SentReceipt>>();
  const sleepers = new Set<() => void>();
  const context = { chainId, signer };
  const heads = params.heads;
  const wakeAll = () => {
    for (const wake of [...sleepers]) wake();
  };
  /** Heads pushed so far: a wait that saw a head arrive while it was busy looks again without sleeping. */
  let headCount = 0;
  const unsubscribe = heads?.onHead(() => {
    headCount++;
    wakeAll();
  });
  const receiptPollMs = () => (heads?.live() ? Math.max(pollIntervalMs, blockTimeMs) : pollIntervalMs);

  function serialized<T>(work: () => Promise<T>): Promise<T> {
    const run = queue.then(work);
    queue = run.catch(() => undefined);
    return run;
  }

  function assertRunning(): void {
    if (stopped) throw new GatewayError('SERVICE_UNAVAILABLE', `The transaction sender of chain ${chainId} is stopped`);
  }

  /** Waits `ms`, or less when the sender stops. */
  function sleep(ms: number): Promise<void> {
    if (stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        sleepers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      sleepers.add(wake);
    });
  }

  const rpcFailure = (what: string, cause: unknown) =>
    new GatewayError('RPC_HTTP_ERROR', `Chain ${chainId}: ${what} failed: ${messageOf(cause)}`, { cause });

  /** The larger of the chain's pending count and the highest recorded nonce + 1: never reuses a live nonce. */
  async function freshNonce(): Promise<bigint> {
    const [pending, recorded] = await Promise.all([
      client.getTransactionCount({ address, blockTag: 'pending' }).catch((error: unknown) => {
        throw rpcFailure('reading the pending nonce', error);
      }),
      getMaxOutgoingTxNonce(db, context),
    ]);
    const fromChain = BigInt(pending);
    return recorded === undefined || recorded < fromChain ? fromChain : recorded + 1n;
  }

  async function sign(
    tx: {
      to: Address;
      data: Hex;
      value: bigint;
      gas: bigint;
      nonce: bigint;
      authorizationList?: SignedAuthorizationInput[] | undefined;
    } & Fees,
  ) {
    const common = {
      chainId,
      to: tx.to,
      data: tx.data,
      value: tx.value,
      gas: tx.gas,
      nonce: Number(tx.nonce),
      maxFeePerGas: tx.maxFeePerGas,
      maxPriorityFeePerGas: tx.maxPriorityFeePerGas,
    };
    const raw =
      tx.authorizationList === undefined
        ? await account.signTransaction({ ...common, type: 'eip1559' })
        : await account.signTransaction({
            ...common,
            type: 'eip7702',
            authorizationList: tx.authorizationList.map(toViemAuthorization),
          });
    return { raw, hash: keccak256(raw) };
  }

  async function estimateFees(): Promise<Fees> {
    try {
      const fees = await client.estimateFeesPerGas();
      return { maxFeePerGas: fees.maxFeePerGas, maxPriorityFeePerGas: fees.maxPriorityFeePerGas };
    } catch (error) {
      throw rpcFailure('estimating fees', error);
    }
  }

  async function estimateGas(tx: SendParameters): Promise<bigint> {
    try {
      const estimate = await client.estimateGas({
        account: address,
        to: tx.to,
        data: tx.data,
        value: tx.value,
        ...(tx.authorizationList === undefined
          ? {}
          : { authorizationList: tx.authorizationList.map(toViemAuthorization) }),
      });
      return withGasMargin(estimate);
    } catch (error) {
      const reverted = error instanceof BaseError && error.walk((e) => e instanceof ExecutionRevertedError) !== null;
      if (!reverted && mayHaveReachedNode(error)) throw rpcFailure('estimating gas', error);
      throw new GatewayError(
        'DESTINATION_TX_FAILED',
        `Chain ${chainId}: the ${tx.kind} transaction would fail: ${messageOf(error)}`,
        {
          cause: error,
        },
      );
    }
  }

  async function broadcast(raw: Hex, hash: Hex): Promise<BroadcastOutcome> {
    try {
      await client.sendRawTransaction({ serializedTransaction: raw });
      return { kind: 'accepted' };
    } catch (error) {
      if (mayHaveReachedNode(error)) return { kind: 'unknown', error };
      const message = messageOf(error);
      if (alreadyKnown.test(message)) return { kind: 'accepted' };
      if (nonceTaken.test(message)) {
        // Ours when the chain (or the pool) has this very hash: an earlier attempt got through.
        try {
          await client.getTransaction({ hash });
          return { kind: 'accepted' };
        } catch (lookup) {
          if (lookup instanceof TransactionNotFoundError) return { kind: 'nonce-taken', message };
          return { kind: 'unknown', error: lookup };
        }
      }
      return { kind: 'rejected', message, insufficientFunds: insufficientFunds.test(message) };
    }
  }

  /** A `prepared` row a node accepted becomes `broadcast` with that hash (re-read if it moved on meanwhile). */
  async function markBroadcast(row: OutgoingTxRecord, hash: Hex): Promise<OutgoingTxRecord> {
    const updated = await updateOutgoingTx(db, row.id, {
      status: 'broadcast',
      fromStatus: 'prepared',
      hash,
      now: now(),
    });
    return updated ?? (await getOutgoingTx(db, row.id)) ?? row;
  }

  function rejection(row: OutgoingTxRecord, message: string, insufficient: boolean, cause?: unknown): GatewayError {
    return insufficient
      ? new GatewayError(
          'INSUFFICIENT_LIQUIDITY',
          `Chain ${chainId}: the solver cannot pay for its ${row.kind} transaction: ${message}`,
          {
            data: `outgoingTxId=${row.id}`,
            cause,
          },
        )
      : new GatewayError(
          'DESTINATION_TX_FAILED',
          `Chain ${chainId}: the node rejected the ${row.kind} transaction: ${message}`,
          {
            data: `outgoingTxId=${row.id}`,
            cause,
          },
        );
  }

  /**
   * Releases the nonce of a row whose one and only signed version a node refused (inside the send queue, so the
   * released nonce is the highest handed out and no gap remains), and forgets the cached nonce.
   */
  async function release(row: OutgoingTxRecord, payload: TxPayload, message: string): Promise<void> {
    await releaseOutgoingTxNonce(db, row.id, { payload: toJson({ ...payload, error: message }), now: now() });
    nextNonce = undefined;
  }

  /** First broadcast of a freshly recorded row, inside the queue. */
  async function broadcastNew(row: OutgoingTxRecord, payload: TxPayload, tx: SendParameters & { gas: bigint } & Fees) {
    for (let attempt = 1; ; attempt++) {
      const outcome = await broadcast(payload.raw, payload.hash);
      switch (outcome.kind) {
        case 'accepted':
          crash('broadcast', row.kind);
          log.info(
            {
              ...context,
              requestId: row.requestId,
              outgoingTxId: row.id,
              nonce: payload.nonce,
              hash: payload.hash,
              kind: row.kind,
            },
            'transaction broadcast',
          );
          return markBroadcast(row, payload.hash);
        case 'unknown':
          // It may have reached the node: keep the nonce; waitForReceipt and recover rebroadcast it.
          log.warn(
            {
              ...context,
              requestId: row.requestId,
              outgoingTxId: row.id,
              nonce: payload.nonce,
              hash: payload.hash,
              err: outcome.error,
            },
            'broadcast failed in transit; the recorded transaction is rebroadcast while waiting for its receipt',
          );
          return row;
        case 'rejected':
          await release(row, payload, outcome.message);
          log.error(
            {
              ...context,
              requestId: row.requestId,
              outgoingTxId: row.id,
              nonce: payload.nonce,
              reason: outcome.message,
            },
            'node rejected the transaction; nonce released',
          );
          throw rejection(row, outcome.message, outcome.insufficientFunds);
        case 'nonce-taken':
          // Something other than this sender used the key (the nonce is spent there, so moving on leaves no
          // gap): re-sign this same row on the next free nonce. Nothing but this one version was ever sent.
          if (attempt >= NONCE_ATTEMPTS) {
            await release(row, payload, outcome.message);
            throw new GatewayError(
              'SERVICE_UNAVAILABLE',
              `Chain ${chainId}: no free nonce after ${attempt} attempts: ${outcome.message}`,
              {
                data: `outgoingTxId=${row.id}`,
              },
            );
          }
          log.warn(
            { ...context, requestId: row.requestId, outgoingTxId: row.id, taken: payload.nonce },
            'nonce already used elsewhere; re-signing',
          );
          ({ row, payload } = await resign(row, payload, tx));
      }
    }
  }

  /** Re-signs a `prepared` row on a fresh nonce, recording it before anything is broadcast. */
  async function resign(row: OutgoingTxRecord, payload: TxPayload, tx: SendParameters & { gas: bigint } & Fees) {
    for (let attempt = 1; ; attempt++) {
      const nonce = await freshNonce();
      const signed = await sign({ ...tx, nonce });
      const next: TxPayload = { ...payload, nonce: nonce.toString(), raw: signed.raw, hash: signed.hash };
      try {
        const revised = await reviseOutgoingTx(db, row.id, {
          payload: toJson(next),
          nonce,
          fromStatuses: ['prepared'],
          now: now(),
        });
        if (revised === null) throw new Error(`outgoing tx ${row.id} left 'prepared' while it was being sent`);
        nextNonce = nonce + 1n;
        return { row: revised, payload: next };
      } catch (error) {
        // Another instance with this key recorded that nonce meanwhile; `freshNonce` moves past it.
        if (!isUniqueViolation(error, outgoingTxSignerNonceKey) || attempt >= NONCE_ATTEMPTS) throw error;
      }
    }
  }

  async function send(tx: SendParameters): Promise<OutgoingTxRecord> {
    // The receipt will want the native price: read it while the transaction is on its way.
    if (params.nativeUsdPrice !== undefined) void readPrice();
    assertRunning();
    // The gas and fee reads start at once, beside the cheap early answer on a live transaction (the unique index
    // below is what guarantees it); a conflict still wins over an estimate's failure.
    const gasRead = tx.gas === undefined ? estimateGas(tx) : Promise.resolve(tx.gas);
    const feesRead = estimateFees();
    gasRead.catch(() => undefined);
    feesRead.catch(() => undefined);
    const live = await getLiveOutgoingTx(db, tx.requestId, tx.kind);
    if (live !== undefined) throw conflict(tx, live.id);
    const gas = await gasRead;
    const fees = await feesRead;
    return serialized(async () => {
      assertRunning();
      for (let attempt = 1; ; attempt++) {
        const nonce = nextNonce ?? (await freshNonce());
        const signed = await sign({ ...tx, gas, nonce, ...fees });
        const payload: TxPayload = {
          to: tx.to,
          data: tx.data,
          value: tx.value.toString(),
          gas: gas.toString(),
          nonce: nonce.toString(),
          maxFeePerGas: fees.maxFeePerGas.toString(),
          maxPriorityFeePerGas: fees.maxPriorityFeePerGas.toString(),
          raw: signed.raw,
          hash: signed.hash,
          initialMaxFeePerGas: fees.maxFeePerGas.toString(),
          bumps: 0,
          ...(tx.authorizationList === undefined ? {} : { authorizationList: tx.authorizationList }),
        };
        let row: OutgoingTxRecord;
        try {
          row = await insertOutgoingTx(db, {
            chainId,
            requestId: tx.requestId,
            kind: tx.kind,
            signer,
            nonce,
            status: 'prepared',
            payload: toJson(payload),
            now: now(),
          });
        } catch (error) {
          // The nonce was not consumed: `nextNonce` is untouched.
          if (isUniqueViolation(error, outgoingTxRequestKindKey)) throw conflict(tx, undefined, error);
          if (isUniqueViolation(error, outgoingTxSignerNonceKey) && attempt < NONCE_ATTEMPTS) {
            nextNonce = undefined; // another instance with this key recorded it; move past
            continue;
          }
          throw error;
        }
        nextNonce = nonce + 1n;
        crash('recorded', row.kind);
        return broadcastNew(row, payload, { ...tx, gas, ...fees });
      }
    });
  }

  const conflict = (tx: SendParameters, existingId?: number, cause?: unknown) =>
    new GatewayError('CONFLICT', `A live ${tx.kind} transaction already exists for request ${tx.requestId}`, {
      ...(existingId === undefined ? {} : { data: `outgoingTxId=${existingId}` }),
      cause,
    });

  async function findReceipt(row: OutgoingTxRecord, payload: TxPayload): Promise<SentReceipt | undefined> {
    const hashes = [...new Set([payload.hash.toLowerCase(), ...[...row.hashes].reverse()])] as Hex[];
    for (const hash of hashes) {
      try {
        const receipt = await client.getTransactionReceipt({ hash });
        return {
          status: receipt.status,
          hash: receipt.transactionHash,
          blockNumber: receipt.blockNumber,
          gasUsed: receipt.gasUsed,
          effectiveGasPrice: receipt.effectiveGasPrice,
        };
      } catch (error) {
        if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
      }
    }
    return undefined;
  }

  /** Re-signs the same nonce with higher fees, records the new hash, then broadcasts it. */
  async function bump(
    row: OutgoingTxRecord,
    payload: TxPayload,
  ): Promise<{ row: OutgoingTxRecord; payload: TxPayload }> {
    const current = await estimateFees();
    const raise = (fee: bigint) => (fee * (100n + feeBumpPercent) + 99n) / 100n;
    const cap = BigInt(payload.initialMaxFeePerGas) * maxFeeMultiplier;
    const oldMax = BigInt(payload.maxFeePerGas);
    const oldTip = BigInt(payload.maxPriorityFeePerGas);
    const maxFeePerGas = min(max(raise(oldMax), current.maxFeePerGas), cap);
    const maxPriorityFeePerGas = min(max(raise(oldTip), current.maxPriorityFeePerGas), maxFeePerGas);
    // Nodes accept a replacement only when both caps rise by at least 10%.
    const replaceable = (old: bigint, fee: bigint) => fee * 100n >= old * 110n;
    if (!replaceable(oldMax, maxFeePerGas) || !replaceable(oldTip, maxPriorityFeePerGas)) {
      log.warn(
        {
          ...context,
          requestId: row.requestId,
          outgoingTxId: row.id,
          nonce: payload.nonce,
          maxFeePerGas: payload.maxFeePerGas,
        },
        'stuck transaction is at its fee cap; rebroadcasting it as is',
      );
      const outcome = await broadcast(payload.raw, payload.hash);
      if (outcome.kind === 'accepted' && row.status === 'prepared') row = await markBroadcast(row, payload.hash);
      return { row, payload };
    }
    const signed = await sign({
      to: payload.to,
      data: payload.data,
      value: BigInt(payload.value),
      gas: BigInt(payload.gas),
      nonce: BigInt(payload.nonce),
      maxFeePerGas,
      maxPriorityFeePerGas,
      authorizationList: payload.authorizationList,
    });
    const next: TxPayload = {
      ...payload,
      maxFeePerGas: maxFeePerGas.toString(),
      maxPriorityFeePerGas: maxPriorityFeePerGas.toString(),
      raw: signed.raw,
      hash: signed.hash,
      bumps: payload.bumps + 1,
    };
    // Recorded first: whichever of the hashes gets mined, a restart still finds it.
    const revised = await reviseOutgoingTx(db, row.id, {
      payload: toJson(next),
      hash: signed.hash,
      fromStatuses: ['prepared', 'broadcast'],
      now: now(),
    });
    if (revised === null) return { row: (await getOutgoingTx(db, row.id)) ?? row, payload };
    const outcome = await broadcast(signed.raw, signed.hash);
    log.warn(
      {
        ...context,
        requestId: row.requestId,
        outgoingTxId: row.id,
        nonce: payload.nonce,
        hash: signed.hash,
        maxFeePerGas: next.maxFeePerGas,
        outcome: outcome.kind,
      },
      'transaction stuck; replaced with higher fees',
    );
    const updated =
      outcome.kind === 'accepted' && revised.status === 'prepared'
        ? await markBroadcast(revised, signed.hash)
        : revised;
    return { row: updated, payload: next };
  }

  /**
   * Rebroadcasts a row no node has acknowledged yet. A rejection does not release its nonce here: an earlier
   * version of it (a broadcast that failed in transit, a bump) may still be in some pool and land later, and a
   * row marked failed whose fill lands anyway would be refunded too. It stays and is retried; the periodic
   * re-sign with current fees cures fee rejections, a top-up cures a short balance.
   */
  async function rebroadcastPrepared(row: OutgoingTxRecord, payload: TxPayload): Promise<OutgoingTxRecord> {
    const outcome = await broadcast(payload.raw, payload.hash);
    if (outcome.kind === 'accepted') return markBroadcast(row, payload.hash);
    const fields = {
      ...context,
      requestId: row.requestId,
      outgoingTxId: row.id,
      nonce: payload.nonce,
      hash: payload.hash,
    };
    if (outcome.kind === 'unknown')
      log.warn({ ...fields, err: outcome.error }, 'rebroadcast failed in transit; retrying');
    else if (outcome.kind === 'rejected')
      log.error(
        { ...fields, reason: outcome.message },
        'node rejects a recorded transaction; retrying (later nonces wait for it)',
      );
    // 'nonce-taken': the displaced check of waitForReceipt settles it.
    return row;
  }

  /** The last native price read, and the read under way (`nativeUsdPrice`). */
  let nativePrice: UsdPrice | undefined;
  let priceRead: Promise<void> | undefined;
  const readPrice = (): Promise<void> =>
    (priceRead ??= (async () => {
      try {
        nativePrice = await params.nativeUsdPrice!();
      } catch (error) {
        log.debug({ ...context, err: error }, 'native price not read; gas is recorded without its USD value');
      } finally {
        priceRead = undefined;
      }
    })());
  /** USD value (micro-USD) of a receipt's gas at the native price of the moment, or null. */
  async function gasUsdMicros(receipt: SentReceipt): Promise<bigint | null> {
    if (params.nativeUsdPrice === undefined) return null;
    if (nativePrice === undefined) await readPrice();
    else void readPrice();
    if (nativePrice === undefined) return null;
    return toUsdMicros(receipt.gasUsed * receipt.effectiveGasPrice, chain.nativeCurrency.decimals, nativePrice);
  }

  async function finish(row: OutgoingTxRecord, receipt: SentReceipt): Promise<SentReceipt> {
    const status = receipt.status === 'success' ? 'confirmed' : 'failed';
    await updateOutgoingTx(db, row.id, {
      status,
      hash: receipt.hash,
      receipt: { ...receipt, gasUsdMicros: await gasUsdMicros(receipt) },
      now: now(),
    });
    crash('mined', row.kind);
    log.info(
      {
        ...context,
        requestId: row.requestId,
        outgoingTxId: row.id,
        hash: receipt.hash,
        status: receipt.status,
        block: receipt.blockNumber.toString(),
      },
      'transaction mined',
    );
    return receipt;
  }

  async function follow(id: number): Promise<SentReceipt> {
    let row = await getOutgoingTx(db, id);
    if (row === undefined || row.chainId !== chainId || row.signer !== signer) {
      throw new GatewayError('NOT_FOUND', `Chain ${chainId}: no outgoing transaction ${id} of signer ${signer}`);
    }
    let payload = readPayload(row);
    if (row.status === 'replaced')
      throw new GatewayError('CONFLICT', `Outgoing transaction ${id} was replaced by another one`);
    if (row.nonce === null) throw rejection(row, payload.error ?? 'it was never broadcast', false);
    if (row.status === 'confirmed' || row.status === 'failed') {
      const receipt = await findReceipt(row, payload);
      if (receipt === undefined) throw rejection(row, payload.error ?? 'no receipt for any of its hashes', false);
      return receipt;
    }
    const nonce = row.nonce;
    let lastAttemptAt = row.updatedAt;
    let lastRebroadcastAt = 0;
    let displacedPolls = 0;
    for (;;) {
      assertRunning();
      const headsBefore = headCount;
      try {
        // One cheap call per poll; receipts are fetched only once the nonce is used.
        const used = BigInt(await client.getTransactionCount({ address, blockTag: 'latest' })) > nonce;
        if (used) {
          const receipt = await findReceipt(row, payload);
          if (receipt !== undefined) return await finish(row, receipt);
          if (++displacedPolls >= DISPLACED_POLLS) {
            const message = `nonce ${nonce} was used by a transaction this sender did not record`;
            await reviseOutgoingTx(db, row.id, {
              payload: toJson({ ...payload, error: message }),
              fromStatuses: ['prepared', 'broadcast'],
              now: now(),
            });
            await updateOutgoingTx(db, row.id, { status: 'failed', now: now() });
            log.error({ ...context, requestId: row.requestId, outgoingTxId: row.id }, message);
            throw rejection(row, message, false);
          }
        } else {
          displacedPolls = 0;
          if (now() - lastAttemptAt >= stuckAfterMs) {
            ({ row, payload } = await bump(row, payload));
            lastAttemptAt = now();
          } else if (row.status === 'prepared' && now() - lastRebroadcastAt >= blockTimeMs) {
            // Not acknowledged by any node yet: at once, then once a block.
            lastRebroadcastAt = now();
            row = await rebroadcastPrepared(row, payload);
          }
        }
      } catch (error) {
        if (!isTransient(error)) throw error;
        log.warn({ ...context, outgoingTxId: id, err: error }, 'RPC failed while waiting for a receipt; retrying');
      }
      if (headCount === headsBefore) await sleep(receiptPollMs());
    }
  }

  return {
    chainId,
    address,
    send,
    waitForReceipt(id) {
      const running = waits.get(id);
      if (running !== undefined) return running;
      const wait = follow(id).finally(() => waits.delete(id));
      waits.set(id, wait);
      return wait;
    },
    recover: () =>
      serialized(async () => {
        assertRunning();
        const rows = await listUnminedOutgoingTxs(db, context);
        const recovered: OutgoingTxRecord[] = [];
        // Nonce order, so the node never sees a gap it would have to queue behind.
        for (const row of rows) {
          const payload = readPayload(row);
          const outcome = await broadcast(payload.raw, payload.hash);
          log.info(
            {
              ...context,
              requestId: row.requestId,
              outgoingTxId: row.id,
              nonce: payload.nonce,
              hash: payload.hash,
              outcome: outcome.kind,
            },
            'recovered transaction rebroadcast',
          );
          recovered.push(
            outcome.kind === 'accepted' && row.status === 'prepared' ? await markBroadcast(row, payload.hash) : row,
          );
        }
        nextNonce = undefined; // read the chain and the table again before the next send
        return recovered;
      }),
    async stop() {
      stopped = true;
      unsubscribe?.();
      wakeAll();
      await Promise.allSettled([queue, ...waits.values()]);
    },
  };
}

function readPayload(row: OutgoingTxRecord): TxPayload {
  const p = row.payload as Partial<Record<keyof TxPayload, unknown>>;
  const strings = [
    'to',
    'data',
    'value',
    'gas',
    'nonce',
    'maxFeePerGas',
    'maxPriorityFeePerGas',
    'raw',
    'hash',
    'initialMaxFeePerGas',
  ] as const;
  for (const key of strings) {
    if (typeof p[key] !== 'string')
      throw new Error(`outgoing tx ${row.id}: payload.${key} is missing; it was not recorded by this sender`);
  }
  return { ...(row.payload as unknown as TxPayload), bumps: typeof p.bumps === 'number' ? p.bumps : 0 };
}

const toJson = (payload: TxPayload): JsonObject => ({ ...payload }) as unknown as JsonObject;

/** The SDK's authorization shape as viem signs it. */
const toViemAuthorization = (a: SignedAuthorizationInput) => ({
  address: a.address,
  chainId: a.chainId,
  nonce: a.nonce,
  yParity: a.yParity,
  r: a.r,
  s: a.s,
});

const max = (a: bigint, b: bigint) => (a > b ? a : b);
const min = (a: bigint, b: bigint) => (a < b ? a : b);

/** Failures `waitForReceipt` rides out (RPC trouble); anything else (database, our own verdicts) ends the wait. */
const isTransient = (error: unknown): boolean =>
  error instanceof BaseError || (error instanceof GatewayError && error.code === 'RPC_HTTP_ERROR');

/** The node's own words when there are some (viem puts them in `details`), else the message. */
function messageOf(error: unknown): string {
  if (error instanceof BaseError) return [error.shortMessage, error.details].filter(Boolean).join(': ');
  return error instanceof Error ? error.message : String(error);
}
