/** A transaction the solver sends, as the store keeps it and the core reads it. */
import type { JsonObject } from './json.js';

/**
 * `deposit`: the gateway's own origin deposit of a permit (`POST /execute/permits`); `gasless`: a user's EIP-7702
 * batch the gateway submits for them (`POST /execute`), keyed by its request; `sweep`: a deposit address's
 * balance swept into the depository; `claim`: an app-fee claim's payout; `rebalance`: the solver's own inventory
 * moves (an approval, a swap of a surplus back through the pools).
 */
export type OutgoingTxKind = 'fill' | 'refund' | 'settle' | 'deposit' | 'gasless' | 'sweep' | 'claim' | 'rebalance';
/**
 * `prepared`: recorded, not yet sent; `broadcast`: sent (every attempt's hash is in `hashes`); `confirmed` /
 * `failed`: mined, succeeded or reverted; `replaced`: superseded by another row, the only status that frees
 * the (request, kind) slot.
 */
export type OutgoingTxStatus = 'prepared' | 'broadcast' | 'confirmed' | 'failed' | 'replaced';

export interface OutgoingTxRecord {
  id: number;
  chainId: number;
  requestId: string;
  kind: OutgoingTxKind;
  signer: string;
  nonce: bigint | null;
  status: OutgoingTxStatus;
  /**
   * Every hash broadcast for this transaction, oldest first. Gas bumps append theirs just before broadcasting
   * (so a crash cannot lose a mined hash): the last one may never have reached a node.
   */
  hashes: string[];
  /** The transaction as built (to, data, value, gas), JSON-safe. */
  payload: JsonObject;
  createdAt: number;
  updatedAt: number;
}
