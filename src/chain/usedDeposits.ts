import type { Kysely } from 'kysely';
import {
  BaseError,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  type Hex,
  type PublicClient,
} from 'viem';
import { finalityDepthOf, type ChainConfig } from '../core/chains/types.js';
import { depositRules } from '../core/ledger/movements.js';
import type { Logger } from '../core/logger.js';
import type { GatewayMetrics } from '../core/metrics.js';
import { listChainDeposits, markDepositReorged, moveConsumedDeposit } from '../store/deposits.repository.js';
import type { DepositRecord } from '../records/deposit.js';
import { normalizeHex } from '../store/mappers.js';
import type { Tables } from '../store/tables.js';
import { blockHashReader } from './heads.js';

/**
 * Deposits already `consumed` (a fill or a refund paid for them), watched until the chain's finality depth
 * (`finalityDepthOf`) for a reorg deeper than the confirmation depth: on the first pass and after every rewind, each
 * one in the last `finalityDepth` blocks whose block changed becomes a suspect, looked at again on every pass until
 * its transaction settles. Mined in another block, the row follows it; still pending in the node, it waits (up to the
 * finality depth); gone from the chain and the node, the deposit is flagged (`removed` with `reorgedAt`), its amount
 * booked as a loss (`loss:reorg`), a warning logged once and `gateway_deposits_reorged_total` counted.
 */
export interface UsedDeposits {
  /** After a pass at `head`; `rewound` when it moved the cursor back. */
  recheck(head: bigint, rewound: boolean, stopping: () => boolean): Promise<void>;
  /** A suspect that the watcher found mined again elsewhere while reading logs: no longer a suspect. */
  settled(depositId: number): void;
}

export function createUsedDeposits(params: {
  chain: ChainConfig;
  client: PublicClient;
  db: Kysely<Tables>;
  log: Logger;
  now: () => number;
  metrics?: Pick<GatewayMetrics, 'depositReorged'> | undefined;
}): UsedDeposits {
  const { chain, client, db, log, now } = params;
  const chainId = chain.id;
  const finality = BigInt(finalityDepthOf(chain));
  /** Consumed deposits whose block changed, by id: looked at on every pass until their transaction settles. */
  const suspects = new Map<number, DepositRecord>();
  /** Whether the consumed deposits within the finality depth were checked since the start. */
  let checked = false;

  /** One suspect: back in its block, mined elsewhere (the row follows), still pending, or gone (flagged, a loss). */
  async function settleSuspect(head: bigint, deposit: DepositRecord): Promise<void> {
    const fields = {
      chainId,
      requestId: deposit.requestId,
      depositId: deposit.id,
      txHash: deposit.txHash,
      blockNumber: deposit.blockNumber,
    };
    const receipt = await client.getTransactionReceipt({ hash: deposit.txHash as Hex }).catch((error: unknown) => {
      if (error instanceof BaseError && error.walk((e) => e instanceof TransactionReceiptNotFoundError)) return null;
      throw error;
    });
    if (receipt !== null) {
      suspects.delete(deposit.id);
      if (normalizeHex(receipt.blockHash) === deposit.blockHash) return;
      const moved = await moveConsumedDeposit(db, deposit.id, {
        fromBlockHash: deposit.blockHash,
        blockNumber: receipt.blockNumber,
        blockHash: receipt.blockHash,
        now: now(),
      });
      if (moved !== null)
        log.warn(
          { ...fields, movedTo: receipt.blockNumber },
          'a used deposit was reorged into another block (reorg deeper than the confirmation depth); it follows it',
        );
      return;
    }
    const pending = await client.getTransaction({ hash: deposit.txHash as Hex }).then(
      () => true,
      (error: unknown) => {
        if (error instanceof BaseError && error.walk((e) => e instanceof TransactionNotFoundError)) return false;
        throw error;
      },
    );
    // Still in the node's pool: it may be mined again, until the finality depth says it will not count.
    if (pending && head < deposit.blockNumber + finality) return;
    suspects.delete(deposit.id);
    const removed = await markDepositReorged(db, deposit, now(), depositRules.lost);
    if (removed === null) return;
    params.metrics?.depositReorged(chainId);
    log.warn(
      { ...fields, amount: deposit.amount.toString(), token: deposit.token, pending },
      'a used deposit was removed by a reorg deeper than the confirmation depth; its amount is booked as a loss',
    );
  }

  return {
    async recheck(head, rewound, stopping) {
      if (rewound || !checked) {
        const floor = head >= finality ? head - finality + 1n : 0n;
        const used = await listChainDeposits(db, { chainId, status: 'consumed', minBlockNumber: floor });
        const canonicalHash = blockHashReader(client);
        for (const deposit of used)
          if ((await canonicalHash(deposit.blockNumber)) !== deposit.blockHash) suspects.set(deposit.id, deposit);
        checked = true;
      }
      for (const deposit of [...suspects.values()]) {
        if (stopping()) return;
        await settleSuspect(head, deposit);
      }
    },
    settled: (depositId) => suspects.delete(depositId),
  };
}
