import { BaseError, TransactionReceiptNotFoundError, type Hex } from 'viem';
import { tokenTransfers } from './tokenTransfers.js';
import { GatewayError } from '../../core/errors.js';
import { claimPaid } from '../../core/ledger/movements.js';
import { minedTxMovements } from '../../core/ledger/sentTxFacts.js';
import { getOutgoingTx, reviseOutgoingTx, updateOutgoingTx } from '../../store/outgoingTxs.repository.js';
import type { HeadFeed } from '../heads.js';
import { rejection } from './broadcast.js';
import { resendDropped } from './dropped.js';
import type { GasValue } from './gasValue.js';
import { readPayload, toJson, type TxPayload } from './payload.js';
import { bump, rebroadcastPrepared, type ReplacementSettings } from './replacement.js';
import { assertRunning, crash, type SenderState } from './state.js';
import { createSleeper } from '../../core/sleeper.js';
import type { SentReceipt } from '../../core/ports/solver.js';
import { type OutgoingTxRecord } from '../../records/outgoingTx.js';

/**
 * Polls in a row that must see the nonce used on chain with no receipt for any of our hashes before the
 * transaction counts as displaced (a lagging RPC backend can answer the count before the receipt).
 */
const DISPLACED_POLLS = 3;

export interface ReceiptWaiterSettings {
  blockTimeMs: number;
  /** A transaction not mined this long after its last broadcast is re-sent with higher fees. */
  stuckAfterMs: number;
  /** How often a wait looks at the chain while no head feed is live. */
  pollIntervalMs: number;
  /** The chain's pushed heads: each one wakes every wait at once. */
  heads: HeadFeed | undefined;
  /**
   * The write of a row's move to `broadcast` still under way after its send returned (`sending.ts`): a wait reads
   * the row once it is done, rather than find it `prepared` and rebroadcast it for nothing.
   */
  marking?: (outgoingTxId: number) => Promise<unknown> | undefined;
  replacement: ReplacementSettings;
}

export interface ReceiptWaiter {
  waitForReceipt: (outgoingTxId: number) => Promise<SentReceipt>;
  /** Unsubscribes from the heads and wakes every sleeping wait (`state.stopped` is already set). */
  stop(): void;
  /** The waits under way. */
  running(): Promise<SentReceipt>[];
  /** Follows a dropped transaction sent again until it is mined (in the background). */
  followDropped(this: void, outgoingTxId: number): void;
}

/**
 * Waiting for receipts: one wait per outgoing row (a second caller shares it) polls every recorded hash once the
 * nonce is used, rebroadcasts a row no node acknowledged yet once a block, and after `stuckAfterMs` without a
 * receipt replaces it with higher fees (`replacement.ts`). A nonce used with no receipt for any of our hashes
 * fails the row. Mined rows are marked `confirmed` or `failed` with their receipt and the USD value of their gas.
 */
