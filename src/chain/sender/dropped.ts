import { BaseError, TransactionReceiptNotFoundError, type Hex } from 'viem';
import {
  getOutgoingTxAtNonce,
  listRecentlyMinedOutgoingTxs,
  updateOutgoingTx,
} from '../../store/outgoingTxs.repository.js';
import type { OutgoingTxRecord } from '../../records/outgoingTx.js';
import { broadcast } from './broadcast.js';
import { readPayload, versionFields } from './payload.js';
import type { SenderState } from './state.js';

/** Most nonces below a stuck transaction that one look examines for dropped transactions. */
const MAX_GAP = 64n;

/**
 * Transactions this sender recorded as mined (`confirmed` or `failed`) that a reorg took off the chain: a stuck
 * transaction at `nonce` waits behind them, since the chain's account nonce (`accountNonce`, its latest
 * transaction count) is below it and nothing of ours fills the gap. Each one on the nonces from `accountNonce` up
 * to `nonce` whose hashes have no receipt any more is sent again on its own nonce (`resendOnItsNonce`). Returns how
 * many it re-sent.
 */
export async function resendDropped(
  state: SenderState,
  accountNonce: bigint,
  nonce: bigint,
  follow: (outgoingTxId: number) => void,
): Promise<number> {
  let resent = 0;
  for (let at = accountNonce; at < nonce && at < accountNonce + MAX_GAP; at++) {
    const row = await getOutgoingTxAtNonce(state.db, state.scope, at);
    if (row === undefined || !droppable(row)) continue;
    if (await anyReceipt(state, row)) continue;
    if (await resendOnItsNonce(state, row, follow)) resent++;
  }
  return resent;
}

/**
 * After a reorg: each transaction recorded as mined within the last `windowMs` whose hashes have no receipt any
 * more was dropped. On a nonce the account has not used yet, it is sent again there (`resendOnItsNonce`); on a
 * nonce another transaction took meanwhile, a `confirmed` one is signed again on a fresh nonce (`resign`, the
 * sender's nonce owner), so what it did (a fill, a refund, a settlement) is done on the chain as it now is; the
 * contracts refuse a second fill, release or claim of one id, so it cannot pay twice. A reverted one (`failed`) is
 * left: it did nothing. Returns how many it sent again.
 */
export async function recheckMined(
  state: SenderState,
  windowMs: number,
  resign: (row: OutgoingTxRecord) => Promise<OutgoingTxRecord | null>,
  follow: (outgoingTxId: number) => void,
): Promise<number> {
  const rows = await listRecentlyMinedOutgoingTxs(state.db, state.scope, state.now() - windowMs);
  if (rows.length === 0) return 0;
  const accountNonce = BigInt(await state.client.getTransactionCount({ address: state.address, blockTag: 'latest' }));
  let resent = 0;
  for (const row of rows) {
    if (!droppable(row) || (await anyReceipt(state, row))) continue;
    if (row.nonce! >= accountNonce) {
      if (await resendOnItsNonce(state, row, follow)) resent++;
      continue;
    }
    if (row.status !== 'confirmed') continue;
    const revised = await resign(row);
    if (revised === null) continue;
    state.log.warn(
      { ...versionFields(state, revised, readPayload(revised)), kind: row.kind, droppedNonce: row.nonce!.toString() },
      'a mined transaction was dropped by a reorg and its nonce used by another; signed again on a fresh nonce',
    );
    follow(row.id);
    resent++;
  }
  return resent;
}

/**
 * A dropped transaction goes back to `broadcast` and its last signed version is sent again on its own nonce (the
 * same transaction, so it cannot pay twice: the chain forgot the first); `follow` then waits for its new receipt,
 * with the usual fee bumps. False when the row moved on meanwhile.
 */
async function resendOnItsNonce(
  state: SenderState,
  row: OutgoingTxRecord,
  follow: (outgoingTxId: number) => void,
): Promise<boolean> {
  const payload = readPayload(row);
  const revived = await updateOutgoingTx(state.db, row.id, {
    status: 'broadcast',
    fromStatus: row.status,
    now: state.now(),
  });
  if (revived === null) return false;
  const outcome = await broadcast(state, payload.raw, payload.hash);
  state.log.warn(
    { ...versionFields(state, row, payload), kind: row.kind, wasStatus: row.status, outcome: outcome.kind },
    'a mined transaction was dropped by a reorg; re-sent on its nonce so that later ones are not stuck behind it',
  );
  follow(row.id);
  return true;
}

/**
 * Mined rows a reorg may have dropped: on a nonce, and not given up by the sender itself (a row failed for a nonce
 * another transaction used, or a rejection, carries its `error` and never had a receipt).
 */
const droppable = (row: OutgoingTxRecord): boolean =>
  (row.status === 'confirmed' || row.status === 'failed') && row.nonce !== null && readPayload(row).error === undefined;

/** Whether any of the row's hashes has a receipt on the chain now. */
async function anyReceipt(state: SenderState, row: OutgoingTxRecord): Promise<boolean> {
  for (const hash of new Set([...row.hashes, readPayload(row).hash.toLowerCase()])) {
    try {
      await state.client.getTransactionReceipt({ hash: hash as Hex });
      return true;
    } catch (error) {
      if (!(error instanceof BaseError && error.walk((e) => e instanceof TransactionReceiptNotFoundError))) throw error;
    }
  }
  return false;
}
