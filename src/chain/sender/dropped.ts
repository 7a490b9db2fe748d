import { BaseError, TransactionReceiptNotFoundError, type Hex } from 'viem';
import { getOutgoingTxAtNonce, updateOutgoingTx } from '../../store/outgoingTxs.repository.js';
import { broadcast } from './broadcast.js';
import { readPayload, versionFields } from './payload.js';
import type { SenderState } from './state.js';

/** Most nonces below a stuck transaction that one look examines for dropped transactions. */
const MAX_GAP = 64n;

/**
 * Transactions this sender recorded as mined (`confirmed` or `failed`) that a reorg took off the chain: a stuck
 * transaction at `nonce` waits behind them, since the chain's account nonce (`accountNonce`, its latest
 * transaction count) is below it and nothing of ours fills the gap. Each one on the nonces from `accountNonce` up
 * to `nonce` whose hashes have no receipt any more goes back to `broadcast` and its last signed version is sent
 * again on its own nonce (it is the same transaction, so it cannot pay twice: the chain forgot the first); `follow`
 * then waits for its new receipt, with the usual fee bumps. Returns how many it re-sent.
 */
export async function resendDropped(
  state: SenderState,
  accountNonce: bigint,
  nonce: bigint,
  follow: (outgoingTxId: number) => void,
): Promise<number> {
  const { db, log, now, scope } = state;
  let resent = 0;
  for (let at = accountNonce; at < nonce && at < accountNonce + MAX_GAP; at++) {
    const row = await getOutgoingTxAtNonce(db, scope, at);
    if (row === undefined || (row.status !== 'confirmed' && row.status !== 'failed')) continue;
    const payload = readPayload(row);
    if (await anyReceipt(state, [...row.hashes, payload.hash.toLowerCase()] as Hex[])) continue;
    const revived = await updateOutgoingTx(db, row.id, { status: 'broadcast', fromStatus: row.status, now: now() });
    if (revived === null) continue;
    const outcome = await broadcast(state, payload.raw, payload.hash);
    log.warn(
      { ...versionFields(state, row, payload), kind: row.kind, wasStatus: row.status, outcome: outcome.kind },
      'a mined transaction was dropped by a reorg; re-sent on its nonce so that later ones are not stuck behind it',
    );
    follow(row.id);
    resent++;
  }
  if (resent > 0) log.warn({ ...scope, resent, accountNonce: accountNonce.toString() }, 'dropped transactions re-sent');
  return resent;
}

/** Whether any of `hashes` has a receipt on the chain now. */
async function anyReceipt(state: SenderState, hashes: Hex[]): Promise<boolean> {
  for (const hash of new Set(hashes)) {
    try {
      await state.client.getTransactionReceipt({ hash });
      return true;
    } catch (error) {
      if (!(error instanceof BaseError && error.walk((e) => e instanceof TransactionReceiptNotFoundError))) throw error;
    }
  }
  return false;
}
