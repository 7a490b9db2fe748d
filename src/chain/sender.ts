import type { Kysely } from 'kysely';
import type { LocalAccount, PublicClient } from 'viem';
import { finalityDepthOf, type ChainConfig } from '../core/chains/types.js';
import type { Logger } from '../core/logger.js';
import type { UsdPrice } from '../core/market.js';
import type { CrashPoint } from '../core/faults.js';
import type { TransactionSender } from '../core/ports/solver.js';
import type { Tables } from '../store/tables.js';
import type { HeadFeed } from './heads.js';
import { createFeeCaps } from './sender/feeCaps.js';
import { createGasValue } from './sender/gasValue.js';
import { recheckMined } from './sender/dropped.js';
import { createReceiptWaiter } from './sender/receipts.js';
import { createSending } from './sender/sending.js';
import type { SenderState } from './sender/state.js';

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
  /** Told of each nonce a transaction this sender did not make used (`SenderState.onForeignNonce`). */
  onForeignNonce?: ((nonce: bigint) => void) | undefined;
}

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
 *
 * The jobs live in `src/chain/sender/`: `sending.ts` (the nonce, the send queue, `send` and `recover`),
 * `receipts.ts` (`waitForReceipt`) with `replacement.ts` (fee bumps and rebroadcasts of a stuck transaction),
 * `broadcast.ts` (signing and broadcasting, shared by both), `feeCaps.ts` (new sends' fee caps, read once per head),
 * `payload.ts` (the stored payload), `gasValue.ts`
 * (the USD value of mined gas) and `state.ts` (what they share).
 */
export function createTransactionSender(params: CreateTransactionSenderParameters): TransactionSender {
  const { chain, account } = params;
  const blockTimeMs = Math.max(1, chain.blockTime) * 1_000;
  const stuckAfterMs = params.stuckAfterMs ?? 3 * blockTimeMs;
  const feeBumpPercent = BigInt(params.feeBumpPercent ?? 25);
  const maxFeeMultiplier = BigInt(params.maxFeeMultiplier ?? 4);
  const pollIntervalMs = params.pollIntervalMs ?? Math.max(50, Math.floor(blockTimeMs / 4));
  if (feeBumpPercent < 10n)
    throw new Error(`feeBumpPercent must be at least 10 (nodes refuse smaller replacements), got ${feeBumpPercent}`);
  if (maxFeeMultiplier < 1n) throw new Error(`maxFeeMultiplier must be at least 1, got ${maxFeeMultiplier}`);

  const signer = account.address.toLowerCase();
  const state: SenderState = {
    chainId: chain.id,
    client: params.client,
    account,
    address: account.address,
    signer,
    db: params.db,
    log: params.log,
    now: params.now,
    scope: { chainId: chain.id, signer },
    crashAt: params.crashAt,
    onForeignNonce: params.onForeignNonce,
    stopped: false,
  };
  const gasValue = createGasValue(state, chain.nativeCurrency.decimals, params.nativeUsdPrice);
  const feeCaps = createFeeCaps(state, params.heads, blockTimeMs);
  const sending = createSending(state, gasValue, feeCaps);
  const receipts = createReceiptWaiter(state, gasValue, {
    blockTimeMs,
    stuckAfterMs,
    pollIntervalMs,
    heads: params.heads,
    marking: sending.marking,
    replacement: { feeBumpPercent, maxFeeMultiplier },
  });

  return {
    chainId: state.chainId,
    address: state.address,
    send: sending.send,
    readAhead: () => feeCaps.readAhead(),
    waitForReceipt: receipts.waitForReceipt,
    recover: sending.recover,
    // What was mined within the finality depth (by the block time) is what a reorg may have dropped.
    recheckMined: () =>
      recheckMined(state, finalityDepthOf(chain) * blockTimeMs, sending.resignDropped, receipts.followDropped),
    async stop() {
      state.stopped = true;
      receipts.stop();
      await Promise.allSettled([sending.idle(), ...receipts.running()]);
    },
  };
}
