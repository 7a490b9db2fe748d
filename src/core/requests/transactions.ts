import { listDepositsForRequest } from '../../store/deposits.repository.js';
import { findOutgoingTxByHash, getLiveOutgoingTx, type OutgoingTxRecord } from '../../store/outgoingTxs.repository.js';
import { listEventsForRequest } from '../../store/requestEvents.repository.js';
import type { RequestRecord } from '../../store/requestRecord.js';
import type { CoreContext } from '../context.js';
import type { RequestTransaction } from './types.js';

export interface RequestTransactions {
  /** Origin-chain deposits. */
  inTxs: RequestTransaction[];
  /** Destination fills and origin refunds that were mined. */
  outTxs: RequestTransaction[];
}

/**
 * The transactions of a request, built from its recorded hashes (`inTxHashes`, `txHashes`) and what the solver
 * stored beside them:
 *
 * - chain: deposits are on the origin chain; an out hash is on the chain of the outgoing transaction (fill or
 *   refund) that broadcast it, the destination chain when the gateway has no such record;
 * - status: a deposit whose block was reorged away (`removed`) failed; an outgoing transaction has its own
 *   status. Without a record the request's status decides: `failure` means the fill failed;
 * - an out hash that is not mined yet (an outgoing transaction still `prepared` or `broadcast`, or a request
 *   still `submitted`) is left out: it is in the status record's `txHashes`, but not a transaction of the
 *   history yet;
 * - block: the deposit's block when recorded; timestamp: when the gateway first recorded the hash (the first
 *   status event that carried it; the request's last update when no event did).
 *
 * Costs nothing for a request without hashes (most quotes are never deposited).
 */
export async function loadRequestTransactions(ctx: CoreContext, record: RequestRecord): Promise<RequestTransactions> {
  if (record.inTxHashes.length === 0 && record.txHashes.length === 0) return { inTxs: [], outTxs: [] };
  const [events, deposits, fill, refund] = await Promise.all([
    listEventsForRequest(ctx.db, record.id),
    record.inTxHashes.length === 0 ? Promise.resolve([]) : listDepositsForRequest(ctx.db, record.id),
    record.txHashes.length === 0 ? Promise.resolve(undefined) : getLiveOutgoingTx(ctx.db, record.id, 'fill'),
    record.txHashes.length === 0 ? Promise.resolve(undefined) : getLiveOutgoingTx(ctx.db, record.id, 'refund'),
  ]);

  const firstSeen = new Map<string, number>();
  for (const event of events) {
    for (const hash of [...event.payload.inTxHashes, ...event.payload.txHashes]) {
      if (!firstSeen.has(hash)) firstSeen.set(hash, event.createdAt);
    }
  }
  const timestampOf = (hash: string): number => Math.floor((firstSeen.get(hash) ?? record.updatedAt) / 1000);

  const inTxs = record.inTxHashes.map((hash): RequestTransaction => {
    const deposit = deposits.find(
      (candidate) => candidate.txHash === hash && candidate.chainId === record.originChainId,
    );
    return {
      hash,
      chainId: record.originChainId,
      block: deposit === undefined ? null : Number(deposit.blockNumber),
      timestamp: timestampOf(hash),
      status: deposit?.status === 'removed' ? 'failure' : 'success',
    };
  });

  const outgoing = [fill, refund].filter((tx): tx is OutgoingTxRecord => tx !== undefined);
  const outTxs: RequestTransaction[] = [];
  for (const hash of record.txHashes) {
    // Not the request's fill or refund: the refund of an excess leg (keyed by its deposit), on the origin chain.
    const tx =
      outgoing.find((candidate) => candidate.hashes.includes(hash)) ?? (await findOutgoingTxByHash(ctx.db, hash));
    const status = tx === undefined ? statusWithoutRecord(record) : statusOfOutgoing(tx);
    if (status === null) continue;
    outTxs.push({
      hash,
      chainId: tx?.chainId ?? record.destinationChainId,
      block: null,
      timestamp: timestampOf(hash),
      status,
    });
  }
  return { inTxs, outTxs };
}

/** Mined outcome of an outgoing transaction; null while it is not mined. */
function statusOfOutgoing(tx: OutgoingTxRecord): RequestTransaction['status'] | null {
  switch (tx.status) {
    case 'confirmed':
      return 'success';
    case 'failed':
      return 'failure';
    default:
      // `prepared`, `broadcast`; a `replaced` row is never live, but its hashes never mined either.
      return null;
  }
}

/** Outcome of an out hash the gateway has no outgoing transaction for, read from the request's status. */
function statusWithoutRecord(record: RequestRecord): RequestTransaction['status'] | null {
  if (record.status === 'submitted') return null;
  return record.status === 'failure' ? 'failure' : 'success';
}