export function createReceiptWaiter(
  state: SenderState,
  gasValue: GasValue,
  settings: ReceiptWaiterSettings,
): ReceiptWaiter {
  const { chainId, client, address, signer, db, log, now, scope } = state;
  const { blockTimeMs, stuckAfterMs, pollIntervalMs, heads } = settings;
  const waits = new Map<number, Promise<SentReceipt>>();
  const sleeper = createSleeper();
  const wakeAll = sleeper.wakeAll;
  /** Heads pushed so far: a wait that saw a head arrive while it was busy looks again without sleeping. */
  let headCount = 0;
  const unsubscribe = heads?.onHead(() => {
    headCount++;
    wakeAll();
  });
  const receiptPollMs = () => (heads?.live() ? Math.max(pollIntervalMs, blockTimeMs) : pollIntervalMs);

  /** Waits `ms`, or less when the sender stops. */
  function sleep(ms: number): Promise<void> {
    return state.stopped ? Promise.resolve() : sleeper.sleep(ms);
  }

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
          ...withL1Fee(receiptL1Fee(receipt)),
          ...(row.kind === 'rebalance' ? { tokenTransfers: tokenTransfers(receipt.logs, address) } : {}),
        };
      } catch (error) {
        if (!(error instanceof TransactionReceiptNotFoundError)) throw error;
      }
    }
    return undefined;
  }

  async function finish(row: OutgoingTxRecord, receipt: SentReceipt): Promise<SentReceipt> {
    const status = receipt.status === 'success' ? 'confirmed' : 'failed';
    const movements = minedTxMovements(row, receipt, await gasValue.usdMicros(receipt));
    await updateOutgoingTx(db, row.id, {
      status,
      hash: receipt.hash,
      receipt: { hash: receipt.hash, movements, claimPaid },
      now: now(),
    });
    crash(state, 'mined', row.kind);
    log.info(
      {
        ...scope,
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
    // A failed move leaves the row `prepared`, which the wait below rebroadcasts and marks.
    await settings.marking?.(id)?.catch(() => undefined);
    let row = await getOutgoingTx(db, id);
    if (row === undefined || row.chainId !== chainId || row.signer !== signer) {
      throw new GatewayError('NOT_FOUND', `Chain ${chainId}: no outgoing transaction ${id} of signer ${signer}`);
    }
    let payload = readPayload(row);
    if (row.status === 'replaced')
      throw new GatewayError('CONFLICT', `Outgoing transaction ${id} was replaced by another one`);
    if (row.nonce === null) throw rejection(state, row, payload.error ?? 'it was never broadcast', false);
    if (row.status === 'confirmed' || row.status === 'failed') {
      const receipt = await findReceipt(row, payload);
      if (receipt === undefined)
        throw rejection(state, row, payload.error ?? 'no receipt for any of its hashes', false);
      return receipt;
    }
    const nonce = row.nonce;
    let lastAttemptAt = row.updatedAt;
    let lastRebroadcastAt = 0;
    let displacedPolls = 0;
    for (;;) {
      assertRunning(state);
      const headsBefore = headCount;
      try {
        // One cheap call per poll; receipts are fetched only once the nonce is used.
        const accountNonce = BigInt(await client.getTransactionCount({ address, blockTag: 'latest' }));
        const used = accountNonce > nonce;
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
            log.error({ ...scope, requestId: row.requestId, outgoingTxId: row.id }, message);
            state.onForeignNonce?.(nonce);
            throw rejection(state, row, message, false);
          }
        } else {
          displacedPolls = 0;
          if (now() - lastAttemptAt >= stuckAfterMs) {
            // Stuck behind a gap that one of our own mined transactions left when a reorg dropped it: that one is
            // sent again, rather than this one bumped to its fee cap for a nonce that cannot be mined.
            const resent = accountNonce < nonce ? await resendDropped(state, accountNonce, nonce, followDropped) : 0;
            if (resent === 0) ({ row, payload } = await bump(state, settings.replacement, row, payload));
            lastAttemptAt = now();
          } else if (row.status === 'prepared' && now() - lastRebroadcastAt >= blockTimeMs) {
            // Not acknowledged by any node yet: at once, then once a block.
            lastRebroadcastAt = now();
            row = await rebroadcastPrepared(state, row, payload);
          }
        }
      } catch (error) {
        if (!isTransient(error)) throw error;
        log.warn({ ...scope, outgoingTxId: id, err: error }, 'RPC failed while waiting for a receipt; retrying');
      }
      if (headCount === headsBefore) await sleep(receiptPollMs());
    }
  }

  function waitForReceipt(id: number): Promise<SentReceipt> {
    const running = waits.get(id);
    if (running !== undefined) return running;
    const wait = follow(id).finally(() => waits.delete(id));
    waits.set(id, wait);
    return wait;
  }

  /** A dropped transaction sent again: its row is marked with its new receipt once it is mined. */
  function followDropped(id: number): void {
    waitForReceipt(id).catch((error: unknown) =>
      log.error({ ...scope, outgoingTxId: id, err: error }, 'a re-sent dropped transaction did not get a receipt'),
    );
  }

  return {
    waitForReceipt,
    stop() {
      unsubscribe?.();
      wakeAll();
    },
    running: () => [...waits.values()],
    followDropped,
  };
}

/** Failures a wait rides out (RPC trouble); anything else (database, our own verdicts) ends the wait. */
const isTransient = (error: unknown): boolean =>
  error instanceof BaseError || (error instanceof GatewayError && error.code === 'RPC_HTTP_ERROR');

/**
 * The L1 data fee (wei) an OP-stack node reports in a receipt (`l1Fee`): a hex quantity as the node sends it, a
 * bigint (or null) through viem's OP-stack formatters. Undefined when the receipt has none (other chains, and
 * deposit transactions).
 */
export function receiptL1Fee(receipt: object): bigint | undefined {
  const value = (receipt as { l1Fee?: unknown }).l1Fee;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'string' && /^0x[0-9a-fA-F]+$/.test(value)) return BigInt(value);
  return undefined;
}

const withL1Fee = (l1Fee: bigint | undefined): { l1Fee?: bigint } => (l1Fee === undefined ? {} : { l1Fee });
