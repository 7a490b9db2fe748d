import { listDepositsForRequests } from '../../store/deposits.repository.js';
import type { DepositRecord } from '../../records/deposit.js';
import { findOutgoingTxsByHashes, listLiveOutgoingTxs } from '../../store/outgoingTxs.repository.js';
import type { OutgoingTxRecord } from '../../records/outgoingTx.js';
import { listEventsForRequests } from '../../store/requestEvents.repository.js';
import type { RequestEvent } from '../../records/requestEvent.js';
import type { RequestRecord } from '../../records/request.js';
import type { CoreContext } from '../context.js';
import type { RequestTransaction } from './types.js';

export interface RequestTransactions {
  /** Origin-chain deposits. */
  inTxs: RequestTransaction[];
  /** Destination fills and origin refunds that were mined. */
  outTxs: RequestTransaction[];
}

/**
 * The transactions of each request of a page (by request id), built from its recorded hashes (`inTxHashes`,
 * `txHashes`) and what the solver stored beside them:
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
 * One query per table for the whole page (at most four), none for a page without hashes (most quotes are never
 * deposited).
 */
export async function loadRequestTransactions(
  ctx: CoreContext,
  records: readonly RequestRecord[],
): Promise<Map<string, RequestTransactions>> {
  const result = new Map<string, RequestTransactions>(records.map((record) => [record.id, { inTxs: [], outTxs: [] }]));
  const paid = records.filter((record) => record.inTxHashes.length > 0 || record.txHashes.length > 0);
  if (paid.length === 0) return result;
  const idsWith = (hashes: (record: RequestRecord) => string[]) =>
    paid.filter((record) => hashes(record).length > 0).map((record) => record.id);
  const filled = idsWith((record) => record.txHashes);
  const [events, deposits, outgoing] = await Promise.all([
    listEventsForRequests(
      ctx.db,
      paid.map((record) => record.id),
    ),
    listDepositsForRequests(
      ctx.db,
      idsWith((record) => record.inTxHashes),
    ),
    listLiveOutgoingTxs(ctx.db, filled, ['fill', 'refund']),
  ]);
  const ownOutgoing = (record: RequestRecord) => outgoing.filter((tx) => tx.requestId === record.id);
  // Out hashes that are not the request's fill or refund: refunds of excess legs (keyed by their deposit).
  const others = await findOutgoingTxsByHashes(
    ctx.db,
    paid.flatMap((record) => {
      const own = ownOutgoing(record);
      return record.txHashes.filter((hash) => !own.some((tx) => tx.hashes.includes(hash)));
    }),
  );
  for (const record of paid) {
    result.set(
      record.id,
      transactionsOf(record, {
        events: events.get(record.id) ?? [],
        deposits: deposits.get(record.id) ?? [],
        outgoing: ownOutgoing(record),
        others,
      }),
    );
  }
  return result;
}

function transactionsOf(
  record: RequestRecord,
  stored: {
    events: RequestEvent[];
    deposits: DepositRecord[];
    outgoing: OutgoingTxRecord[];
    others: ReadonlyMap<string, OutgoingTxRecord>;
  },
): RequestTransactions {
  const firstSeen = new Map<string, number>();
  for (const event of stored.events) {
    for (const hash of [...event.payload.inTxHashes, ...event.payload.txHashes]) {
      if (!firstSeen.has(hash)) firstSeen.set(hash, event.createdAt);
    }
  }
  const timestampOf = (hash: string): number => Math.floor((firstSeen.get(hash) ?? record.updatedAt) / 1000);

  const inTxs = record.inTxHashes.map((hash): RequestTransaction => {
    const deposit = stored.deposits.find(
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

  const outTxs: RequestTransaction[] = [];
  for (const hash of record.txHashes) {
    const tx =
      stored.outgoing.find((candidate) => candidate.hashes.includes(hash)) ?? stored.others.get(hash.toLowerCase());
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
    case 'prepared':
    case 'broadcast':
    case 'replaced':
      // A `replaced` row is never live, but its hashes never mined either.
      return null;
  }
}

/** Outcome of an out hash the gateway has no outgoing transaction for, read from the request's status. */
function statusWithoutRecord(record: RequestRecord): RequestTransaction['status'] | null {
  if (record.status === 'submitted') return null;
  return record.status === 'failure' ? 'failure' : 'success';
}
